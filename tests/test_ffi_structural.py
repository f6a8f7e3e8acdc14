"""tirx.ffi: tvm_ffi's structural API (walk, visit, map, mutate, equal, hash, StructuralKey)
over tirx's IR. Orders marked "TIRx" were recorded from apache-tvm-tirx 0.1.0a4 / tvm_ffi on
the same input (CI has no TIRx, so they are data here)."""

from __future__ import annotations

import typing

import pytest
from hypothesis import HealthCheck, given, settings

import tirx
from tirx import ffi as tvm_ffi
from tirx.ir import (
    Add,
    AllocBuffer,
    Bind,
    Buffer,
    BufferLoad,
    Call,
    For,
    IntImm,
    Mul,
    PrimExpr,
    Stmt,
    Sub,
    Var,
)
from tirx.ir.node import Attrs, Node
from tirx.ir.visitor import Visitor, post_order
from tirx.testing import strategies as tst

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

KERNEL = """
from __future__ import annotations

@T.function
def add(A: T.Tensor((16,), T.float16), B: T.Tensor((16,), T.float16)):
    for i in range(16):
        j: T.let[T.int32] = i + 1
        B[i] = A[j] + T.float16(2.0)
"""

KERNEL2 = """
from __future__ import annotations

@T.function
def k[n](A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
    with T.device_entry((n + 128 - 1) // 128, 1, 1, 128, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        s = T.alloc_tensor(ty_args=[T.Tensor((128,), T.float32, scope="shared")])
        i: T.let[T.int32] = T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")
        if i < n:
            s[T.cuda.thread_idx("x")] = A[i]
            B[i] = s[0]
"""


def _expr():
    x, y = Var("x"), Var("y")
    return x, y, (x + 1) * (y - x)


def _name(v):
    """A visited value as the TIRx recordings name it."""
    if isinstance(v, Var):
        return f"Var:{v.name}"
    if isinstance(v, IntImm):
        return f"IntImm:{v.value}"
    if isinstance(v, (tuple, list)):
        return "Array"
    if isinstance(v, (dict, Attrs)):
        return "Map"
    if isinstance(v, (int, str)):
        return f"{type(v).__name__}:{v}"
    return type(v).__name__


def _trace(root, order, **kw):
    seen = []
    tvm_ffi.structural_walk(root, lambda v: seen.append(_name(v)), order=order, **kw)
    return seen


# --------------------------------------------------------------------------- walk
def test_walk_expression_orders_match_tirx():
    _, _, e = _expr()
    assert _trace(e, "pre") == ["Mul", "Add", "Var:x", "IntImm:1", "Sub", "Var:y", "Var:x"]  # TIRx
    assert _trace(e, "post") == ["Var:x", "IntImm:1", "Add", "Var:y", "Var:x", "Sub", "Mul"]  # TIRx
    assert _trace(e, tvm_ffi.WalkOrder.PREORDER) == _trace(e, "pre")
    assert _trace(e, tvm_ffi.WalkOrder.POSTORDER) == _trace(e, "post")
    assert _trace(e, "post") == _trace(e, "post")  # the default order is post


def test_walk_containers_match_tirx():
    root = [1, 2, [3, "a"], {"k": 4}]
    # TIRx: the containers themselves, then their elements; a map's values, not its keys
    assert _trace(root, "pre") == ["Array", "int:1", "int:2", "Array", "int:3", "str:a", "Map", "int:4"]
    seen = []
    tvm_ffi.structural_walk(root, [(int, lambda v: seen.append(v))])
    assert seen == [1, 2, 3, 4]
    seen = []
    tvm_ffi.structural_walk([(1,), True], [(tvm_ffi.Array, lambda v: seen.append(v)), (int, seen.append)])
    assert seen == [1, (1,), [(1,), True]]  # post order; bool is no int (TIRx's exact builtin types)


def test_walk_call_matches_tirx():
    f = tirx.loads(KERNEL2)
    binds = []
    tvm_ffi.structural_walk(f, (Bind, binds.append))
    value = next(b for b in binds if b.var.name == "i").value
    # TIRx visits the same nodes and arrays (it also visits the StringImm's StringType)
    assert _trace(value, "pre") == [
        "Add",
        "Mul",
        "Call",
        "Array",
        "StringImm",
        "IntImm:128",
        "Call",
        "Array",
        "StringImm",
    ]


