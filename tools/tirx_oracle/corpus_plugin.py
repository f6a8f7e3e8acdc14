"""pytest plugin of the corpus harness: run a TIRx test file and capture every kernel it builds.

Loaded with ``-p corpus_plugin`` by ``corpus_harvest.py`` (side ``oracle``: apache-tvm-tirx
0.1.0a4 serves ``import tvm``) and by ``corpus_check.py`` (side ``tirx``: tirx serves it).
Environment:

- ``CORPUS_SIDE``: ``oracle`` or ``tirx``;
- ``CORPUS_OUT``: the JSON-lines file to append one record per captured kernel to;
- ``CORPUS_FILE``: the test file's corpus path (recorded in each record);
- ``CORPUS_ORACLE`` (tirx side): TIRx's records of the same file, so each kernel tirx's frontend
  builds is compared with TIRx's printed text of the same kernel right away (stage 2).

A kernel is keyed by (test node id, kernel name, occurrence of that name in the test), the same
on both sides. Skip marks are ignored (``-p no:skipping``) so GPU tests build their kernels on a
machine without a GPU; what a test does after building is not checked here.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

import corpus_alias

SIDE = os.environ.get("CORPUS_SIDE", "oracle")
OUT = os.environ.get("CORPUS_OUT", "")
FILE = os.environ.get("CORPUS_FILE", "")

_current = ["<module>"]
_seen: dict[tuple[str, str], int] = {}
_oracle: dict[tuple[str, str, int], dict] = {}


def _first_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    text = next((m for m in msg if "error:" in m), msg[-1] if msg else "")
    text = text[text.index("error:") :] if "error:" in text else text
    return f"{type(e).__name__}: {text}"[:400]


def _key(name: str) -> tuple[str, str, int]:
    n = _seen.get((_current[0], name), 0)
    _seen[(_current[0], name)] = n + 1
    return (_current[0], name, n)


def _emit(rec: dict) -> None:
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(rec) + "\n")


# ------------------------------------------------------------------ oracle side
def _oracle_compile(obj: Any) -> dict:
    """TIRx's CUDA for ``obj`` (sm_90a, else sm_100a), as the golden cases record it."""
    from golden_frontend_cuda import compile_case

    r = compile_case(obj)
    return r if "cuda" in r else {"compile_error": r["error"]}


def _oracle_record(result: Any, source: Any) -> None:
    import inspect

    if isinstance(source, str) or not (inspect.isfunction(source) or inspect.isclass(source)):
        return  # printed text parsed back (a round-trip test), not a kernel of the file
    name = getattr(source, "__name__", "?")
    node, kname, occ = _key(name)
    rec: dict[str, Any] = {
        "file": FILE,
        "test": node,
        "name": kname,
        "occ": occ,
        "kind": "module" if inspect.isclass(source) else "function",
        "line": getattr(getattr(source, "__code__", None), "co_firstlineno", None),
    }
    try:
        rec["text"] = result.script()
    except Exception as e:
        rec["print_error"] = _first_line(e)
    if os.environ.get("CORPUS_COMPILE", "1") == "1":
        rec.update(_oracle_compile(result))
    _emit(rec)


def _oracle_refused(source: Any, e: BaseException) -> None:
    """A kernel TIRx refuses to build: if tirx builds it, the report lists it (an error test
    whose error tirx lacks, or a form newer than 0.1.0a4)."""
    import inspect

    if isinstance(source, str) or not (inspect.isfunction(source) or inspect.isclass(source)):
        return
    node, kname, occ = _key(getattr(source, "__name__", "?"))
    _emit({"file": FILE, "test": node, "name": kname, "occ": occ, "refused": _first_line(e)})


