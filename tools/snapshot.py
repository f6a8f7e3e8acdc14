"""A fingerprint of what tirx produces, to prove a refactor changes nothing (issue #29, #30).

    python -m tirx.tools.snapshot OUT.json          # write
    python -m tirx.tools.snapshot OUT.json --diff OLD.json

Records, per item, a SHA-256 of: the CUDA source of every example kernel (``KERNELS`` of
``examples/kernels`` and ``tirx/kernels/hopper``, and the Hopper ``best_config`` kernels), the
interpreter's results of the ``examples/kernels`` kernels on seeded inputs, and the printed
text of every ``.tirx`` file under ``tests/data``. ``--diff`` names
the items whose output differs (exit 1 if any).
"""

from __future__ import annotations

import argparse
import functools
import glob
import hashlib
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.basename(ROOT) == "tirx":  # reached through the tirx/tools link
    ROOT = os.path.dirname(ROOT)


def _module(path: str) -> Any:
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    rel = os.path.splitext(os.path.relpath(path, ROOT))[0]
    return importlib.import_module(rel.replace(os.sep, "."))


def _kernels() -> Iterator[tuple[str, Callable[[], Any]]]:
    paths = glob.glob(os.path.join(ROOT, "examples", "*", "*.py"))
    paths += glob.glob(os.path.join(ROOT, "tirx", "kernels", "hopper", "*.py"))
    for path in sorted(paths):
        if os.path.basename(path) == "__init__.py":
            continue
        mod = _module(path)
        rel = os.path.relpath(path, ROOT)
        for name, make in sorted(getattr(mod, "KERNELS", {}).items()):
            yield f"cuda:{rel}:{name}", make
    hop = os.path.join(ROOT, "tirx", "kernels", "hopper")
    att = _module(os.path.join(hop, "attention.py"))
    for d in (64, 128):
        for causal in (False, True):
            yield (
                f"cuda:attention:best:{d}:{causal}",
                functools.partial(att.make_attention, 4, 16, 4096, d, causal, **att.best_config(d, causal)),
            )
    gemm = _module(os.path.join(hop, "gemm.py"))
    for m, n, k in ((4096, 4096, 4096), (128, 8192, 8192)):
        yield (
            f"cuda:gemm:best:{m}x{n}x{k}",
            functools.partial(gemm.make_gemm, m, n, k, **gemm.best_config(m, n, k)),
        )
    fp8 = _module(os.path.join(hop, "fp8_gemm.py"))
    yield (
        "cuda:fp8:best:4096",
        lambda: fp8.make_fp8_gemm(4096, 4096, 4096, **fp8.best_config(4096, 4096, 4096)),
    )


def _digest(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()[:16]


def _interp_outputs(f: Any) -> bytes:
    """The interpreter's results for ``f`` on seeded inputs: every buffer parameter filled
    with random values of its dtype (a symbolic extent is 1000), every scalar 3."""
    import numpy as np

    import tirx
    from tirx.ir import IntImm

    rng = np.random.default_rng(0)
    bufs = dict(f.buffer_map)
    sizes: dict[Any, int] = {}
    args: list[Any] = []
    for p in f.params:
        b = bufs.get(p)
        if b is None:
            args.append(3)
            continue
        shape = tuple(int(d.value) if isinstance(d, IntImm) else sizes.setdefault(d, 1000) for d in b.shape)
        dt = np.dtype(str(b.dtype))
        a = rng.standard_normal(shape) * 4 if dt.kind == "f" else rng.integers(-50, 50, shape)
        args.append(np.ascontiguousarray(a.astype(dt)))
    tirx.compile(f, target="interp")(*args)
    return b"".join(a.tobytes() for a in args if isinstance(a, np.ndarray))


def snapshot(dump: str | None = None) -> dict[str, str]:
    """Item name → digest of what tirx makes of it (or of the error it raises); with ``dump``, a
    folder, each generated CUDA text is also written there (``diff -r`` two dumps to see a change)."""
    import tirx
    from tirx.codegen.cuda import generate

    out: dict[str, str] = {}
    for name, make in _kernels():
        try:
            text = generate(make()).text.replace(ROOT, "<root>")  # the same digest from any checkout
            out[name] = _digest(text)
            if dump:
                os.makedirs(dump, exist_ok=True)
                with open(os.path.join(dump, name.replace("/", "_").replace(":", "_") + ".cu"), "w") as fh:
                    fh.write(text)
        except Exception as e:  # an item that fails is recorded as its error
            out[name] = "error:" + _digest(f"{type(e).__name__}: {e}")
        if name.startswith("cuda:examples/kernels/"):
            try:
                out["interp" + name[4:]] = _digest(_interp_outputs(make()))
            except Exception as e:
                out["interp" + name[4:]] = "error:" + _digest(f"{type(e).__name__}: {e}")
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "**", "*.tirx"), recursive=True)):
        rel = os.path.relpath(path, ROOT)
        try:
            with open(path, encoding="utf-8") as fh:
                out[f"text:{rel}"] = _digest(tirx.dumps(tirx.loads(fh.read())))
        except Exception as e:
            out[f"text:{rel}"] = "error:" + _digest(f"{type(e).__name__}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="where to write the snapshot (JSON)")
    ap.add_argument("--diff", metavar="OLD", help="compare with an earlier snapshot")
    ap.add_argument("--dump", metavar="DIR", help="also write each generated CUDA text into DIR")
    a = ap.parse_args(argv)
    snap = snapshot(a.dump)
    with open(a.out, "w") as fh:
        json.dump(snap, fh, indent=1, sort_keys=True)
    if not a.diff:
        print(f"{len(snap)} items")
        return 0
    with open(a.diff) as fh:
        old = json.load(fh)
    changed = sorted(k for k in set(old) | set(snap) if old.get(k) != snap.get(k))
    for k in changed:
        print(f"changed: {k}")
    print(f"{len(snap)} items, {len(changed)} changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
