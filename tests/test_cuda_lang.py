"""TIRx's CUDA kernel helper classes in tirx (``tirx.backend.cuda.lang``): what they build and
how they refuse misuse. Parity with TIRx's helpers is pinned by the ``lang_*`` frontend golden
cases (tests/data/tirx_golden/frontend); these tests check behaviour: pool offsets and the
shared memory the launch reserves, stage/phase wrapping, the barrier instructions emitted."""

from __future__ import annotations

import pytest

import tirx
from tirx.backend.cuda import lang
from tirx.backend.cuda.lang import SMEMPool
from tirx.backend.cuda.lang.pipeline import TMABar
from tirx.ir import Call, DeclBuffer, DeviceEntry, IfThenElse, IntImm
from tirx.ir.visitor import post_order
from tirx.script import tirx as T


def _nodes(f, cls):
    return [n for n in post_order(f.body) if isinstance(n, cls)]


def _entry(f) -> DeviceEntry:
    (e,) = _nodes(f, DeviceEntry)
    return e


def _view_offsets(f) -> list:
    """The byte offset of each pool view in the pool's storage, in program order."""
    binds = {b.var: b.value for b in post_order(f.body) if type(b).__name__ == "Bind"}
    out = []
    for d in _nodes(f, DeclBuffer):
        v = binds.get(d.buffer.data)
        if isinstance(v, Call) and v.op.name == "ptr_byte_offset":
            out.append(v.args[1].value)
    return out


# ------------------------------------------------------------------ the package
def test_the_names_load_lazily_from_their_modules():
    assert set(lang.__all__) >= {"SMEMPool", "PipelineState", "MBarrier", "TMABar", "TCGen05Bar", "Pipeline"}
    assert lang.SMEMPool is SMEMPool and lang.TMABar is TMABar
    with pytest.raises(AttributeError, match="NoSuchHelper"):
        lang.NoSuchHelper  # noqa: B018


# ------------------------------------------------------------------ SMEMPool
POOLS: list = []  # the pools pool_kernel built
PTR_POOLS: list = []  # the pools pool_over_pointer built