def test_walk_skip_and_interrupt():
    _, _, e = _expr()
    seen = []

    def cb(v):
        seen.append(_name(v))
        return tvm_ffi.WalkResult.SKIP if isinstance(v, Add) else None

    assert tvm_ffi.structural_walk(e, cb, order="pre") is None
    assert seen == ["Mul", "Add", "Sub", "Var:y", "Var:x"]  # TIRx
    seen.clear()
    tvm_ffi.structural_walk(e, cb, order="post")
    assert seen == ["Var:x", "IntImm:1", "Add", "Var:y", "Var:x", "Sub", "Mul"]  # SKIP after: nothing
    seen.clear()

    def stop(v):
        seen.append(_name(v))
        return tvm_ffi.VisitInterrupt(v) if isinstance(v, Var) else None

    r = tvm_ffi.structural_walk(e, stop, order="post")
    assert isinstance(r, tvm_ffi.VisitInterrupt) and r.value is e.a.a and seen == ["Var:x"]  # TIRx
    seen.clear()
    r = tvm_ffi.structural_walk(e, stop, order="pre")
    assert r.value is e.a.a and seen == ["Mul", "Add", "Var:x"]


def test_walk_first_matching_entry_and_def_region_entries_after():
    _, _, e = _expr()
    seen = []
    tvm_ffi.structural_walk(
        e,
        (Var, lambda v: seen.append(("n", _name(v)))),
        with_def_region_kind=(PrimExpr, lambda v, k: seen.append(("d", _name(v), k))),
    )
    none = tvm_ffi.DefRegionKind.NONE
    assert seen == [  # TIRx
        ("n", "Var:x"),
        ("d", "IntImm:1", none),
        ("d", "Add", none),
        ("n", "Var:y"),
        ("n", "Var:x"),
        ("d", "Sub", none),
        ("d", "Mul", none),
    ]
    seen = []
    tvm_ffi.structural_walk(
        e, [(PrimExpr, lambda v: seen.append("expr")), (Var, lambda v: seen.append("var"))]
    )
    assert seen == ["expr"] * 7  # the first entry that matches wins, even when a later one is closer
    seen = []
    tvm_ffi.structural_walk(e, [((Var, IntImm), lambda v: seen.append(_name(v)))])
    assert seen == ["Var:x", "IntImm:1", "Var:y", "Var:x"]
    seen = []
    tvm_ffi.structural_walk(e, [(typing.Any, lambda v: seen.append(1)), (object, lambda v: seen.append(2))])
    assert seen == [1] * 7


def test_walk_def_regions():
    f = tirx.loads(KERNEL)
    kinds = []
    tvm_ffi.structural_walk(
        f, (), with_def_region_kind=(Var, lambda v, k: kinds.append((v.name, k.name))), order="pre"
    )
    # TIRx: params DEF_PATTERN, i and j DEF_SIMPLE where bound, NONE where used; tirx's
    # signature also has the buffer map (DEF_PATTERN), and a buffer's data pointer at each use
    assert kinds == [
        ("A", "DEF_PATTERN"),
        ("B", "DEF_PATTERN"),
        ("A", "DEF_PATTERN"),
        ("A", "DEF_PATTERN"),
        ("B", "DEF_PATTERN"),
        ("B", "DEF_PATTERN"),
        ("i", "DEF_SIMPLE"),
        ("i", "NONE"),
        ("j", "DEF_SIMPLE"),
        ("B", "NONE"),
        ("A", "NONE"),
        ("j", "NONE"),
        ("i", "NONE"),
    ]


