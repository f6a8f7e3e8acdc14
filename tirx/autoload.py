"""Out-of-tree backend autoload through the ``tirx.backends`` entry-point group.

At ``import tirx``, after the core is initialised, every entry point in the group is
loaded and its callable invoked once. A failing one becomes a ``RuntimeWarning``, never a
broken ``import tirx``. ``TIRX_BACKEND_AUTOLOAD=0`` disables it.

``importlib.metadata`` costs ~25 ms to import, so a cheap pre-scan first looks for any
``entry_points.txt`` on ``sys.path`` that mentions the group; only when one does (or when
the path holds something the pre-scan cannot read, like a zip file or a custom finder)
is ``importlib.metadata`` consulted.
"""

from __future__ import annotations

import os
import sys
import warnings

GROUP = "tirx.backends"
_done = False
loaded: list[str] = []


def _disabled() -> bool:
    return os.environ.get("TIRX_BACKEND_AUTOLOAD", "1").strip().lower() in ("0", "false", "no", "off")


def _maybe_has_group() -> bool:
    """False only when no distribution on sys.path can declare a ``tirx.backends`` entry point."""
    import importlib.machinery

    for finder in sys.meta_path:
        if (
            getattr(finder, "find_distributions", None) is not None
            and finder is not importlib.machinery.PathFinder
        ):
            return True  # a custom distribution finder: ask importlib.metadata
    needle = "[" + GROUP + "]"
    for entry in sys.path:
        path = entry or "."
        try:
            it = os.scandir(path)
        except (FileNotFoundError, NotADirectoryError):
            if os.path.isfile(path):
                return True  # a zip on sys.path
            continue
        except OSError:
            return True
        with it:
            for d in it:
                name = d.name
                if not (name.endswith(".dist-info") or name.endswith(".egg-info")):
                    continue
                try:
                    with open(os.path.join(d.path, "entry_points.txt"), encoding="utf-8") as fh:
                        if needle in fh.read():
                            return True
                except FileNotFoundError:
                    continue
                except OSError:
                    return True
    return False


def _warn(msg: str) -> None:
    try:
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    except Exception:  # warnings turned into errors (-W error) must not break import tirx
        print(f"warning: {msg}", file=sys.stderr)


def autoload() -> list[str]:
    """Load every ``tirx.backends`` entry point once; return the names that loaded."""
    global _done
    if _done or _disabled():
        return loaded
    _done = True
    try:
        if not _maybe_has_group():
            return loaded
        from importlib import metadata

        eps = metadata.entry_points(group=GROUP)
    except Exception as e:  # a broken distribution must not break import tirx
        _warn(f"tirx: could not list {GROUP} entry points: {e}")
        return loaded
    seen: set[tuple[str, str]] = set()
    for ep in eps:
        key = (ep.name, ep.value)
        if key in seen:  # the same distribution reachable twice on sys.path
            continue
        seen.add(key)
        try:
            fn = ep.load()
            fn()
        except Exception as e:
            _warn(f"tirx: backend {ep.name!r} ({ep.value}) failed to autoload: {type(e).__name__}: {e}")
            continue
        loaded.append(ep.name)
    return loaded
