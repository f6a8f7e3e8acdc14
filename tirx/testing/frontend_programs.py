"""Generated frontend programs: small ``@T.function`` sources, as text, whose branches compare
IR values with Python values (``==``, ``!=``, ``in``, ``not in``; in kernel ``if``s, in
``a if c else b``, in ``@T.inline`` helpers and in plain Python helpers), each with the
answer Python gives.

The property (``check_program``): a program builds and, on the interpreter, takes every
branch exactly as Python takes it on the same values; or, where a plain Python helper asks
for the Python truth of a comparison only the kernel can decide (``if x == 3:`` or
``x in (1, 2)`` outside the parser), building it is a located ``DiagnosticError`` at that
statement. A comparison silently folded to a Python constant fails it (issue #29).
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

__all__ = ["CompareProgram", "check_program", "compare_programs", "frontend_campaign", "load_source"]

#: Threads (and elements of A and B) of a generated kernel.
N = 8
_DTYPES = ("int32", "int64", "float32")
_TMP: Path | None = None
_count = itertools.count()


@dataclass(frozen=True)
class CompareProgram:
    """One generated module: ``source`` defines helpers and the kernel ``kern(A, B)``.

    ``conds[k]`` (Python text over ``A``, ``i``, ``v`` and the helpers) decides whether
    thread ``i`` adds ``2**k`` to ``B[i]``; ``reference`` is the helpers as plain Python.
    ``refused_line``: the source line whose build must be refused (None: it builds).
    """

    source: str
    dtype: str
    values: tuple[Any, ...]
    conds: tuple[str, ...]
    reference: str
    refused_line: int | None = None

    def expected(self) -> list[int]:
        """``B`` as Python computes it."""
        env: dict[str, Any] = {}
        exec(self.reference, env)  # the helpers, undecorated
        out = []
        for i, x in enumerate(self.values):
            env.update(A=list(self.values), i=i, v=x)
            out.append(sum(1 << k for k, c in enumerate(self.conds) if eval(c, env)))
        return out


def _literal(draw: Any, dtype: str) -> str:
    if dtype == "float32" and draw(st.booleans()):
        return repr(draw(st.integers(-4, 12)) / 2)
    return str(draw(st.integers(-2, 6)))


_KERNEL_IR = ("A[i]", "v", "(v + 1)", "(A[i] * 2)", "(v - A[i] + v)")
_HELPER_IR = ("x", "(x + 1)", "(x * 2)")


def _operand(draw: Any, ir: tuple[str, ...] = _KERNEL_IR) -> str:
    """The IR value compared: a load, the bound ``v``, or arithmetic on them."""
    return draw(st.sampled_from(ir))


def _container(draw: Any, dtype: str, names: dict[str, str], ir: tuple[str, ...] = _KERNEL_IR) -> str:
    """A collection known while the kernel builds (a literal, a range, a module-level name),
    sometimes holding an IR value."""
    vals = [_literal(draw, dtype) for _ in range(draw(st.integers(0, 4)))]
    has_ir = draw(st.integers(0, 4)) == 0
    if has_ir:
        vals.insert(draw(st.integers(0, len(vals))), _operand(draw, ir))
    kind = draw(st.sampled_from(("tuple", "list", "set", "range", "name")))
    if kind == "range" and dtype != "float32":
        lo = draw(st.integers(-2, 6))
        return f"range({lo}, {lo + draw(st.integers(0, 4))})"
    if kind == "list":
        return "[" + ", ".join(vals) + "]"
    if kind == "set" and vals:
        return "{" + ", ".join(vals) + "}"
    tup = "(" + "".join(x + ", " for x in vals) + ")" if len(vals) == 1 else "(" + ", ".join(vals) + ")"
    if kind == "name" and not has_ir:
        name = f"VALS{len(names)}"
        names[name] = tup
        return name
    return tup


def _atom(draw: Any, dtype: str, names: dict[str, str], helpers: list[tuple[str, str, bool]]) -> str:
    form = draw(st.sampled_from(("in", "not in", "==", "!=", "lit==", "in-ir", "inline", "plain")))
    x = _operand(draw)
    if form in ("in", "not in"):
        return f"{x} {form} {_container(draw, dtype, names)}"
    if form in ("==", "!="):
        return f"{x} {form} {_literal(draw, dtype)}"
    if form == "lit==":
        return f"{_literal(draw, dtype)} {draw(st.sampled_from(('==', '!=')))} {x}"
    if form == "in-ir":  # a Python value searched in a tuple holding IR values
        return f"{_literal(draw, dtype)} in ({x}, {_literal(draw, dtype)})"
    name = f"h{len(helpers)}"
    if form == "inline":  # parsed like the kernel: in / not in / == build IR
        op = draw(st.sampled_from(("in", "not in", "==", "!=")))
        rhs = _container(draw, dtype, names, _HELPER_IR) if "in" in op else _literal(draw, dtype)
        helpers.append((name, f"    return {_operand(draw, _HELPER_IR)} {op} {rhs}", True))
    else:  # plain Python: == / != build EQ / NE nodes
        lit = _literal(draw, dtype)
        body = draw(
            st.sampled_from((f"    return x == {lit}", f"    return x != {lit}", f"    return {lit} == x"))
        )
        helpers.append((name, body, False))
    return f"{name}({x})"


def _cond(draw: Any, dtype: str, names: dict[str, str], helpers: list) -> str:
    a = _atom(draw, dtype, names, helpers)
    shape = draw(st.sampled_from(("atom", "atom", "not", "and", "or")))
    if shape == "not":
        return f"not ({a})"
    if shape in ("and", "or"):
        return f"{a} {shape} {_atom(draw, dtype, names, helpers)}"
    return a


#: Plain Python helpers that ask for a Python truth value only the kernel knows.
_REFUSED_BODIES = (
    "    return x in ({a}, {b})",
    "    return x not in [{a}]",
    "    if x == {a}:\n        return True\n    return False",
    "    return bool(x != {a})",
)


@st.composite
def compare_programs(draw: Any) -> CompareProgram:
    """A kernel with 1-5 guarded updates of ``B[i]`` (see the module docstring)."""
    dtype = draw(st.sampled_from(_DTYPES))
    names: dict[str, str] = {}
    helpers: list[tuple[str, str, bool]] = []
    conds = [_cond(draw, dtype, names, helpers) for _ in range(draw(st.integers(1, 5)))]
    refused = draw(st.integers(-1, len(conds) - 1)) if draw(st.integers(0, 3)) == 0 else -1
    if refused >= 0:
        body = draw(st.sampled_from(_REFUSED_BODIES)).format(a=_literal(draw, dtype), b=_literal(draw, dtype))
        helpers.append(("bad", body, False))
        conds[refused] = "bad(v)"
    head = ["from tirx.script import tirx as T", ""]
    head += [f"{k} = {v}" for k, v in names.items()]
    ref = [f"{k} = {v}" for k, v in names.items()]
    for name, body, inline in helpers:
        head += ["", *(["@T.inline"] if inline else []), f"def {name}(x):", *body.split("\n")]
        ref += [f"def {name}(x):", *body.split("\n")]
    lines = [
        *head,
        "",
        "",
        "@T.function",
        f'def kern(A: T.Tensor(({N},), "{dtype}"), B: T.Tensor(({N},), "int32")):',
        f"    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block={N}))",
        '    i = T.cuda.thread_idx("x")',
        "    v = A[i]",
        "    B[i] = 0",
    ]
    refused_line = None
    for k, c in enumerate(conds):
        if k == refused:
            refused_line = len(lines) + 1
        if draw(st.booleans()):
            lines += [f"    if {c}:", f"        B[i] = B[i] + {1 << k}"]
            if draw(st.booleans()):
                lines += ["    else:", "        B[i] = B[i] + 0"]
        else:
            lines.append(f"    B[i] = B[i] + ({1 << k} if {c} else 0)")
    if dtype == "float32":
        values = tuple(draw(st.integers(-4, 12)) / 2 for _ in range(N))
    else:
        values = tuple(draw(st.integers(-2, 6)) for _ in range(N))
    return CompareProgram(
        "\n".join(lines) + "\n", dtype, values, tuple(conds), "\n".join(ref) + "\n", refused_line
    )


def load_source(text: str, stem: str = "prog") -> Any:
    """Write ``text`` to a temporary file and import it (the frontend reads the source)."""
    global _TMP
    if _TMP is None:
        _TMP = Path(tempfile.mkdtemp(prefix="tirx_frontend_programs_"))
    name = f"_tirx_{stem}_{next(_count)}"
    path = _TMP / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a .py path always has a loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        del sys.modules[name]
    return mod


def check_program(p: CompareProgram) -> None:
    """The property: builds and branches as Python does, or is refused at its line."""
    import numpy as np

    import tirx
    from tirx.errors import DiagnosticError

    if p.refused_line is not None:
        try:
            load_source(p.source)
        except DiagnosticError as e:
            assert e.span is not None and e.span.line == p.refused_line, (str(e), p.refused_line)
            assert "no Python truth value" in e.message, e.message
            return
        raise AssertionError(f"a Python truth value of an IR comparison was not refused:\n{p.source}")
    f = load_source(p.source).kern
    a = np.array(p.values, dtype=p.dtype)
    b = np.full(N, -1, dtype="int32")
    tirx.compile(f, target="interp")(a, b)
    want = p.expected()
    assert b.tolist() == want, f"B = {b.tolist()}, Python says {want}\n{p.source}\n{tirx.dumps(f)}"


def frontend_campaign(**run: Any) -> Any:
    """``check_program`` over ``compare_programs`` as a ``tirx.testing.campaign`` run
    (``run``: ``run_campaign``'s keyword arguments: seed, examples, time_budget, ...)."""
    from .campaign import run_campaign

    run.setdefault("examples", None)
    run.setdefault("max_shrink_time", 60.0)
    run.setdefault("time_budget", None)
    return run_campaign(
        "frontend-compare",
        compare_programs(),
        check_program,
        replay_cmd="tirx fuzz --frontend --seed {seed} --examples {examples}",
        text_of=lambda p: p.source,
        **run,
    )