def test_walk_def_regions_of_buffers():
    f = tirx.loads(KERNEL2)
    got = []

    def cb(v, k):
        got.append((type(v).__name__, getattr(v, "name", ""), k))

    tvm_ffi.structural_walk(f, (), with_def_region_kind=[((Buffer, Var), cb)])
    simple, none, pattern = (
        tvm_ffi.DefRegionKind.DEF_SIMPLE,
        tvm_ffi.DefRegionKind.NONE,
        tvm_ffi.DefRegionKind.DEF_PATTERN,
    )
    allocs = []
    tvm_ffi.structural_walk(f, (AllocBuffer, allocs.append))
    s = allocs[0].buffer
    assert ("Buffer", s.name, simple) in got and ("Var", s.data.name, simple) in got  # alloc defines both
    assert ("Var", "n", pattern) in got  # the dynamic shape var, bound by the signature
    assert ("Var", "n", none) in got
    assert [k for t, n, k in got if t == "Buffer" and n == s.name][1:] == [none, none]  # its two uses


def test_walk_callback_result_checked():
    _, _, e = _expr()
    with pytest.raises(TypeError, match="structural_walk: a callback returned a Var for a Var"):
        tvm_ffi.structural_walk(e, lambda v: v)
    assert tvm_ffi.structural_walk(e, lambda v: 5) is None  # TIRx takes integers (not SKIP: advance)


class _Recorder(Visitor):
    def __init__(self):
        self.seen = set()

    def visit(self, node):
        if node is not None:
            self.seen.add(id(node))
        return super().visit(node)

    def visit_var_def(self, var):
        self.seen.add(id(var))

    def visit_buffer(self, buf):
        self.seen.add(id(buf))
        super().visit_buffer(buf)


@SETTINGS
@given(tst.functions())
def test_walk_visits_every_node_a_visitor_visits(f):
    rec = _Recorder()
    rec.visit(f)
    walked = []
    tvm_ffi.structural_walk(f, (Node, walked.append))
    assert rec.seen <= {id(n) for n in walked}
    pre = []
    tvm_ffi.structural_walk(f, (Node, pre.append), order="pre")
    assert sorted(map(id, pre)) == sorted(map(id, walked)) and pre[0] is f and walked[-1] is f


@SETTINGS
@given(tst.functions())
def test_walk_pre_and_post_visit_the_same_values(f):
    pre, post = [], []
    tvm_ffi.structural_walk(f, lambda v: pre.append(v), order="pre")
    tvm_ffi.structural_walk(f, lambda v: post.append(v), order="post")
    assert len(pre) == len(post)
    assert {id(x) for x in pre} == {id(x) for x in post}


def test_walk_deep_ir_runs_each_callback_once():
    x = Var("x")
    e = x
    for i in range(5000):
        e = e + i
    count = [0]

    def cb(v):
        count[0] += 1

    tvm_ffi.structural_walk(e, cb)
    assert count[0] == len(list(post_order(e))) > 5000
    out = tvm_ffi.structural_map(e, (Var, lambda v: Var("y") if v is x else v))
    assert out is not e and tvm_ffi.structural_map(e, lambda v: v) is e


# --------------------------------------------------------------------------- visit
def test_visit_owns_descent():
    _, _, e = _expr()
    seen = []

    def cb(v, vis):
        seen.append(_name(v))
        if isinstance(v, Mul):
            seen.append(("ret", vis.visit(v.b)))
            return None
        return vis.default_visit(v)

    assert tvm_ffi.structural_visit(e, cb) is None
    assert seen == ["Mul", "Sub", "Var:y", "Var:x", ("ret", None)]  # TIRx
    seen.clear()

    def swallow(v, vis):
        seen.append(_name(v))
        if isinstance(v, Var):
            return tvm_ffi.VisitInterrupt("found")
        vis.default_visit(v)
        return None

    assert tvm_ffi.structural_visit(e, swallow) is None
    assert seen == ["Mul", "Add", "Var:x", "Sub", "Var:y"]  # TIRx: the interrupt stops Add only
    seen.clear()

    def stop(v, vis):
        seen.append(_name(v))
        return tvm_ffi.VisitInterrupt("found") if isinstance(v, Var) else vis.default_visit(v)

    r = tvm_ffi.structural_visit(e, stop)
    assert r.value == "found" and seen == ["Mul", "Add", "Var:x"]
    seen.clear()
    assert tvm_ffi.structural_visit(e, (Var, lambda v, vis: seen.append(_name(v)))) is None
    assert seen == ["Var:x", "Var:y", "Var:x"]  # unmatched values: descended into
    with pytest.raises(TypeError, match="must return None or a VisitInterrupt"):
        tvm_ffi.structural_visit(e, lambda v, vis: 5)