def _install_oracle() -> None:
    corpus_alias.install("tvm", "tvm_tirx")
    import tvm_tirx.script.parser.entry as entry

    orig = entry.parse

    def parse(source: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            result = orig(source, *args, **kwargs)
        except Exception as e:
            try:
                _oracle_refused(source, e)
            except Exception:
                traceback.print_exc()
            raise
        try:
            _oracle_record(result, source)
        except Exception:  # the harness must never change what the test sees
            traceback.print_exc()
        return result

    entry.parse = parse


# ------------------------------------------------------------------ tirx side
def _tirx_compare(built: Any, name: str, kind: str, line: Any) -> None:
    import tirx

    node, kname, occ = _key(name)
    rec: dict[str, Any] = {"file": FILE, "test": node, "name": kname, "occ": occ, "kind": kind, "line": line}
    try:
        rec["text"] = tirx.dumps(built)
    except Exception as e:
        rec["print_error"] = _first_line(e)
    ref = _oracle.get((node, kname, occ))
    if ref is None:
        rec["stage2"] = "no-oracle"
    elif "text" not in ref:
        rec["stage2"] = "oracle-no-text"
    else:
        try:
            loaded = tirx.loads(ref["text"])
        except Exception as e:
            rec["stage2"] = "load-failed"
            rec["stage2_error"] = _first_line(e)
        else:
            try:
                tirx.assert_structural_equal(built, loaded)
                rec["stage2"] = "equal"
            except Exception as e:
                rec["stage2"] = "differs"
                rec["stage2_error"] = _first_line(e)
    _emit(rec)


def _tirx_failed(name: str, kind: str, e: BaseException) -> None:
    node, kname, occ = _key(name)
    _emit(
        {
            "file": FILE,
            "test": node,
            "name": kname,
            "occ": occ,
            "kind": kind,
            "stage2": "build-failed",
            "stage2_error": _first_line(e),
        }
    )


class _FfiDtype(str):
    """``tvm_ffi.dtype(name)`` for the tirx side: the name with ``bits``, ``lanes`` and
    ``itemsize`` as tvm_ffi gives them (bool: 8 bits; a handle: 64), read from tirx's dtype."""

    @property
    def _t(self) -> Any:
        from tirx.ir.types import as_type

        return as_type(str(self))

    @property
    def bits(self) -> int:
        t = self._t
        if not hasattr(t, "bits"):  # a handle
            return 64
        return 8 if t.is_bool else t.bits

    @property
    def lanes(self) -> int:
        return getattr(self._t, "lanes", 1)

    @property
    def itemsize(self) -> int:
        return max(1, self.bits * self.lanes // 8)


def _install_tirx() -> None:
    corpus_alias.install("tvm", "tirx")
    # tvm_ffi's structural API (walk, map, mutate, equal, hash) is tirx.ffi's; the rest stubs
    corpus_alias.install("tvm_ffi", "tirx.ffi")
    import tvm.runtime as _rt  # the proxy of tirx.runtime
    import tvm_ffi as _ffi  # and its dtype: tests size elements with it on the host

    _ffi.__dict__["dtype"] = _FfiDtype

    # ``tvm.runtime.enabled(target)`` gates tests on a backend: tirx builds the kernels of
    # TIRx's cuda and host (llvm, c) targets, so those are enabled (a stub would be false and
    # the test would skip itself without building anything)
    _rt.__dict__["enabled"] = lambda target: str(target).split()[0] in ("cuda", "llvm", "c")
    try:  # tests importorskip it for host-side reference values only, never inside a kernel
        import ml_dtypes  # noqa: F401
    except ImportError:
        corpus_alias.install("ml_dtypes", None)
    oracle_path = os.environ.get("CORPUS_ORACLE", "")
    if oracle_path and os.path.exists(oracle_path):
        with open(oracle_path) as f:
            for line in f:
                r = json.loads(line)
                _oracle[(r["test"], r["name"], r["occ"])] = r
    import tirx.script.decorators as dec
    from tirx.script import ir as I_ns
    from tirx.script import tirx as T_ns

    orig_make = dec._make_function

    def _make_function(func: Any, private: bool, locals_: dict, in_class: bool, *rest: Any) -> Any:
        if in_class:
            return orig_make(func, private, locals_, in_class, *rest)
        line = getattr(getattr(func, "__code__", None), "co_firstlineno", None)
        try:
            out = orig_make(func, private, locals_, in_class, *rest)
        except BaseException as e:
            _tirx_failed(getattr(func, "__name__", "?"), "function", e)
            raise
        _tirx_compare(out, func.__name__, "function", line)
        return out

    dec._make_function = _make_function

    orig_spec = dec.JitFunction.specialize
    built: dict[int, Any] = {}  # specializations seen, by id (kept alive, so their ids stay theirs)

    def specialize(self: Any, **values: Any) -> Any:
        name = getattr(getattr(self, "func", None), "__name__", None) or getattr(self, "__name__", "?")
        try:
            out = orig_spec(self, **values)
        except BaseException as e:
            if not (isinstance(e, TypeError) and ".specialize" in str(e)):
                # (refused arguments build nothing, in TIRx too: no occurrence to count)
                _tirx_failed(name, "function", e)
            raise
        if built.get(id(out)) is out:
            return out  # a cache hit: TIRx parses (and the oracle records) only a new specialization
        built[id(out)] = out
        _tirx_compare(out, name, "function", None)
        return out

    dec.JitFunction.specialize = specialize

    orig_mod = dec.ir_module

    def ir_module(cls: Any = None, **kw: Any) -> Any:
        if cls is None:
            return lambda c: ir_module(c, **kw)
        try:
            out = orig_mod(cls, **kw)
        except BaseException as e:
            _tirx_failed(getattr(cls, "__name__", "?"), "module", e)
            raise
        _tirx_compare(out, cls.__name__, "module", None)
        return out

    import tirx.script as script_pkg  # tvm.script.ir_module (TIRx's spelling) is this one

    for ns in (dec, T_ns, I_ns, script_pkg):
        if getattr(ns, "ir_module", None) is orig_mod:
            ns.ir_module = ir_module


if SIDE == "oracle":
    _install_oracle()
else:
    _install_tirx()


def pytest_runtest_protocol(item: Any, nextitem: Any) -> None:
    _current[0] = item.nodeid.split("::", 1)[-1]


def pytest_runtest_logreport(report: Any) -> None:
    """On the tirx side, a failed test's error: why kernels of it were not built."""
    if SIDE != "oracle" and report.failed and report.when in ("setup", "call"):
        exc = getattr(getattr(report, "longrepr", None), "reprcrash", None)
        msg = getattr(exc, "message", "") or str(report.longrepr).strip().splitlines()[-1:]
        _emit({"test": report.nodeid.split("::", 1)[-1], "test_error": str(msg).splitlines()[0][:300]})


def pytest_collectreport(report: Any) -> None:
    if SIDE != "oracle" and report.failed:
        text = str(report.longrepr).strip().splitlines()
        _emit({"test": "<collection>", "test_error": (text[-1] if text else "collection failed")[:300]})


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _current[0] = "<module>"


def pytest_collectstart(collector: Any) -> None:
    _current[0] = "<module>"


sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
