"""Issue #12, interpreter items: loops and grids past their budget stop with a LimitError
naming the source line (item 11), and global write races with a uniform index are reported
with the source line (item 14)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tirx
import tirx.interp as ti
from tirx.ir import TensorType
from tirx.ir.op import call
from tirx.ir.types import PrimType, int32
from tirx.script import tirx as T
from tirx.surface.builder import IRBuilder, launch_args

HERE = os.path.basename(__file__)


def _line(text: str) -> int:
    """The line number of ``text`` in this file (spans name it)."""
    with open(__file__) as f:
        for k, ln in enumerate(f, 1):
            if text in ln:
                return k
    raise AssertionError(text)


# ----------------------------------------------------------------------------- item 11
@T.function
def huge_uniform_loop(A: T.Tensor((1,), "int64")):
    for _i in range(T.int64(10**12)):  # huge-loop
        A[0] = A[0] + 1


@T.function
def huge_loop_with_break(A: T.Tensor((1,), "int64")):
    for _i in range(T.int64(10**12)):  # huge-break-loop
        if A[0] < 0:
            break
        A[0] = A[0] + 1


@T.function
def huge_device_loop(A: T.Tensor((128,), "int64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    t = T.cuda.thread_idx("x")
    for _i in range(T.int64(10**12)):  # huge-device-loop
        A[t] = A[t] + 1


@T.function
def huge_grid(A: T.Tensor((1,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=(65536, 32768), block=1))  # huge-grid
    if T.cuda.block_idx("x") == 0 and T.cuda.block_idx("y") == 0:
        A[0] = 1


@T.function
def nested_loops(A: T.Tensor((1,), "int64")):
    for _i in range(3000):
        for _j in range(3000):  # nested-inner
            A[0] = A[0] + 1


@T.function
def endless_while(A: T.Tensor((1,), "int32")):
    while A[0] >= 0:  # endless-while
        A[0] = A[0] + 0


def test_uniform_loop_of_10_12_iterations_is_refused_at_once():
    with pytest.raises(ti.LimitError, match=rf"for loop over _i at .*{HERE}:{_line('# huge-loop')}:\d+ .*"):
        ti.compile(huge_uniform_loop)(np.zeros(1, np.int64))
    with pytest.raises(
        ti.LimitError, match=r"10{12} iterations, past max_loop_iters=10000000.*max_loop_iters=\.\.\."
    ):
        ti.compile(huge_uniform_loop)(np.zeros(1, np.int64))


def test_raising_max_loop_iters_leaves_the_total_budget():
    k = tirx.compile(huge_uniform_loop, target="interp", max_loop_iters=10**13)
    with pytest.raises(
        ti.LimitError, match=rf"{HERE}:{_line('# huge-loop')}.*max_steps=2147483648.*max_steps=\.\.\."
    ):
        k(np.zeros(1, np.int64))


def test_uniform_loop_on_the_device_is_refused_at_once():
    with pytest.raises(ti.LimitError, match=rf"{HERE}:{_line('# huge-device-loop')}"):
        ti.compile(huge_device_loop)(np.zeros(128, np.int64))


def test_loop_that_may_break_counts_its_iterations():
    A = np.zeros(1, np.int64)
    with pytest.raises(ti.LimitError, match=rf"for loop over _i at .*{HERE}:{_line('# huge-break-loop')}"):
        ti.compile(huge_loop_with_break, max_loop_iters=1000)(A)
    assert A[0] == 1000  # it ran up to the limit, then stopped
    A[0] = -1
    ti.compile(huge_loop_with_break, max_loop_iters=1000)(A)  # breaks at once: fine
    with pytest.raises(ti.LimitError, match=r"iteration 49 of 10{12}\) .*max_steps=50000 \(49200 used"):
        ti.compile(huge_loop_with_break, max_steps=50_000)(np.zeros(1, np.int64))


def test_huge_grid_is_refused_before_any_block_runs():
    A = np.zeros(1, np.int32)
    with pytest.raises(
        ti.LimitError, match=rf"launch at .*{HERE}:{_line('# huge-grid')}.* 2147483648 blocks x 1 threads"
    ):
        ti.compile(huge_grid)(A)
    assert A[0] == 0


def test_nested_loops_share_one_budget():
    with pytest.raises(
        ti.LimitError, match=rf"for loop over _j at .*{HERE}:{_line('# nested-inner')}.*max_steps=10000000"
    ):
        ti.compile(nested_loops, max_steps=10**7)(np.zeros(1, np.int64))


def test_endless_while_names_its_line():
    with pytest.raises(
        ti.LimitError, match=rf"while loop at .*{HERE}:{_line('# endless-while')}.*max_loop_iters=100 "
    ):
        ti.compile(endless_while, max_loop_iters=100)(np.zeros(1, np.int32))


@pytest.mark.parametrize("opt", ["max_steps", "max_loop_iters"])
@pytest.mark.parametrize("bad", [0, -5, 1.5, "10", True])
def test_limits_must_be_positive_integers(opt, bad):
    with pytest.raises(ValueError, match=opt):
        ti.compile(endless_while, **{opt: bad})


_HANG_SCRIPT = """
import numpy as np, sys
sys.path.insert(0, {tests!r})
import tirx.interp as ti
from test_trust_interp import huge_uniform_loop, huge_grid
for f, a in ((huge_uniform_loop, np.zeros(1, np.int64)), (huge_grid, np.zeros(1, np.int32))):
    try:
        ti.compile(f)(a)
    except ti.LimitError as e:
        print("LimitError:", e)