def test_visit_def_region_kind():
    f = tirx.loads(KERNEL)
    got = []

    def cb(v, vis):
        got.append((v.name, vis.def_region_kind()))
        return vis.default_visit(v)

    tvm_ffi.structural_visit(f, (Var, cb))
    assert ("i", tvm_ffi.DefRegionKind.DEF_SIMPLE) in got and ("A", tvm_ffi.DefRegionKind.DEF_PATTERN) in got

    def scoped(v, vis):
        return vis.with_def_region_kind(tvm_ffi.DefRegionKind.DEF_SIMPLE, lambda: vis.visit(v.a))

    kinds = []
    _, _, e = _expr()
    tvm_ffi.structural_visit(e, [(Mul, scoped), (Add, lambda v, vis: kinds.append(vis.def_region_kind()))])
    assert kinds == [tvm_ffi.DefRegionKind.DEF_SIMPLE]


# --------------------------------------------------------------------------- map
def test_map_identity_and_sharing():
    x, y, e = _expr()
    assert tvm_ffi.structural_map(e, lambda v: v) is e  # TIRx: same object
    r = tvm_ffi.structural_map(e, (Var, lambda v: y if v is x else v))
    assert tirx.structural_equal(r, (y + 1) * (y - y))
    z = Var("z")
    r = tvm_ffi.structural_map(e, (Var, lambda v: z if v is y else v))
    assert r.a is e.a  # untouched subtrees stay shared
    lst = [1, 2, [3]]
    assert tvm_ffi.structural_map(lst, (int, lambda v: v)) is lst
    assert tvm_ffi.structural_map(lst, (int, lambda v: v * 10)) == [10, 20, [30]]
    assert tvm_ffi.structural_map((1, (2,)), (int, lambda v: v + 1)) == (2, (3,))


@SETTINGS
@given(tst.functions())
def test_map_identity_property(f):
    assert tvm_ffi.structural_map(f, lambda v: v) is f
    assert tvm_ffi.structural_map(f, lambda v: v, order="pre") is f
    assert tvm_ffi.structural_map(f, (), with_def_region_kind=lambda v, k: v) is f
    assert tvm_ffi.structural_mutate(f, lambda v, m: m.default_mutate(v)) is f
    assert tvm_ffi.structural_mutate(f, ()) is f


@SETTINGS
@given(tst.functions())
def test_map_rebuild_equals(f):
    # a callback that rebuilds every node (a fresh copy) gives a structurally equal function
    def copy(v):
        return v.replace() if isinstance(v, (PrimExpr, Stmt)) and not isinstance(v, Var) else v

    g = tvm_ffi.structural_map(f, copy)
    assert tirx.structural_equal(g, f)
    assert tvm_ffi.structural_hash(g) == tvm_ffi.structural_hash(f)


def test_map_pre_descends_into_replacement():
    x, _, e = _expr()
    seen = []

    def pre(v):
        seen.append(_name(v))
        return x - 7 if isinstance(v, Add) else v

    r = tvm_ffi.structural_map(e, pre, order="pre")
    assert seen == ["Mul", "Add", "Var:x", "IntImm:7", "Sub", "Var:y", "Var:x"]  # TIRx
    assert tirx.structural_equal(r, (x - 7) * (e.b))
    seen.clear()
    tvm_ffi.structural_map(e, pre, order="post")
    assert seen == ["Var:x", "IntImm:1", "Add", "Var:y", "Var:x", "Sub", "Mul"]  # TIRx: post sees the rebuilt


