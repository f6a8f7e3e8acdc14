"""Passes by name: a registry and mlir-opt style pipeline strings.

Every pass has a name (``convert-ssa``, ``cse``, ``simplify``, ...) and options, which are
its constructor's keyword parameters with their defaults. A pipeline string names passes
in order, options in braces::

    build_pipeline("convert-ssa,cse,verify{require_ssa=true}")

``register_pass`` adds a user pass (a ``Pass`` subclass, or a pass object built by
``@function_pass``) so ``tirx opt --passes`` and ``tirx passes`` see it. Option values are
parsed by the type of the default (bool: true/false/1/0, int, float, str; a quoted string
keeps commas and braces).
"""

from __future__ import annotations

import copy
import difflib
import inspect
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from tirx.passes.infra import Pass, Sequential

__all__ = [
    "PassInfo",
    "build_pipeline",
    "check_pass_names",
    "closest_passes",
    "parse_pipeline",
    "pass_label",
    "register_pass",
    "registered_passes",
]


@attrs.define(frozen=True)
class PassInfo:
    """A registered pass: its name, how to build it, its options (name -> default) and doc."""

    name: str
    make: Callable[..., Pass]
    options: dict[str, Any]
    doc: str


_REGISTRY: dict[str, PassInfo] = {}
_OBJECTS: dict[int, tuple[Pass, str]] = {}  # a pass object registered as it is -> its name


def _options_of(make: Callable[..., Any]) -> dict[str, Any]:
    try:
        sig = inspect.signature(make)
    except (TypeError, ValueError):
        return {}
    return {
        n: p.default
        for n, p in sig.parameters.items()
        if p.default is not inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        and isinstance(p.default, (bool, int, float, str, type(None)))
    }


def register_pass(name: str, make: Any = None, *, doc: str | None = None) -> Any:
    """Register ``make`` (a Pass subclass or factory, or a pass object) under ``name``.
    Usable as a decorator: ``@register_pass("my-pass")`` above a class or a
    ``@function_pass`` function."""

    def deco(obj: Any) -> Any:
        if not isinstance(name, str) or not name or any(c in name for c in ",{} ="):
            raise ValueError(f"register_pass: name must be a word such as 'my-pass', got {name!r}")
        if name in _REGISTRY:
            raise ValueError(f"register_pass: a pass named {name!r} is registered already")
        if isinstance(obj, Pass):  # an object (@function_pass): no options
            make_, opts = (lambda: obj), {}
            _OBJECTS[id(obj)] = (obj, name)
        elif callable(obj):
            make_, opts = obj, _options_of(obj)
        else:
            raise TypeError(f"register_pass: make must be a Pass, a Pass class or a factory, got {obj!r}")
        text = doc if doc is not None else (inspect.getdoc(obj) or "").split("\n\n")[0].replace("\n", " ")
        _REGISTRY[name] = PassInfo(name, make_, opts, text)
        return obj

    return deco(make) if make is not None else deco


def registered_passes() -> dict[str, PassInfo]:
    """Every registered pass by name (built-in ones first)."""
    return dict(_REGISTRY)


def closest_passes(name: str, n: int = 3, among: Iterable[str] | None = None) -> list[str]:
    """The registered pass names closest to ``name`` (for "did you mean"), best first;
    ``among``: other candidates (default: the registry). A class name of a registered pass
    (``Simplify``) or an underscore spelling (``convert_ssa``) finds its pipeline name."""
    names = list(_REGISTRY if among is None else among)
    hits: list[str] = []
    for cand, info in _REGISTRY.items():  # the Python class name -> the pipeline name
        if cand in names and name in (getattr(info.make, "__name__", None), cand.replace("-", "_")):
            hits.append(cand)
    low = {c.lower(): c for c in names}
    hits += [low[c] for c in difflib.get_close_matches(name.lower(), list(low), n=n, cutoff=0.5)]
    return list(dict.fromkeys(hits))[:n]


def _did_you_mean(name: str, among: Iterable[str] | None = None) -> str:
    close = closest_passes(name, among=among)
    return f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""


def pass_label(p: Pass) -> str:
    """The name instruments print for ``p``: its pipeline name. A pass built by a pipeline
    string carries it already; a built-in pass made in Python (``Simplify()``, whose
    ``name`` is its class name) is labelled by the name its class is registered under
    (``simplify``), so ``--print-after=simplify`` and the printed labels use one spelling."""
    if p.name in _REGISTRY:
        return p.name
    held = _OBJECTS.get(id(p))
    if held is not None and held[0] is p:
        return held[1]
    for name, info in _REGISTRY.items():
        if info.make is type(p) and p.name == type(p).__name__:
            return name
    return p.name