@T.function
def pool_kernel(A: T.Tensor((32,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    pool = SMEMPool()
    POOLS.append(pool)
    a = pool.alloc((5,), "int8")  # 0..5
    b = pool.alloc((4,), "float32", align=16)  # 16..32
    c = pool.alloc((3,), "float4_e2m1fn")  # 32..34 (12 bits: 2 bytes)
    pool.move_base_to(8)
    d = pool.alloc((2,), "uint64", align=8)  # 8..24: shares bytes with b
    pool.commit()
    a[tx % 5] = T.int8(1)
    b[tx % 4] = A[tx]
    d[tx % 2] = T.uint64(tx)
    A[tx] = b[tx % 4] + T.float32(c[0])


def test_pool_places_views_and_records_the_high_water_mark():
    f = pool_kernel
    pool = POOLS[-1]
    assert (pool.offset, pool.max_offset) == (24, 34)
    offs = sorted(_view_offsets(f))
    assert offs == [0, 8, 16, 32]
    need = _entry(f).attrs["cuda.smem_required"]
    assert (need.value if isinstance(need, IntImm) else need) == 34


def test_the_launch_reserves_what_the_pool_needs(monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path))
    k = tirx.compile(pool_kernel, target="cuda -arch=sm_90a")
    assert k.smem_code == "34"
    assert "tirx_dyn_smem" in k.source


@T.function
def pool_reverse(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    pool = SMEMPool()
    xs = pool.alloc((32,), "float32")
    ks = pool.alloc((32,), "int32", align=128)
    pool.commit()
    tx = T.cuda.thread_idx("x")
    xs[tx] = A[tx]
    ks[tx] = tx * 3
    T.cuda.cta_sync()
    A[tx] = xs[31 - tx]
    B[tx] = ks[31 - tx]


def test_pool_views_run_on_the_interpreter():
    """The pool's zero-sized ``shared.dyn`` window holds what the launch gives (its
    ``cuda.smem_required``): the views at byte offsets into it are in bounds there."""
    import numpy as np

    a, b = np.arange(32, dtype=np.float32), np.zeros(32, np.int32)
    tirx.compile(pool_reverse, target="interp")(a, b)
    assert a.tolist() == list(range(31, -1, -1)) and b.tolist() == [3 * (31 - t) for t in range(32)]


@T.function
def pool_commit_size(A: T.Tensor((32,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    pool = SMEMPool()
    v = pool.alloc((8,), "float32")
    pool.commit(1000)
    pool.commit(70000)  # the last commit wins
    A[0] = v[0]


def test_commit_size_overrides_and_the_last_commit_wins():
    need = _entry(pool_commit_size).attrs["cuda.smem_required"]
    assert (need.value if isinstance(need, IntImm) else need) == 70000


@T.function
def pool_over_pointer(A: T.Tensor((32,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    raw = T.alloc_shared((64,), "uint8", align=16)
    pool = SMEMPool(raw.data)
    PTR_POOLS.append(pool)
    lo = pool.alloc((4,), "int32")
    hi = pool.alloc((4,), "int32", align=32)
    pool.commit()
    A[0] = lo[0] + hi[0]


def test_a_pool_over_a_pointer_views_it_and_records_nothing():
    f = pool_over_pointer
    assert "cuda.smem_required" not in _entry(f).attrs
    assert sorted(_view_offsets(f)) == [0, 32]
    assert PTR_POOLS[-1].max_offset == 0  # only an owning pool tracks its high-water mark


def _build(src: str, tmp_path, name: str = "f"):
    """A kernel from source text written to a file (the parser reads a kernel's source)."""
    p = tmp_path / "k.py"
    p.write_text(
        "from tirx.script import tirx as T\n"
        "from tirx.backend.cuda.lang import SMEMPool, MBarrier, TMABar, TCGen05Bar, Pipeline, PipelineState\n"
        + src
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"cuda_lang_{tmp_path.name}", p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def _kernel(body: str) -> str:
    lines = "\n".join("    " + ln for ln in body.strip().splitlines())
    return (
        "@T.function\n"
        "def f(A: T.Tensor((32,), 'float32')):\n"
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))\n" + lines + "\n"
    )


@pytest.mark.parametrize(
    "body, err, match",
    [
        ("pool = SMEMPool()\nv = pool.alloc((4,), 'float32')\npool.commit(8)", ValueError, "size=8"),
        ("pool = SMEMPool()\nv = pool.alloc((4,), 'float32', align=-16)", ValueError, "align"),
        ("pool = SMEMPool()\nv = pool.alloc((4,), 'float32', align=1.5)", TypeError, "align"),
        ("pool = SMEMPool()\nv = pool.alloc((4,), 'no_such_type')", TypeError, "dtype"),
        ("pool = SMEMPool()\nv = pool.alloc((4,), 'float32x4')", TypeError, "dtype"),
        ("pool = SMEMPool()\nv = pool.alloc((4.0,), 'float32')", TypeError, "shape"),
        ("pool = SMEMPool()\nv = pool.alloc((4,), 'float32', scope='local')", ValueError, "scope"),
        ("pool = SMEMPool()\npool.move_base_to(-4)", ValueError, "offset"),
        ("pool = SMEMPool(3)", TypeError, "ptr"),
        ("pool = SMEMPool()\nv = pool.alloc_tcgen05_mma_AB((128, 64))", NotImplementedError, "tcgen05"),
        ("pool = SMEMPool()\nb = MBarrier(pool, 0)", ValueError, "depth"),
        ("b = MBarrier('pool', 2)", TypeError, "pool"),
        ("pool = SMEMPool()\nb = MBarrier(pool, 2)\nb.init(0)", ValueError, "count"),
        ("pool = SMEMPool()\nb = MBarrier(pool, 2)\nb.arrive(0, count=-1)", ValueError, "count"),
        ("pool = SMEMPool()\nb = MBarrier(pool, 2)\nb.arrive(0, remote=-1)", ValueError, "remote"),
        (
            "pool = SMEMPool()\nb = MBarrier(pool, 2)\nr = b.remote_view(1)\nr.init(1)",
            ValueError,
            "remote_view",
        ),
        (
            "pool = SMEMPool()\nb = MBarrier(pool, 2)\nr = b.remote_view(1)\nr.wait(0, 0)",
            ValueError,
            "remote_view",
        ),
        (
            "pool = SMEMPool()\nb = TMABar(pool, 2)\nr = b.remote_view(1)\nr.arrive(0, 8, remote=0)",
            ValueError,
            "remote",
        ),
        ("pool = SMEMPool()\nb = TMABar(pool, 2)\nb.arrive(0, 'x')", TypeError, "tx_count"),
        ("pool = SMEMPool()\nb = TCGen05Bar(pool, 2)\nb.arrive(0, cta_group=3)", ValueError, "cta_group"),
        ("pool = SMEMPool()\np = Pipeline(pool, 2, full='tmaa', empty='mbar')", ValueError, "full"),
        ("pool = SMEMPool()\np = Pipeline(pool, 2, full='tma', empty=1)", ValueError, "empty"),
        ("s = PipelineState(0)", ValueError, "depth"),
        ("s = PipelineState('2')", TypeError, "depth"),
    ],
)
def test_misuse_is_refused_naming_the_argument(body, err, match, tmp_path):
    with pytest.raises((err, tirx.DiagnosticError), match=match) as info:
        _build(_kernel(body), tmp_path)
    cause = info.value if isinstance(info.value, err) else info.value.__cause__
    assert isinstance(cause, err), repr(info.value)


def test_commit_outside_a_device_entry_is_refused(tmp_path):
    src = (
        "@T.function\n"
        "def f(A: T.Tensor((32,), 'float32')):\n"
        "    pool = SMEMPool()\n"
        "    v = pool.alloc((4,), 'float32')\n"
        "    pool.commit()\n"
    )
    with pytest.raises((ValueError, tirx.DiagnosticError), match="device_entry"):
        _build(src, tmp_path)


# ------------------------------------------------------------------ PipelineState
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_pipeline_state_wraps_and_flips_the_phase(depth, tmp_path):
    """Run ``advance`` 7 times on the CPU interpreter: stage counts modulo depth, the phase
    flips at each wrap."""
    import numpy as np

    import tirx.interp as ti

    src = (
        "@T.function\n"
        "def f(S: T.Tensor((8,), 'int32'), P: T.Tensor((8,), 'int32')):\n"
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))\n"
        f"    st = PipelineState({depth}, 1)\n"
        "    for i in range(8):\n"
        "        S[i] = st.stage\n"
        "        P[i] = st.phase\n"
        "        st.advance()\n"
    )
    f = _build(src, tmp_path)
    s = np.zeros(8, "int32")
    p = np.zeros(8, "int32")
    ti.compile(f)(s, p)
    assert s.tolist() == [i % depth for i in range(8)]
    assert p.tolist() == [1 ^ ((i // depth) & 1) for i in range(8)]


# ------------------------------------------------------------------ barriers
def _calls(f, op: str) -> list:
    return [c for c in _nodes(f, Call) if c.op.name == op]


def _strings(c: Call) -> list:
    return [a.value for a in c.args if type(a).__name__ == "StringImm"]


def test_barrier_slots_come_from_the_pool_eight_byte_aligned(tmp_path):
    f = _build(
        _kernel(
            "pool = SMEMPool()\n"
            "x = pool.alloc((3,), 'int8')\n"
            "p = Pipeline(pool, 3, full='tma', empty='mbar', init_full=2, init_empty=32)\n"
            "pool.commit()\n"
        ),
        tmp_path,
    )
    assert sorted(_view_offsets(f)) == [0, 8, 32]
    need = _entry(f).attrs["cuda.smem_required"]
    assert (need.value if isinstance(need, IntImm) else need) == 56
    inits = [c for c in _calls(f, "ptx.mbarrier") if "init" in _strings(c)]
    assert [c.args[1].value for c in inits] == [2, 32]
    # each init runs under the leader (thread rank 0 by default) over every slot
    assert len(_nodes(f, IfThenElse)) == 2


def test_arrive_forms(tmp_path):
    f = _build(
        _kernel(
            "tx = T.cuda.thread_idx('x')\n"
            "pool = SMEMPool()\n"
            "b = MBarrier(pool, 2)\n"
            "t = TMABar(pool, 2)\n"
            "st = PipelineState(2, 0)\n"
            "b.arrive(st.stage)\n"
            "b.arrive(1, count=4, pred=tx == 0)\n"
            "b.arrive(0, remote=1, count=2)\n"
            "t.arrive(st.stage, 256)\n"
            "t.arrive(0)\n"
            "t.arrive(1, 64, remote=tx % 2, pred=tx < 2)\n"
        ),
        tmp_path,
    )
    arrives = [c for c in _calls(f, "ptx.mbarrier") if "arrive" in _strings(c)]
    forms = [(tuple(s for s in _strings(c) if s), len(c.args) - len(_strings(c))) for c in arrives]
    assert forms == [
        (("arrive", "shared", "b64"), 2),  # addr, count 1
        (("arrive", "shared", "b64", "pred"), 3),  # addr, count, guard
        (("arrive", "shared::cluster", "b64"), 2),  # mapped addr, count
        (("arrive", "expect_tx", "shared", "b64"), 2),
        (("arrive", "shared", "b64"), 2),
        (("arrive", "expect_tx", "shared::cluster", "b64", "pred"), 3),
    ]
    assert len(_calls(f, "ptx.mapa")) == 2  # one mapa per remote arrive


def test_tmabar_local_arrive_keeps_its_predicate(tmp_path):
    """TIRx's TMABar drops ``pred`` on a local arrive; tirx predicates the instruction."""
    f = _build(
        _kernel(
            "tx = T.cuda.thread_idx('x')\npool = SMEMPool()\nt = TMABar(pool, 1)\nt.arrive(0, 128, pred=tx == 0)\n"
        ),
        tmp_path,
    )
    (c,) = [c for c in _calls(f, "ptx.mbarrier") if "arrive" in _strings(c)]
    assert _strings(c)[-1] == "pred"


def test_remote_view_arrives_in_the_cluster_without_another_mapa(tmp_path):
    f = _build(
        _kernel(
            "pool = SMEMPool()\nb = MBarrier(pool, 4)\nr = b.remote_view(1)\nr.arrive(2)\nr.arrive(3, count=2)\n"
        ),
        tmp_path,
    )
    assert len(_calls(f, "ptx.mapa")) == 1
    arrives = [c for c in _calls(f, "ptx.mbarrier") if "arrive" in _strings(c)]
    assert all("shared::cluster" in _strings(c) for c in arrives) and len(arrives) == 2
    (view,) = [d.buffer for d in _nodes(f, DeclBuffer) if d.buffer.name == "remote_mbar"]
    assert view.scope == "shared" and [int(x) for x in view.shape] == [4]


def test_tcgen05_commit_forms(tmp_path):
    f = _build(
        _kernel(
            "tx = T.cuda.thread_idx('x')\n"
            "pool = SMEMPool()\n"
            "b = TCGen05Bar(pool, 2)\n"
            "b.arrive(0)\n"
            "b.arrive(1, cta_group=2, cta_mask=0b10)\n"
            "b.arrive(1, cta_group=2, cta_mask=0b11, pred=tx == 0)\n"
        ),
        tmp_path,
    )
    text = tirx.dumps(f)
    assert text.count('"multicast::cluster"') == 1
    assert text.count("T.ptx.tcgen05(") == 3


# ------------------------------------------------------------------ tile schedulers
def _schedule(tmp_path, ctor: str, ncta: int, extra_params: str = "", extra_args: tuple = ()) -> list:
    """Run a persistent loop of ``ctor`` on the interpreter: per CTA, the (m, n) tiles in order."""
    import numpy as np

    import tirx.interp as ti

    src = (
        "from tirx.backend.cuda.lang import ClusterPersistentScheduler2D\n"
        "@T.function\n"
        f"def f(Out: T.Tensor(({ncta}, 64, 2), 'int32'){extra_params}):\n"
        f"    T.device_entry(launch=T.cuda.LaunchConfig(grid={ncta}, block=1))\n"
        "    cta = T.cuda.block_idx('x')\n"
        f"    s = {ctor}\n"
        "    s.init(cta)\n"
        "    while s.valid():\n"
        "        Out[cta, s.tile_count, 0] = s.m_idx\n"
        "        Out[cta, s.tile_count, 1] = s.n_idx\n"
        "        s.next_tile()\n"
    )
    out = np.full((ncta, 64, 2), -1, "int32")
    ti.compile(_build(src, tmp_path))(out, *extra_args)
    return [[(int(m), int(n)) for m, n in out[c] if m >= 0] for c in range(ncta)]


def _cover(per_cta: list, rows: int, cols: int) -> None:
    seen = [(int(m), int(n)) for ts in per_cta for m, n in ts]
    assert sorted(seen) == [(m, n) for m in range(rows) for n in range(cols)]


@pytest.mark.parametrize(
    "serpentine, rows, cols, group",
    [
        *[(False, *g) for g in [(4, 4, 2), (7, 5, 3), (6, 8, 4), (2, 3, 4)]],
        # serpentine: grids with leftover columns or leftover rows, not both (below)
        *[(True, *g) for g in [(4, 4, 2), (6, 8, 4), (2, 3, 4), (6, 7, 3)]],
    ],
)
def test_cluster_scheduler_visits_every_tile_once(tmp_path, serpentine, rows, cols, group):
    ctor = (
        f"ClusterPersistentScheduler2D('s', num_m_tiles={rows}, num_n_tiles={cols}, num_clusters=3, "
        f"l2_group_size={group}, serpentine={serpentine})"
    )
    per_cta = _schedule(tmp_path, ctor, 3)
    _cover(per_cta, rows, cols)
    # cluster c takes work items c, c + 3, ...: interleave them back into work order
    order = [per_cta[i % 3][i // 3] for i in range(rows * cols)]
    if serpentine:
        # the first block: row-major; the second block of the first column is the one below
        assert order[: group * group] == [(r, c) for r in range(group) for c in range(group)] or rows < group
        if rows >= 2 * group and cols >= group:
            assert order[group * group] == (group, 0)
    else:
        # the first group of rows, column by column
        g = min(group, rows) if rows < group else group
        assert order[:g] == [(r, 0) for r in range(g)]


def test_serpentine_with_leftover_rows_and_columns_loses_the_rows_under_the_blocks(tmp_path):
    """TIRx's serpentine order (kept for IR parity): when the grid has both leftover columns
    (right of the whole blocks) and leftover rows (below them), the work items after the
    right-hand strip map to tile (0, 0), so the leftover rows under the blocks are never
    visited. docs/cuda.md says so; a kernel avoids it with a grid of whole blocks in one
    direction."""
    ctor = "ClusterPersistentScheduler2D('s', num_m_tiles=7, num_n_tiles=5, num_clusters=1, l2_group_size=3, serpentine=True)"
    (order,) = _schedule(tmp_path, ctor, 1)
    assert len(order) == 35
    missing = {(m, n) for m in range(7) for n in range(5)} - set(order)
    assert missing == {(6, 0), (6, 1), (6, 2)}
    assert order.count((0, 0)) == 4


def test_serpentine_walks_back_up_the_next_column_of_blocks(tmp_path):
    ctor = "ClusterPersistentScheduler2D('s', num_m_tiles=4, num_n_tiles=4, num_clusters=1, l2_group_size=2, serpentine=True)"
    (order,) = _schedule(tmp_path, ctor, 1)
    blocks = [order[i][0] // 2 * 2 + order[i][1] // 2 for i in range(0, 16, 4)]  # block id per 4 tiles
    # block ids: row-block * 2 + col-block; down column 0 (0, 2), then up column 1 (3, 1)
    assert blocks == [0, 2, 3, 1]


def test_cluster_subtiles_and_a_runtime_row_count(tmp_path):
    import numpy as np

    ctor = (
        "ClusterPersistentScheduler2D('s', num_m_tiles=mt, num_n_tiles=3, num_clusters=2, l2_group_size=2, "
        "cluster_m=2)"
    )
    per_cta = _schedule(tmp_path, ctor, 2, ", mt: T.int32", (np.int32(6),))
    _cover(per_cta, 6, 3)
    order = [per_cta[i % 2][i // 2] for i in range(18)]
    # work items 2k and 2k+1 are the two row halves of one cluster tile
    assert all(
        order[2 * k][0] + 1 == order[2 * k + 1][0] and order[2 * k][1] == order[2 * k + 1][1]
        for k in range(9)
    )


def test_flash_attention_schedulers_cover_every_item(tmp_path):
    import numpy as np

    import tirx.interp as ti

    src = (
        "from tirx.backend.cuda.lang import FlashAttentionLinearScheduler, FlashAttentionLPTScheduler\n"
        "@T.function\n"
        "def f(Out: T.Tensor((2, 30, 3), 'int32'), Once: T.Tensor((6, 2), 'int32')):\n"
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=6, block=1))\n"
        "    cta = T.cuda.block_idx('x')\n"
        "    a = FlashAttentionLinearScheduler('a', 2, 3, 5, 6)\n"
        "    a.init(cta)\n"
        "    while a.valid():\n"
        "        Out[0, a.linear_idx, 0] = a.batch_idx\n"
        "        Out[0, a.linear_idx, 1] = a.head_idx\n"
        "        Out[0, a.linear_idx, 2] = a.m_block_idx\n"
        "        a.next_tile()\n"
        "    b = FlashAttentionLPTScheduler('b', 2, 3, 5, 4, num_ctas=6)\n"
        "    b.init(cta)\n"
        "    while b.valid():\n"
        "        Out[1, b.linear_idx, 0] = b.batch_idx\n"
        "        Out[1, b.linear_idx, 1] = b.head_idx\n"
        "        Out[1, b.linear_idx, 2] = b.m_block_idx\n"
        "        b.next_tile()\n"
        "    c = FlashAttentionLPTScheduler('c', 1, 2, 3, 2)\n"
        "    c.init(cta)\n"
        "    Once[cta, 0] = c.m_block_idx\n"
        "    c.next_tile()\n"
        "    Once[cta, 1] = T.Cast('int32', c.valid())\n"
    )
    out = np.full((2, 30, 3), -1, "int32")
    once = np.zeros((6, 2), "int32")
    ti.compile(_build(src, tmp_path))(out, once)
    items = sorted((b, h, m) for b in range(2) for h in range(3) for m in range(5))
    assert out[0].tolist() == [list(t) for t in items]  # linear: row-major
    assert sorted(tuple(t) for t in out[1].tolist()) == items  # LPT: a permutation
    assert out[1, 0, 2] == 4  # the longest query block (the last) first
    assert once[:, 0].tolist() == [2, 2, 1, 1, 0, 0]  # one item per CTA, last query block first
    assert once[:, 1].tolist() == [0] * 6  # and then no more


def test_a_tcgen05_barrier_kernel_compiles_for_blackwell(monkeypatch, tmp_path):
    """The golden case lang_tcgen05_bar (TIRx records sm_90a for it, where NVRTC refuses
    tcgen05): tirx's build compiles for sm_100a."""
    import importlib.util
    import pathlib

    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path))
    path = pathlib.Path(__file__).parent / "data" / "tirx_golden" / "frontend" / "lang_tcgen05_bar.py"
    spec = importlib.util.spec_from_file_location("lang_tcgen05_bar_case", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    k = tirx.compile(mod.f, target="cuda -arch=sm_100a")
    assert k.cubin and "tcgen05.commit.cta_group::2" in k.source


def test_a_subclass_can_restrict_the_order_through_tirx_extension_points(tmp_path):
    """TIRx's way to change a scheduler's order: override ``update_current_m_n_idx`` and call
    ``_update_group_major(tile_linear, set_tile_coords)`` with a ``set_tile_coords`` of one's
    own (held-out round 16: 72 kernels did, and tirx had no such method)."""
    import numpy as np

    import tirx.interp as ti

    src = (
        "from tirx.backend.cuda.lang import ClusterPersistentScheduler2D\n"
        "class Transposed(ClusterPersistentScheduler2D):\n"
        "    @T.inline\n"
        "    def update_current_m_n_idx(self, work_idx):\n"
        "        @T.inline\n"
        "        def set_tile_coords(tile_row, tile_col):\n"
        "            self.m_idx = tile_col\n"
        "            self.n_idx = tile_row\n"
        "        self._update_group_major(work_idx, set_tile_coords)\n"
        "@T.function\n"
        "def f(Out: T.Tensor((2, 64, 2), 'int32')):\n"
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=1))\n"
        "    cta = T.cuda.block_idx('x')\n"
        "    s = Transposed('s', num_m_tiles=5, num_n_tiles=3, num_clusters=2, l2_group_size=2)\n"
        "    s.init(cta)\n"
        "    while s.valid():\n"
        "        Out[cta, s.tile_count, 0] = s.m_idx\n"
        "        Out[cta, s.tile_count, 1] = s.n_idx\n"
        "        s.next_tile()\n"
    )
    out = np.full((2, 64, 2), -1, "int32")
    ti.compile(_build(src, tmp_path))(out)
    seen = sorted((int(m), int(n)) for c in range(2) for m, n in out[c] if m >= 0)
    # the group-major walk over the 5 x 3 grid, each tile handed over transposed
    assert seen == sorted((n, m) for m in range(5) for n in range(3))
