"""SequenceEffects: the CUDA runs a statement's side effects in the interpreter's order.

C leaves the order of two operands open; the interpreter (and Python) go left to right. The
pass binds all but the last access of such a statement to names, so the order no longer
depends on the C compiler."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from test_frontend_util import load_module

import tirx
from tirx.codegen import generate
from tirx.ir.visitor import Mutator
from tirx.passes import SequenceEffects, build_pipeline
from tirx.passes.sequence import sequence_effects
from tirx.testing.runnable import runnable_kernels

KERNEL = """
@T.function
def f(C: T.Tensor((2,), T.int32), O: T.Tensor((4,), T.int32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=(1,), block=(1,)))
    O[0] = T.cuda.atomic_add(C.ptr_to([0]), 1) + T.cuda.atomic_add(C.ptr_to([0]), 1) * 10
    O[1] = C[0] + T.cuda.atomic_add(C.ptr_to([0]), 5)
    O[2 + T.cuda.atomic_add(C.ptr_to([1]), 1)] = T.cuda.atomic_add(C.ptr_to([0]), 100)
    T.cuda.atomic_add(C.ptr_to([1]), C[0])
"""


def _kernel(tmp_path=None):
    return load_module("from tirx.script import tirx as T\n" + KERNEL, "seq").f


def test_effects_run_left_to_right_in_the_cuda(tmp_path):
    f = _kernel(tmp_path)
    c, o = np.zeros(2, np.int32), np.zeros(4, np.int32)
    tirx.compile(f, target="interp")(c, o)
    # Python's order: 0 + 1 * 10; then C[0] is 2 before the add of 5; the value (7, C[0] -> 107)
    # before the index (C[1]: 0 -> 1); the last atomic adds C[0] = 107 to C[1]
    assert o.tolist() == [10, 4, 7, 0] and c.tolist() == [107, 108]
    body = generate(f).text.split("__global__", 1)[1]
    lines = [ln.strip() for ln in body.splitlines() if ln.strip() and not ln.strip().startswith("//")]
    want = [
        "const int seq_v1 = atomicAdd((C + 0), 1);",
        "O[0] = ",
        "const int seq_v2 = C[0];",
        "O[1] = ",
        "const int seq_v3 = atomicAdd((C + 0), 100);",
        "O[((int)((unsigned int)(2) + (unsigned int)(atomicAdd((C + 1), 1))))] = seq_v3;",
    ]
    got = [ln for ln in lines if ln.startswith(("const int seq_v", "O["))]
    assert len(got) == len(want) and all(g.startswith(w) for g, w in zip(got, want)), got
    # one access per statement is left alone: the last atomic reads C[0] as its argument
    assert "atomicAdd((C + 1), C[0]);" in body


def test_statements_with_reads_only_or_one_effect_are_unchanged():
    text = """