def check_pass_names(names: Iterable[str], what: str = "pass", among: Iterable[str] | None = None) -> None:
    """``ValueError`` for the first name that is no registered pass (``--print-after=...``),
    with the closest names. ``among``: the names allowed instead of the registry's (``tirx
    compile``: the pipeline's stages, listed in their order)."""
    known = sorted(_REGISTRY) if among is None else list(among)
    for name in names:
        if name not in known:
            raise ValueError(
                f"unknown {what} {name!r} ({_did_you_mean(name, among)}known: {', '.join(known)})"
            )


# ---------------------------------------------------------------- pipeline strings
def _split(text: str) -> list[str]:
    """Split on top-level commas (not inside braces or quotes)."""
    out: list[str] = []
    cur: list[str] = []
    depth, quote = 0, None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise ValueError(f"pipeline {text!r}: unbalanced '}}'")
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if depth or quote:
        raise ValueError(f"pipeline {text!r}: unclosed {'quote' if quote else 'brace'}")
    out.append("".join(cur).strip())
    return out


def _value(raw: str, default: Any, where: str) -> Any:
    s = raw.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s = s[1:-1]  # quoted: the text, still of the option's type ("true" is a bool)
        if default is None or isinstance(default, str):
            return s
    if isinstance(default, bool):
        if s.lower() in ("true", "1", "yes", "on"):
            return True
        if s.lower() in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"{where}: expected true or false, got {s!r}")
    if isinstance(default, int):
        try:
            return int(s, 0)
        except ValueError:
            raise ValueError(f"{where}: expected an integer, got {s!r}") from None
    if isinstance(default, float):
        try:
            return float(s)
        except ValueError:
            raise ValueError(f"{where}: expected a number, got {s!r}") from None
    return s


def parse_pipeline(text: str) -> list[tuple[str, dict[str, Any]]]:
    """``"a,b{x=1,y=two}"`` -> ``[("a", {}), ("b", {"x": 1, "y": "two"})]`` (names and
    options checked against the registry; ValueError naming the problem)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("pipeline: give at least one pass name, e.g. 'convert-ssa,cse'")
    steps = []
    for item in _split(text):
        if not item:
            raise ValueError(f"pipeline {text!r}: an empty pass name")
        name, _, rest = item.partition("{")
        name = name.strip()
        info = _REGISTRY.get(name)
        if info is None:
            raise ValueError(
                f"pipeline: unknown pass {name!r} ({_did_you_mean(name)}known: {', '.join(sorted(_REGISTRY))})"
            )
        opts: dict[str, Any] = {}
        if rest:
            if not rest.rstrip().endswith("}"):
                raise ValueError(f"pipeline: options of {name!r} must end with '}}'")
            body = rest.rstrip()[:-1]
            for kv in _split(body) if body.strip() else []:
                k, eq, v = kv.partition("=")
                k = k.strip()
                if not eq or not k:
                    raise ValueError(f"pipeline: option {kv!r} of {name!r} must be name=value")
                if k not in info.options:
                    have = ", ".join(sorted(info.options)) or "none"
                    raise ValueError(f"pipeline: pass {name!r} has no option {k!r} (options: {have})")
                if k in opts:  # which one was meant is a guess: refuse rather than pick one
                    raise ValueError(f"pipeline: option {k!r} of {name!r} is given twice")
                opts[k] = _value(v, info.options[k], f"pipeline: option {name}.{k}")
        steps.append((name, opts))
    return steps


def _named(p: Any, name: str) -> Pass:
    """``p`` (a pass a registered factory made) labelled with its pipeline name: the name
    ``--print-after``, ``--timing`` and errors show. A pass object registered as it is (a
    ``@function_pass``) is shared, so it is copied rather than renamed in place."""
    if not isinstance(p, Pass):
        raise TypeError(f"pipeline: pass {name!r} was built as {type(p).__name__}, not a Pass")
    if p.name != name:
        p = copy.copy(p)
        p.name = name
    return p


def build_pipeline(text: str) -> Sequential:
    """The ``Sequential`` of the passes a pipeline string names; each pass is named as the
    pipeline names it (``simplify``, not ``Simplify``)."""
    passes = [_named(_REGISTRY[n].make(**o), n) for n, o in parse_pipeline(text)]
    return Sequential(passes, name=text)


def _register_builtins() -> None:
    from tirx.passes.cse import CommonSubexprElim
    from tirx.passes.infra import VerifyWellFormed
    from tirx.passes.pointer import InferPointerTypes
    from tirx.passes.sequence import SequenceEffects
    from tirx.passes.simplify import Simplify
    from tirx.passes.ssa import ConvertSSA
    from tirx.passes.unroll import UnrollLoop
    from tirx.passes.vectorize_threads import VectorizeThreads

    register_pass("convert-ssa", ConvertSSA)
    register_pass("cse", CommonSubexprElim)
    register_pass("simplify", Simplify)
    register_pass("infer-pointer-types", InferPointerTypes)
    register_pass("vectorize-threads", VectorizeThreads)
    register_pass("sequence-effects", SequenceEffects)
    register_pass("verify", VerifyWellFormed)
    register_pass("unroll-loop", UnrollLoop)


_register_builtins()