def test_map_definition_renamed_at_uses():
    f = tirx.loads(KERNEL)
    z = Var("z")

    def rename(v, k):
        return z if k == tvm_ffi.DefRegionKind.DEF_SIMPLE and v.name == "j" else v

    g = tvm_ffi.structural_map(f, (), with_def_region_kind=(Var, rename))
    assert "z: T.let[T.int32] = i + 1" in g.script() and "A[z]" in g.script()  # TIRx prints the same
    assert tirx.structural_equal(g, f)  # a bound var renamed: equal up to renaming


def test_map_buffer_rebuilt_once():
    f = tirx.loads(KERNEL)
    g = tvm_ffi.structural_map(f, (IntImm, lambda v: IntImm(32) if v.value == 16 else v))
    bufs = []
    tvm_ffi.structural_walk(g, (Buffer, bufs.append))
    by_name = {}
    for b in bufs:
        by_name.setdefault(b.name, set()).add(id(b))
    assert all(len(ids) == 1 for ids in by_name.values())  # every use shares the new buffer
    assert all(b.shape[0].value == 32 for b in bufs)


def test_map_wrong_replacement_is_type_error():
    _, _, e = _expr()
    with pytest.raises(TypeError, match=r"structural_map: Add\.a must be a PrimExpr"):
        tvm_ffi.structural_map(e, (Var, lambda v: None))
    with pytest.raises(TypeError, match="structural_map"):
        tvm_ffi.structural_map(e, (Var, lambda v: 3))
    f = tirx.loads(KERNEL)
    with pytest.raises(TypeError, match="must be a Var"):
        tvm_ffi.structural_map(f, (), with_def_region_kind=(Var, lambda v, k: IntImm(1) if k == 2 else v))


# --------------------------------------------------------------------------- mutate
def test_mutate():
    x, y, e = _expr()
    seen = []

    def m(v, mut, mode):
        seen.append((_name(v), mode))
        if isinstance(v, Var):
            return y if v is x else v
        return mut.default_mutate(v)

    r = tvm_ffi.structural_mutate(e, m)
    assert tirx.structural_equal(r, (y + 1) * (y - y))
    assert [s for s, _ in seen] == ["Mul", "Add", "Var:x", "IntImm:1", "Sub", "Var:y", "Var:x"]  # TIRx
    assert {mode for _, mode in seen} == {tvm_ffi.InplaceMode.DISALLOW}

    def prune(v, mut):
        return v if isinstance(v, Sub) else mut.default_mutate(v)

    r = tvm_ffi.structural_mutate(e, [(Var, lambda v, mut: y if v is x else v), (PrimExpr, prune)])
    assert tirx.structural_equal(r, (y + 1) * (y - x)) and r.b is e.b  # TIRx: a pruned subtree
    r = tvm_ffi.structural_mutate(e, (Var, lambda v, mut: y))  # unmatched: default descent
    assert tirx.structural_equal(r, (y + 1) * (y - y))
    seen.clear()

    def final(v, mut):
        return x - 7 if isinstance(v, Add) else mut.default_mutate(v)

    r = tvm_ffi.structural_mutate(e, [(Var, lambda v, mut: seen.append(v.name) or v), (PrimExpr, final)])
    assert tirx.structural_equal(r, (x - 7) * (y - x)) and seen == ["y", "x"]  # TIRx: the result is final

    def child(v, mut):
        return mut.mutate(v.a) if isinstance(v, Mul) else mut.default_mutate(v)

    r = tvm_ffi.structural_mutate(e, [(Var, lambda v, mut: y), (PrimExpr, child)])
    assert tirx.structural_equal(r, y + 1)  # TIRx


def test_mutate_remap():
    f = tirx.loads(KERNEL)
    z = Var("z")

    def m(v, mut):
        if isinstance(v, Var) and v.name == "j" and mut.def_region_kind() != tvm_ffi.DefRegionKind.NONE:
            mut.var_remap_set(v, z)
            return z
        if isinstance(v, Var) and v.name == "j":
            assert mut.var_remap_get(v) is z
        return mut.default_mutate(v)

    g = tvm_ffi.structural_mutate(f, m)
    assert "A[z]" in g.script()
    with pytest.raises(TypeError, match="var must be a Var or a Buffer"):
        tvm_ffi.structural_mutate(f, lambda v, mut: mut.var_remap_get(3))