@T.function
def g(A: T.Tensor((8,), T.float32), B: T.Tensor((8,), T.int32)):
    with T.device_entry(1, 1, 1, 8, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        tx: T.let[T.int32] = T.cuda.thread_idx("x")
        A[tx] = A[tx] + A[(tx + 1) % 8] * 2.0
        T.cuda.atomic_add(T.address_of(B[tx]), B[(tx + 1) % 8] + 1)
"""
    g = tirx.loads(text)
    assert sequence_effects(g) is g
    assert SequenceEffects()(g) is g


def test_the_pass_is_registered_and_keeps_the_text_loadable(tmp_path):
    f = _kernel(tmp_path)
    g = build_pipeline("sequence-effects")(f)
    assert g is not f
    assert tirx.structural_equal(tirx.loads(tirx.dumps(g)), g)


class _SwapCommutative(Mutator):
    """Swap the operands of integer +, *, &, |, ^ and float +, *: the same value, the other
    evaluation order in the interpreter."""

    def _swap(self, e):
        e = self.generic_visit(e)
        return type(e)(e.b, e.a, e.ty)

    def visit_Add(self, e):
        return self._swap(e)

    def visit_Mul(self, e):
        return self._swap(e)

    def _int_swap(self, e):
        return self._swap(e) if e.ty.is_int else self.generic_visit(e)

    visit_BitAnd = visit_BitOr = visit_BitXor = _int_swap


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
@given(runnable_kernels())
def test_sequenced_kernels_mean_the_same_in_either_operand_order(r):
    """The property C needs: after the pass a statement's result no longer depends on the
    order its operands are evaluated in (reversed here for every commutative operation), and
    the pass itself changes nothing the interpreter sees."""
    ref = r.run()
    g = sequence_effects(r.func)
    r.assert_same(ref, r.run(g), "sequenced: ")
    r.assert_same(ref, r.run(_SwapCommutative().visit(g)), "sequenced, operands swapped: ")


def test_a_swap_without_the_pass_can_change_the_result(tmp_path):
    """The check above can fail: the unsequenced kernel gives another result with its
    operands swapped (the order C would be free to pick)."""
    f = _kernel(tmp_path)
    outs = []
    for fn in (f, _SwapCommutative().visit(f)):
        c, o = np.zeros(2, np.int32), np.zeros(4, np.int32)
        tirx.compile(fn, target="interp")(c, o)
        outs.append(o.tolist())
    assert outs[0] != outs[1]


def test_an_element_argument_of_an_op_with_effects_stays_in_place():
    """An op with effects may write an element it is given (an asm ``"+f"`` register, as
    ``T.cuda.wgmma_noop_barrier(acc[0])``): such an argument is never bound to a copy; its
    indices are still sequenced."""
    text = """
@T.function
def g(A: T.Tensor((8,), T.float32), C: T.Tensor((2,), T.int32)):
    with T.device_entry(1, 1, 1, 1, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        acc = T.alloc_tensor(ty_args=[T.Tensor((4,), T.float32, scope="local")])
        T.cuda.wgmma_noop_barrier(acc[C[0] % 4])
        T.cuda.wgmma_noop_barrier(acc[T.cuda.atomic_add(T.address_of(C[1]), 1) % 4 + C[0] % 4 - C[0] % 4])
"""
    g = tirx.loads(text)
    h = sequence_effects(g)
    out = tirx.dumps(h)
    assert "T.cuda.wgmma_noop_barrier(acc[C[0] % 4])" in out  # one access: unchanged
    # the index's atomic runs before its reads of C[0]; the element stays the asm's operand
    assert "seq_v1: T.let[T.int32] = T.cuda.atomic_add(T.address_of(C[1]), 1)" in out
    assert out.splitlines()[-1].strip() == "T.cuda.wgmma_noop_barrier(acc[seq_v1 % 4 + seq_v2 % 4 - C[0] % 4])"
    assert '"+f"(acc[tirx_floormod<int>(seq_v1, 4) +' in generate(g).text  # the element itself


def test_effects_inside_a_conditional_operand_are_sequenced_there():
    """A select's arm (or ``if_then_else``'s) runs only where its condition holds, so its
    accesses cannot be bound before the statement: they are bound inside the arm, as ``Let``
    expressions, and the arm means the same with its operands swapped (it did not: the
    atomic's old value and the element read beside it came in either order)."""
    src = """from tirx.script import tirx as T
@T.function
def f(C: T.Tensor((2,), T.int32), O: T.Tensor((4,), T.int32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=(1,), block=(1,)))
    O[0] = T.Select(O[3] == 0, T.cuda.atomic_add(C.ptr_to([0]), 1) + C[0] * 10, 5)
    O[1] = T.if_then_else(O[3] == 0, C[1] * 10 + T.cuda.atomic_add(C.ptr_to([1]), 1), 5)
    O[2] = T.Select(O[3] != 0, T.cuda.atomic_add(C.ptr_to([1]), 7) + C[1], 5)
"""
    f = load_module(src, "seq_lazy").f

    def run(fn):
        c, o = np.zeros(2, np.int32), np.zeros(4, np.int32)
        tirx.compile(fn, target="interp")(c, o)
        return o.tolist(), c.tolist()

    want = ([10, 0, 5, 0], [1, 1])  # the arm not taken (O[2]) has no effect
    assert run(f) == want
    assert run(_SwapCommutative().visit(f)) != want  # unsequenced: the order shows
    g = sequence_effects(f)
    assert run(g) == want and run(_SwapCommutative().visit(g)) == want
    assert tirx.structural_equal(tirx.loads(tirx.dumps(g)), g)
    body = generate(f).text.split("__global__", 1)[1]
    assert "? [&]() { const int seq_v1 = atomicAdd((C + 0), 1); return " in body, body
    assert "{ const int seq_v2 = C[1]; return " in body, body
