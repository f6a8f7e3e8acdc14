"""The operator table (tirx/ir/operators.py) is complete, and every surface agrees with it:
the printer's minimal parentheses read back the same tree through the text grammar and
through the Python frontend, and no pair of printed parentheses can be dropped."""

from __future__ import annotations

import ast
import importlib.util
import itertools
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.codegen.cuda import CodeGenCUDA
from tirx.errors import DiagnosticError
from tirx.ir import Evaluate, Function, Var
from tirx.ir import expr as E
from tirx.ir.operators import OPERATORS
from tirx.ir.types import bool_, int32

_counter = itertools.count()


def _subclasses(cls):
    """Live subclasses (attrs' slotted rebuild leaves the pre-slots class behind until collected)."""
    out = set()
    for c in cls.__subclasses__():
        if getattr(sys.modules.get(c.__module__), c.__qualname__, None) is c:
            out.add(c)
        out |= _subclasses(c)
    return out


def test_every_operator_node_has_one_row():
    nodes = [o.node for o in OPERATORS]
    assert len(nodes) == len(set(nodes))
    assert _subclasses(E.BinaryOp) <= set(nodes)
    assert set(E.BINARY_OPS) | {E.Not, E.BitNot} == set(nodes)


def test_spellings_are_unique_and_consistent():
    texts = [o.text for o in OPERATORS if o.text is not None]
    assert len(texts) == len(set(texts))
    funcs = [f for o in OPERATORS for f in o.func]
    assert len(funcs) == len(set(funcs))
    asts = [o.py_ast for o in OPERATORS if o.py_ast is not None]
    assert len(asts) == len(set(asts))
    for o in OPERATORS:
        assert o.text is not None or o.func, o  # every node has a text spelling
        assert o.assoc in ("left", "right", "none")
        assert (o.assoc == "none") == (o.kind == "cmp")
        assert (o.c_text is None) == (o.c_prec is None)
        # a node without a C++ operator has its own emitter
        assert o.c_text is not None or hasattr(CodeGenCUDA, f"e_{o.node.__name__}"), o
        if o.py_func is not None:
            assert o.py_ast is not None


def test_text_precedence_column_matches_python():
    # the text format is Python syntax: the table must group ``a o1 b o2 c`` as Python does
    infix = [o for o in OPERATORS if o.text is not None and not o.unary]
    for o1 in infix:
        for o2 in infix:
            if o1.kind == "cmp" and o2.kind == "cmp":
                continue  # Python chains these; the text format refuses them
            if o1 is o2 and o1.kind == "logic":
                continue  # Python flattens ``a and b and c``
            got = ast.dump(ast.parse(f"a {o1.text} b {o2.text} c", mode="eval"))
            left = ast.dump(ast.parse(f"(a {o1.text} b) {o2.text} c", mode="eval"))
            assert (got == left) == (o1.prec >= o2.prec), (o1.text, o2.text)


def test_c_precedence_column_orders_like_cpp():
    # C++: * / %  >  + -  >  << >>  >  < <= > >=  >  == !=  >  &  >  ^  >  |  >  &&  >  ||
    order = [["*", "/", "%"], ["+", "-"], ["<<", ">>"], ["<", "<=", ">", ">="], ["==", "!="], ["&"], ["^"]]
    order += [["|"], ["&&"], ["||"]]
    level = {sym: -i for i, group in enumerate(order) for sym in group}
    rows = [o for o in OPERATORS if o.c_text is not None and not o.unary]
    for o1 in rows:
        for o2 in rows:
            assert (o1.c_prec > o2.c_prec) == (level[o1.c_text] > level[o2.c_text]), (o1, o2)


# ------------------------------------------------------------------ random operator trees
_A, _B = Var("a", int32), Var("b", int32)
_P, _Q = Var("p", bool_), Var("q", bool_)
_INT_OPS = [o.node for o in OPERATORS if o.kind in ("arith", "bitwise") and not o.unary]
_CMP_OPS = [o.node for o in OPERATORS if o.kind == "cmp"]
_LOGIC_OPS = [o.node for o in OPERATORS if o.kind == "logic" and not o.unary]


def _trees():
    ints = st.recursive(
        st.sampled_from([_A, _B]) | st.integers(-3, 9).map(lambda v: E.IntImm(v, int32)),
        lambda kids: st.one_of(
            st.tuples(st.sampled_from(_INT_OPS), kids, kids).map(lambda t: t[0](t[1], t[2])),
            kids.map(E.BitNot),
        ),
        max_leaves=12,
    )
    leaves = st.sampled_from([_P, _Q]) | st.tuples(st.sampled_from(_CMP_OPS), ints, ints).map(
        lambda t: t[0](t[1], t[2])
    )
    bools = st.recursive(
        leaves,
        lambda kids: st.one_of(
            st.tuples(st.sampled_from(_LOGIC_OPS), kids, kids).map(lambda t: t[0](t[1], t[2])),
            kids.map(E.Not),
            st.tuples(st.sampled_from(_CMP_OPS), kids, kids).map(lambda t: t[0](t[1], t[2])),
        ),
        max_leaves=6,
    )
    return bools