# --------------------------------------------------------------------------- misuse
@pytest.mark.parametrize(
    "api", ["structural_walk", "structural_visit", "structural_map", "structural_mutate"]
)
def test_bad_callbacks_name_the_argument(api):
    fn = getattr(tvm_ffi, api)
    _, _, e = _expr()
    with pytest.raises(TypeError, match=f"{api}: callbacks must be"):
        fn(e, "abc")
    with pytest.raises(TypeError, match=r"callbacks\[0\] must be a \(type, callback\) tuple"):
        fn(e, [lambda *a: None])
    with pytest.raises(TypeError, match="callback type must be a class"):
        fn(e, (3, lambda *a: None))
    with pytest.raises(TypeError, match="callbacks must be"):
        fn(e, Var)


@pytest.mark.parametrize("api", ["structural_walk", "structural_map"])
def test_bad_order_and_def_region_callbacks(api):
    fn = getattr(tvm_ffi, api)
    _, _, e = _expr()
    with pytest.raises(ValueError, match="order must be"):
        fn(e, lambda v: v, order="in")
    with pytest.raises(TypeError, match="with_def_region_kind must be"):
        fn(e, (), with_def_region_kind=5)


def test_mutate_callback_arity():
    _, _, e = _expr()
    with pytest.raises(TypeError, match=r"accept \(value, mutator\)"):
        tvm_ffi.structural_mutate(e, lambda v: v)


# --------------------------------------------------------------------------- equal, hash, key
def test_equal_hash_key():
    assert tvm_ffi.structural_equal([1, 2, 3], [1, 2, 3]) and not tvm_ffi.structural_equal([1, 2], [1, 3])
    f, g = tirx.loads(KERNEL), tirx.loads(KERNEL)
    assert tvm_ffi.structural_equal(f, g) and tvm_ffi.structural_hash(f) == tvm_ffi.structural_hash(g)
    assert 0 <= tvm_ffi.structural_hash(f) < 1 << 64
    d = {tvm_ffi.StructuralKey(f): "a"}
    assert d[tvm_ffi.StructuralKey(g)] == "a"
    k = tvm_ffi.StructuralKey(f)
    assert k.key is f and -(1 << 63) <= k.hash_i64 < 1 << 63 and k.__hash__() == k.hash_i64 & ((1 << 64) - 1)
    assert tvm_ffi.get_first_structural_mismatch(f, g) is None
    h = tvm_ffi.structural_map(f, (IntImm, lambda v: IntImm(2) if v.value == 1 else v))
    lhs, rhs = tvm_ffi.get_first_structural_mismatch(f, h)
    assert lhs == rhs
    assert "body" in lhs
    x, y = Var("x"), Var("y")
    assert not tvm_ffi.structural_equal(x + 1, y + 1)
    assert tvm_ffi.structural_equal(x + 1, y + 1, map_free_vars=True)
    with pytest.raises(TypeError, match="skip_tensor_content"):
        tvm_ffi.structural_hash(f, skip_tensor_content="yes")


@SETTINGS
@given(tst.functions())
def test_equal_implies_equal_hash(f):
    g = tirx.loads(tirx.dumps(f))
    assert tvm_ffi.structural_equal(f, g)
    assert tvm_ffi.structural_hash(f) == tvm_ffi.structural_hash(g)
    assert tvm_ffi.StructuralKey(f) == tvm_ffi.StructuralKey(g)


def test_containers_are_array_and_map():
    assert isinstance((1,), tvm_ffi.Array) and isinstance([1], tvm_ffi.Array)
    assert isinstance(Attrs({"a": 1}), tvm_ffi.Map) and isinstance({}, tvm_ffi.Map)
    f = tirx.loads(KERNEL)
    calls = []
    tvm_ffi.structural_walk(f, (Call, calls.append))
    fors = []
    tvm_ffi.structural_walk(f, (For, fors.append), order="pre")
    assert len(fors) == 1 and not calls
    assert repr(tvm_ffi.VisitInterrupt(3)) == "VisitInterrupt(value=3)"
    assert isinstance(BufferLoad, type)