"""


def test_no_hang_in_a_fresh_process():
    """Hang detector: with the default limits both end (the original code never did)."""
    code = _HANG_SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__)))
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the interpreter hung on a 10**12-iteration loop or a 2**31-block grid")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("LimitError:") == 2, r.stdout


def _counting_kernel(per_thread: bool):
    """A[t] += 1 for i in range(n); the extent is uniform or (per_thread) a per-lane value."""
    b = IRBuilder()
    with b, b.function("count"):
        A = b.param("A", TensorType((4,), int32, "global"))
        n = b.param("n", int32)
        with b.device_entry(*launch_args(1, 4)):
            t = b.bind("t", call("cuda.thread_idx", "x"))
            ext = n - (t & 0) if per_thread else n
            with b.for_("i", 0, ext):
                A[t] = A[t] + 1
    return b.get()


@given(n=st.integers(0, 40), limit=st.integers(1, 40), per_thread=st.booleans())
def test_loop_limit_is_exact(n, limit, per_thread):
    """A loop of n iterations runs iff n <= max_loop_iters, in both loop paths."""
    k = ti.compile(_counting_kernel(per_thread), max_loop_iters=limit)
    A = np.zeros(4, np.int32)
    if n <= limit:
        k(A, n)
        assert np.array_equal(A, np.full(4, n))
    else:
        with pytest.raises(ti.LimitError, match=f"max_loop_iters={limit}"):
            k(A, n)


def test_default_limits_leave_ordinary_kernels_alone():
    big = TensorType((1 << 20,), PrimType("float32"), "global")
    b = IRBuilder()
    with b, b.function("add1"):
        A = b.param("A", big)
        with b.device_entry(*launch_args(4096, 256)):
            i = b.bind("i", call("cuda.block_idx", "x") * 256 + call("cuda.thread_idx", "x"))
            with b.for_("j", 0, 4):
                A[i] = A[i] + 1.0
    A = np.zeros(1 << 20, np.float32)
    ti.compile(b.get())(A)
    assert (A == 4).all()


# ----------------------------------------------------------------------------- item 14
@T.function
def uniform_index_race(A: T.Tensor((4,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    A[0] = T.cuda.thread_idx("x")  # uniform-race


@T.function
def uniform_index_same_value(A: T.Tensor((4,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    A[0] = 7


@T.function
def uniform_index_guarded(A: T.Tensor((4,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    t = T.cuda.thread_idx("x")
    if t == 5:
        A[0] = t


@T.function
def uniform_index_across_blocks(A: T.Tensor((4,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=4, block=1))
    A[1] = T.cuda.block_idx("x")  # block-race


@T.function
def uniform_vector_store(A: T.Tensor((8,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    A[T.Ramp(0, 1, 4)] = T.Broadcast(T.cuda.thread_idx("x"), 4)  # vector-race


@T.function
def uniform_atomics(A: T.Tensor((4,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    T.cuda.atomic_add(T.address_of(A[0]), 1)


@T.function
def uniform_shared_write(A: T.Tensor((128,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    t = T.cuda.thread_idx("x")
    S = T.alloc_buffer((4,), "int32", scope="shared")
    S[0] = t  # shared-race
    T.cuda.cta_sync()
    A[t] = S[0]


@T.function
def uniform_shared_read_after_write(A: T.Tensor((128,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    t = T.cuda.thread_idx("x")
    S = T.alloc_buffer((4,), "int32", scope="shared")
    if t == 0:
        S[0] = 1
    A[t] = S[0]  # shared-read


def test_global_write_race_with_a_uniform_index_is_reported():
    with pytest.raises(
        ti.RaceError,
        match=rf"global buffer A at element 0 .*different values by block \(0, 0, 0\), thread \(0, 0, 0\) and "
        rf"block \(0, 0, 0\), thread \(1, 0, 0\) in one statement at .*{HERE}:{_line('# uniform-race')}:",
    ):
        ti.compile(uniform_index_race)(np.zeros(4, np.int32))
    A = np.zeros(4, np.int32)
    ti.compile(uniform_index_race, check_races=False)(A)  # the switch still turns it off


def test_uniform_index_patterns_that_are_not_races():
    A = np.zeros(4, np.int32)
    ti.compile(uniform_index_same_value)(A)  # one value from every thread: benign in global memory
    assert A[0] == 7
    ti.compile(uniform_index_guarded)(A)
    assert A[0] == 5
    ti.compile(uniform_atomics)(A)  # atomics never race
    assert A[0] == 5 + 128


def test_uniform_index_races_across_blocks_and_vector_lanes():
    with pytest.raises(
        ti.RaceError, match=rf"element 1 .*block \(0, 0, 0\).*block \(1, 0, 0\).*:{_line('# block-race')}:"
    ):
        ti.compile(uniform_index_across_blocks)(np.zeros(4, np.int32))
    with pytest.raises(
        ti.RaceError,
        match=rf"element 0 .*thread \(0, 0, 0\).*thread \(1, 0, 0\).*:{_line('# vector-race')}:",
    ):
        ti.compile(uniform_vector_store)(np.zeros(8, np.int32))


def test_shared_memory_uniform_index_races_name_the_line():
    with pytest.raises(
        ti.RaceError,
        match=rf"write-write race: shared buffer S at index \(0,\).*:{_line('# shared-race')}:",
    ):
        ti.compile(uniform_shared_write)(np.zeros(128, np.int32))
    with pytest.raises(ti.RaceError, match=rf"missing barrier: shared buffer S .*:{_line('# shared-read')}:"):
        ti.compile(uniform_shared_read_after_write)(np.zeros(128, np.int32))


def _store_kernel(uniform_index: bool, uniform_value: bool):
    """``if ACT[t]: O[IDX[t] or j] = VAL[t] or v`` over one block of 8 threads."""
    b = IRBuilder()
    with b, b.function("store"):
        O = b.param("O", TensorType((4,), int32, "global"))
        IDX = b.param("IDX", TensorType((8,), int32, "global"))
        VAL = b.param("VAL", TensorType((8,), int32, "global"))
        ACT = b.param("ACT", TensorType((8,), int32, "global"))
        j = b.param("j", int32)
        v = b.param("v", int32)
        with b.device_entry(*launch_args(1, 8)):
            t = b.bind("t", call("cuda.thread_idx", "x"))
            with b.if_(ACT[t].ne(0)):
                O[j if uniform_index else IDX[t]] = v if uniform_value else VAL[t]
    return b.get()


_KERNELS = {(ui, uv): ti.compile(_store_kernel(ui, uv)) for ui in (False, True) for uv in (False, True)}


@given(
    idx=st.lists(st.integers(0, 3), min_size=8, max_size=8),
    val=st.lists(st.integers(0, 2), min_size=8, max_size=8),
    act=st.lists(st.booleans(), min_size=8, max_size=8),
    j=st.integers(0, 3),
    v=st.integers(0, 2),
    uniform_index=st.booleans(),
    uniform_value=st.booleans(),
)
def test_global_race_iff_two_threads_write_different_values(
    idx, val, act, j, v, uniform_index, uniform_value
):
    """The model: a store races iff two active threads write one address with different values."""
    addrs = [j if uniform_index else i for i in idx]
    vals = [v if uniform_value else x for x in val]
    writes = [(a, x) for a, x, on in zip(addrs, vals, act) if on]
    race = any(a == b and x != y for a, x in writes for b, y in writes)
    k = _KERNELS[(uniform_index, uniform_value)]
    args = (np.array(idx, np.int32), np.array(val, np.int32), np.array(act, np.int32), j, v)
    O = np.full(4, -1, np.int32)
    if race:
        with pytest.raises(ti.RaceError, match="write-write race: global buffer O"):
            k(O, *args)
    else:
        k(O, *args)
        for a, x in writes:
            assert O[a] == x