def _func(e) -> Function:
    return Function("f", params=(_A, _B, _P, _Q), body=Evaluate(e))


def _expr_line(text: str) -> str:
    (line,) = [ln for ln in text.splitlines() if ln.startswith("    T.evaluate(")]
    return line[len("    T.evaluate(") : -1]


def _grouping_parens(s: str) -> list[tuple[int, int]]:
    """(open, close) indices of parentheses that group (not call parentheses)."""
    out, stack = [], []
    for i, ch in enumerate(s):
        if ch == "(":
            j = i - 1
            stack.append((i, j < 0 or not (s[j].isalnum() or s[j] in "_)]")))
        elif ch == ")":
            k, grouping = stack.pop()
            if grouping:
                out.append((k, i))
    return out


def _python_frontend(text: str, tmp_path) -> Function:
    path = tmp_path / f"ops_rt_{next(_counter)}.py"
    path.write_text(text.replace("# from tirx.script", "from tirx.script"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


def _python_reads_a_chain(expr: str) -> bool:
    """Whether Python parses ``expr`` with a chained comparison (``a == b == q``)."""
    import ast

    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Compare) and len(n.ops) > 1 for n in ast.walk(tree))


def _check_round_trip(e, tmp_path=None) -> None:
    """Printed text reads back as ``e`` (grammar, and the Python frontend when ``tmp_path``), and
    dropping any one pair of grouping parentheses changes the tree or is refused."""
    f = _func(e)
    text = tirx.dumps(f)
    g = tirx.loads(text)
    assert tirx.structural_equal(g, f), text
    assert tirx.dumps(g) == text
    if tmp_path is not None:
        assert tirx.structural_equal(_python_frontend(text, tmp_path), f), text
    line = _expr_line(text)
    for i, j in _grouping_parens(line):
        shorter = line[:i] + line[i + 1 : j] + line[j + 1 :]
        if _python_reads_a_chain(shorter):
            continue  # `(a == b) == q`: tirx's loader reads TIRx's unparenthesized form, Python would not
        try:
            g2 = tirx.loads(text.replace(f"T.evaluate({line})", f"T.evaluate({shorter})"))
        except DiagnosticError:
            continue
        assert not tirx.structural_equal(g2, f), f"redundant parentheses in {line!r} at {i}"


def _result_is_bool(o) -> bool:
    return o.kind in ("cmp", "logic")


def _apply(o, x, y=None):
    return o.node(x) if o.unary else o.node(x, y)


def test_every_operator_pair_round_trips_with_minimal_parentheses():
    # each operator as the left / right / only operand of each other operator
    n = 0
    for child in OPERATORS:
        c_bool = _result_is_bool(child)
        x, y = (_P, _Q) if child.kind == "logic" else (_A, _B)
        inner = _apply(child, x, y)
        for parent in OPERATORS:
            if parent.kind == "logic":
                if not c_bool:
                    continue
                other = _Q
            elif parent.kind == "cmp":
                other = _Q if c_bool else _B
            else:
                if c_bool:
                    continue
                other = _B
            if parent.unary:
                cases = [parent.node(inner)]
            else:
                cases = [parent.node(inner, other), parent.node(other, inner)]
            for e in cases:
                _check_round_trip(e)
                n += 1
    assert n > 500


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_trees())
def test_printer_grammar_frontend_agree_with_minimal_parentheses(tmp_path, e):
    _check_round_trip(e, tmp_path)


@pytest.mark.parametrize("o", [o for o in OPERATORS if not o.unary], ids=lambda o: o.node.__name__)
def test_each_binary_operator_round_trips(o):
    a, b = (_P, _Q) if o.kind == "logic" else (_A, _B)
    f = _func(o.node(a, b))
    text = tirx.dumps(f)
    spelled = f" {o.text} " if o.text is not None else f"T.{o.func[0]}("
    if o.node is E.Div:  # of integers TIRx prints T.Div(a, b): its '/' refuses two integers
        spelled = "T.Div("
    assert spelled in text
    assert tirx.structural_equal(tirx.loads(text), f)
    for name in o.func:  # every T.<func>(a, b) spelling reads back as this node
        alt = text.replace(_expr_line(text), f"T.{name}({a.name}, {b.name})")
        assert tirx.structural_equal(tirx.loads(alt), f), name
