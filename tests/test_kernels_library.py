"""The kernel library (tirx.kernels), without a GPU: the any-shape GEMM script compiles to a
clean sm_90a cubin for every dtype and tile class the host picks (no spills, no local memory),
round-trips as text, the tile choice depends only on the shape's class (so shapes share compiled
kernels), and bad arguments get errors that name them."""

from __future__ import annotations

import re

import pytest
from hopper_util import (  # noqa: F401 (no_disk_cache: autouse)
    ARCH,
    assert_round_trips,
    compile_clean,
    fake_tma_driver,
    needs_nvrtc,
    no_disk_cache,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
import tirx.kernels as K
from tirx.kernels import gemm as MM
from tirx.kernels.hopper import matmul as HM
from tirx.runtime.bounded import Bounded


def test_public_names_resolve_lazily():
    assert set(K.__all__) <= set(dir(K))
    assert callable(K.matmul) and callable(K.attention) and callable(K.rms_norm)
    with pytest.raises(AttributeError, match="no attribute 'matmull'"):
        K.matmull  # noqa: B018


@given(
    M=st.integers(1, 1 << 17),
    N=st.integers(1, 1 << 17),
    K=st.integers(1, 1 << 16),
    dtype=st.sampled_from(["float16", "bfloat16", "float8_e4m3fn"]),
)
@settings(max_examples=300, deadline=None)
def test_config_is_a_valid_tile_set_chosen_by_shape_class(M, N, K, dtype):
    cfg = MM.config(M, N, K, dtype)
    assert cfg["BM"] == (64 if M <= 64 else 128)
    assert cfg["BN"] in (64, 128, 192, 256)
    assert cfg["EPI"] == ("tma" if N % 8 == 0 else "direct")
    # K enters through its k-block count and its row pitch only: a pitch of 16 modulo 32 bytes
    # (TMA's slow rows) takes the cp.async loads, and every other K of a count shares the kernel
    bk = 128 if dtype.startswith("float8") else 64
    esz = 1 if dtype.startswith("float8") else 2
    assert cfg.get("LOADER", "tma") == ("cp" if MM.CP_LOADS and K * esz % 32 else "tma")
    assert MM.config(M, N, -(-K // bk) * bk, dtype) == {k: v for k, v in cfg.items() if k != "LOADER"}
    if M > 64:  # the model's fastest width: none is modelled faster
        best = MM.model_us(M, N, K, dtype, cfg["BN"], 1)
        assert all(MM.model_us(M, N, K, dtype, w, 1) >= best for w in (64, 128, 192, 256))
    if dtype.startswith("float8"):  # block scales: a tile in one 128-column block of B's scales
        blk = MM.config(M, N, K, dtype, scales="block")
        assert blk == {**cfg, "BN": min(cfg["BN"], 128), "STAGES": blk["STAGES"], "SCALES": "block"}
        assert blk["BN"] in (64, 128) and blk["STAGES"] >= cfg["STAGES"]
    tb = MM.config(M, N, K, dtype, trans_b=True)
    assert tb["TRANS_B"] and tb["BN"] != 192  # N-major B: 64-column boxes, BN 64 / 128 / 256
    assert "LOADER" not in tb  # (an N-major B is read by TMA at any pitch)
    if cfg["BN"] != 192:
        assert tb == {**{k: v for k, v in cfg.items() if k != "LOADER"}, "TRANS_B": True}
    # shared memory of the stage ring (+ C staging) fits: the static asserts would refuse it
    smem = cfg["STAGES"] * (cfg["BM"] + cfg["BN"]) * 128 + (cfg["BM"] // 64) * 16384 + 1024
    assert smem <= 232448


@pytest.mark.parametrize(
    "M,N,K,bn,split",
    [
        (65536, 128, 4096, 128, 1),  # measured 1.03 of cuBLAS against 0.68 with 128 x 256 tiles
        (200, 12288, 4096, 192, 1),  # 0.96 against 0.65 with 128 x 128 (one wave of 128 tiles)
        (1024, 1024, 65536, 256, 4),  # 0.88 against 0.59 with one share of 128 x 64
        (4096, 4096, 4096, 256, 1),
        (128, 1024, 16384, 64, 8),
        (1000, 1000, 16384, 128, 2),  # 63.5 us against 69.8 for 128 x 256 in 4 shares
        (2048, 512, 8192, 64, 1),  # 35.3 us against 50.0 for 128 x 256 in 4 shares
        (300, 8192, 8192, 192, 1),
        (768, 3072, 4096, 192, 1),
        (100, 4096, 4096, 64, 1),  # 20.7 us against 25.5 in 2 shares
    ],
)
def test_the_model_picks_the_measured_best_tiles(M, N, K, bn, split):
    """The H100 sweep's bests among 128-row tiles (tools/bench/data/gemm_tiles_h100.json,
    docs/benchmarks.md "GEMM tile choice") are the model's picks."""
    s = MM.auto_split_k(M, N, K, "bfloat16")
    assert (MM.config(M, N, K, "bfloat16", split_k=s)["BN"], s) == (bn, split)


@pytest.mark.parametrize("split", [2, 5, 64])
def test_split_k_sums_its_shares_in_the_kernel(split):
    """``split_k > 1``: each share's partial goes to a float32 slot, the tile's last share (by
    a ticket from an atomic counter) sums the slots in share order and stores C itself (no
    zeroed sum, no conversion launch); a partial space past ``SPLIT_SPACE_MAX`` takes the
    atomic epilogue into a float32 C instead."""
    cfg = MM.config(16, 4096, 65536, "bfloat16", split_k=split)
    assert cfg["EPI"] == "tma" and cfg["SPLIT_K"] == split
    assert MM.config(16, 4094, 65536, "bfloat16", split_k=split)["EPI"] == "direct"
    assert MM.config(16, 4096, 65536, "bfloat16", split_k=1) == MM.config(16, 4096, 65536, "bfloat16")
    f = HM.make("bfloat16", **cfg)
    bufs = {p.name: b for p, b in f.buffer_map}
    assert str(bufs["C"].dtype) == "bfloat16"  # stored by the last share, in the output's dtype
    assert {"SP", "SC"} <= {p.name for p in f.params}
    text = tirx.dumps(f)
    assert f"* {split}" in text  # the grid and the work units count the shares
    assert "T.cuda.atomic_add(" in text and "T.cuda.thread_fence()" in text
    assert MM.split_floats(16, 4096, 64, cfg["BN"], split) == split * 64 * 4096
    big = MM.config(16384, 16384, 4096, "bfloat16", split_k=split)  # 16384² x split floats
    assert big["EPI"] == "atomic" and big["SPLIT_K"] == split
    assert MM.split_floats(16384, 16384, big["BM"], big["BN"], split) > MM.SPLIT_SPACE_MAX
    g = HM.make("bfloat16", **big)
    assert str({p.name: b for p, b in g.buffer_map}["C"].dtype) == "float32"  # the atomic sum
    for bad in (0, 65, 2.0, True, "4"):
        with pytest.raises(ValueError, match=r"^split_k: expected an int from 1 to 64"):
            MM.config(16, 4096, 4096, "bfloat16", split_k=bad)


@needs_nvrtc
@pytest.mark.parametrize(
    "dt,tiles",
    [
        ("bfloat16", {"BN": 128, "STAGES": 6, "EPI": "tma", "SPLIT_K": 4}),
        ("float16", {"BM": 64, "BN": 128, "STAGES": 8, "EPI": "direct", "SPLIT_K": 3}),
        ("float8_e4m3fn", {"BN": 128, "STAGES": 6, "EPI": "tma", "SPLIT_K": 2, "SCALES": "row"}),
        ("float16", {"BM": 64, "BN": 64, "STAGES": 8, "TRANS_B": True, "EPI": "tma", "SPLIT_K": 3}),
    ],
)
def test_split_k_in_the_kernel_compiles_clean(dt, tiles):
    """The partials are stored and read back through plain global loads (never the
    non-coherent path: another CTA wrote them in this launch), the ticket is an integer atomic
    add after a GPU-scope fence, and nothing spills."""
    threads = 128 * (1 + tiles.get("BM", 128) // 64)
    k = compile_clean(HM.make(dt, **tiles), max_registers=65536 // threads // 8 * 8)
    assert [p.name for p in k.info.params][-2:] == ["SP", "SC"]
    assert "ld.global.nc" not in k.ptx
    assert re.search(r"atom\.global\.add\.u32", k.ptx) and "membar.gl" in k.ptx
    assert not re.search(r"(atom|red)\.global\.add\.f32", k.ptx)  # no float atomics


def test_rowwise_fp8_scales_are_one_per_row_of_a_and_column_of_b():
    cfg = MM.config(1000, 4096, 4096, "float8_e4m3fn", scales="row")
    assert cfg["SCALES"] == "row" and "SCALES" not in MM.config(1000, 4096, 4096, "float8_e4m3fn")
    f = HM.make("float8_e4m3fn", **cfg)
    bufs = {p.name: b for p, b in f.buffer_map}
    M, N = f.params[0], f.params[1]
    assert bufs["SA"].shape[0] is M and bufs["SB"].shape[0] is N
    with pytest.raises(tirx.DiagnosticError, match=r"SCALES is 'tensor'"):
        HM.make("bfloat16", SCALES="row")  # rowwise scales are fp8's


def test_few_compiled_kernels_cover_every_shape():
    seen = {
        tuple(sorted(MM.config(M, N, 4096, "bfloat16").items()))
        for M in (1, 7, 64, 65, 128, 1000, 4096, 16384)
        for N in (8, 100, 1000, 4096, 4100, 65536)
    }
    assert len(seen) <= 12


def _threads(name: str) -> int:
    return 256 if "bm64" in name else 384


@pytest.mark.parametrize("name", sorted(HM.KERNELS))
def test_any_shape_kernels_compile_clean(name):
    # one block per SM: setmaxnreg redistributes from the register file's share per thread
    k = compile_clean(HM.KERNELS[name](), max_registers=65536 // _threads(name) // 8 * 8)
    assert [p.name for p in k.info.params][:3] == ["M", "N", "K"]


def test_block_scales_promote_each_k_block():
    """``SCALES="block"``: each k-block's wgmma writes a fresh partial sum (scale-d 0) that is
    added to the accumulator times its row's scale of that k-block and the tile's block scale
    of B; stages are freed after each promotion; only fp8 (B K-major), BN 64 or 128."""
    src = tirx.compile(HM.KERNELS["matmul_any_e4m3_blocks"](), target=ARCH).source
    assert re.search(
        r"SB\[kb\w* \* tirx_floordiv<int>\(.*\(N\).*127.*, 128\) \+ tirx_floordiv<int>\(n0\w*, 128\)\]", src
    )
    assert re.search(r"acc\[(4 \* i\w* \+ 2 \+ c)\] = acc\[\1\] \+ part\[\1\] \* sa1;", src)
    for bad in (dict(DT="bfloat16"), dict(BN=256), dict(BN=192)):
        with pytest.raises(tirx.DiagnosticError, match="SCALES"):
            HM.make(bad.pop("DT", "float8_e4m3fn"), SCALES="block", **bad)


@pytest.mark.parametrize("name", sorted(HM.KERNELS))
def test_any_shape_kernels_round_trip(name):
    assert_round_trips(HM.KERNELS[name]())


def test_the_sizes_are_launch_arguments():
    f = HM.make("bfloat16")
    text = tirx.dumps(f)
    assert [(p.name, str(p.ty)) for p in f.params[:3]] == [("M", "int32"), ("N", "int32"), ("K", "int32")]
    # the grid is computed from M and N at launch: no size is baked into the kernel
    assert "T.min(132, (M + 127) // 128 * ((N + 255) // 256))" in text
    k = tirx.compile(f, target=ARCH, cache=False)
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16" in k.ptx
    e = tirx.compile(HM.make("float8_e4m3fn"), target=ARCH, cache=False)
    assert "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3" in e.ptx
    # a row-major B: read N-major (imm-trans-b 1), loaded as 64 x 64 boxes
    t = tirx.compile(HM.make("bfloat16", TRANS_B=True), target=ARCH, cache=False)
    assert re.search(
        r"wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16 \{[^}]*\}, %rd\d+, %rd\d+, p, 1, 1, 0, 1;",
        t.ptx,
    )
    with pytest.raises(tirx.DiagnosticError, match="fp8 wgmma reads B K-major only"):
        HM.make("float8_e4m3fn", TRANS_B=True)


def test_the_direct_epilogue_checks_every_store():
    src = tirx.compile(HM.make("float16", EPI="direct"), target=ARCH, cache=False).source
    assert "< M" in src and "< N" in src


def test_bad_arguments_name_the_argument():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=r"^a: expected a torch CUDA tensor"):
        K.matmul([[1.0]], None)
    cpu = torch.zeros(4, 4, dtype=torch.float16)
    with pytest.raises(TypeError, match=r"^a: expected a CUDA tensor"):
        K.matmul(cpu, cpu)
    with pytest.raises(TypeError, match=r"^x: expected a CUDA tensor"):
        K.softmax(cpu)
    with pytest.raises(TypeError, match=r"^q: expected a CUDA tensor"):
        K.attention(cpu, cpu, cpu)


def test_tensor_map_cache_keys_on_what_a_descriptor_encodes(monkeypatch):
    """A descriptor is reused only for the same address, shape, box, dtype and swizzle (so it is
    never stale), encoded once per key, and the cache keeps at most its bound."""
    from tirx.kernels import _host

    calls = fake_tma_driver(monkeypatch)
    monkeypatch.setattr(_host, "_MAPS", Bounded(3))
    monkeypatch.setattr(_host, "_ENCODERS", {})

    class Fake:
        def __init__(self, ptr):
            self.ptr = ptr

        def data_ptr(self):
            return self.ptr

    a = _host.tensor_map(Fake(4096), 64, 128, (64, 64), "bfloat16")
    assert _host.tensor_map(Fake(4096), 64, 128, (64, 64), "bfloat16") == a and len(calls) == 1
    for args in [
        (Fake(8192), 64, 128, (64, 64)),
        (Fake(4096), 65, 128, (64, 64)),
        (Fake(4096), 64, 128, (128, 64)),
    ]:
        assert _host.tensor_map(*args, "bfloat16") != a
    assert len(calls) == 4 and len(_host._MAPS) == 3  # the oldest entry went
    _host.tensor_map(Fake(4096), 64, 128, (64, 64), "bfloat16")
    assert len(calls) == 5  # re-encoded after eviction
    with pytest.raises(ValueError, match="16-byte aligned"):
        _host.tensor_map(Fake(4100), 64, 128, (64, 64), "bfloat16")


@given(rows=st.lists(st.integers(1, 1 << 20), min_size=1, max_size=6), cols=st.sampled_from([64, 72, 4096]))
@settings(max_examples=30, deadline=None)
def test_tensor_map_encodes_a_new_row_count_with_its_class_s_encoder(rows, cols):
    """A new row count (a decode step's M) reuses the prepared encoder of its (dtype, cols, box,
    swizzle) class, and the driver sees exactly that row count with the class's pitch and box."""
    from tirx.kernels import _host

    with pytest.MonkeyPatch.context() as mp:
        calls = fake_tma_driver(mp)
        mp.setattr(_host, "_MAPS", Bounded(64))
        mp.setattr(_host, "_ENCODERS", {})

        class Fake:
            def data_ptr(self):
                return 1 << 20

        for r in rows:
            _host.tensor_map(Fake(), r, cols, (64, 64), "float16")
        assert len(_host._ENCODERS) == 1
        assert [c[1] for c in calls] == [[cols, r] for r in dict.fromkeys(rows)]
        assert all(c[2] == [2 * cols] and c[3] == [64, 64] for c in calls)


@given(
    M=st.integers(1, 8),
    n=st.integers(1, 12),
    k8=st.integers(1, 300),
    dtype=st.sampled_from(["float16", "bfloat16"]),
    shape=st.sampled_from([(128, 4, 1), (64, 2, 1), (32, 1, 1), (128, 2, 4), (256, 1, 2), (128, 4, 2)]),
    seed=st.integers(0, 2**31),
)
@settings(max_examples=40, deadline=None)
def test_gemv_computes_x_times_w_transposed(M, n, k8, dtype, shape, seed):
    """The decode GEMV in the interpreter against numpy: every ``(n, k)`` (k a multiple of 8,
    through the unrolled steps and the predicated tail), every M, block, unroll and split of a
    row over several warps (their sums met in shared memory)."""
    import numpy as np

    from tirx.kernels.hopper.gemv import make_gemv

    k = 8 * k8
    g = np.random.default_rng(seed)
    npdt = np.float16 if dtype == "float16" else np.float32
    X = g.standard_normal((M, k)).astype(npdt)
    W = (g.standard_normal((n, k)) / k**0.5).astype(npdt)
    if dtype == "bfloat16":  # values bfloat16 holds exactly, handed over as its bit patterns
        X = (X.view(np.uint32) & 0xFFFF0000).view(np.float32)
        W = (W.view(np.uint32) & 0xFFFF0000).view(np.float32)
        xs, ws = (X.view(np.uint32) >> 16).astype(np.uint16), (W.view(np.uint32) >> 16).astype(np.uint16)
        Y = np.full((M, n), 0x7FC0, np.uint16)
    else:
        xs, ws, Y = X, W, np.full((M, n), np.nan, np.float16)
    tirx.compile(make_gemv(dtype, M, *shape), target="interp")(xs, ws, Y)
    got = (Y.astype(np.uint32) << 16).view(np.float32) if dtype == "bfloat16" else Y.astype(np.float32)
    ref = X.astype(np.float64) @ W.astype(np.float64).T
    tol = (2**-7 if dtype == "bfloat16" else 2**-10) * (np.abs(ref) + 1e-3) + 1e-4
    assert np.all(np.abs(got - ref) <= tol), (got, ref)


@given(
    M=st.integers(1, 8),
    n=st.integers(1, 40),
    k8=st.integers(1, 70),
    dtype=st.sampled_from(["float16", "bfloat16"]),
    shape=st.sampled_from([(16, 2), (8, 2), (4, 4), (2, 1), (1, 2)]),
    seed=st.integers(0, 2**31),
)
@settings(max_examples=25, deadline=None)
def test_tensor_core_gemv_computes_x_times_w_transposed(M, n, k8, dtype, shape, seed):
    """The mma.sync GEMV in the interpreter (its warp MMA model) against numpy: rows of W past
    n and columns past M computed and not stored, the k tail zero on both sides."""
    import numpy as np

    from tirx.kernels.hopper.gemv import make_gemv_mma

    k = 8 * k8
    g = np.random.default_rng(seed)
    X = g.standard_normal((M, k)).astype(np.float32)
    W = (g.standard_normal((n, k)) / k**0.5).astype(np.float32)
    if dtype == "bfloat16":
        X = (X.view(np.uint32) & 0xFFFF0000).view(np.float32)
        W = (W.view(np.uint32) & 0xFFFF0000).view(np.float32)
        xs, ws = (X.view(np.uint32) >> 16).astype(np.uint16), (W.view(np.uint32) >> 16).astype(np.uint16)
        Y = np.full((M, n), 0x7FC0, np.uint16)
    else:
        X, W = X.astype(np.float16).astype(np.float32), W.astype(np.float16).astype(np.float32)
        xs, ws, Y = X.astype(np.float16), W.astype(np.float16), np.full((M, n), np.nan, np.float16)
    tirx.compile(make_gemv_mma(dtype, M, *shape), target="interp")(xs, ws, Y)
    got = (Y.astype(np.uint32) << 16).view(np.float32) if dtype == "bfloat16" else Y.astype(np.float32)
    ref = X.astype(np.float64) @ W.astype(np.float64).T
    tol = (2**-7 if dtype == "bfloat16" else 2**-10) * (np.abs(ref) + 1e-3) + 1e-4
    assert np.all(np.abs(got - ref) <= tol), (got, ref)


@pytest.mark.parametrize("M,split", [(1, 1), (4, 1), (8, 1), (2, 4)])
def test_gemv_compiles_clean_and_round_trips(M, split):
    from tirx.kernels.hopper.gemv import make_gemv

    f = make_gemv("bfloat16", M, split=split)
    k = compile_clean(f)
    assert k.ptx.count("ld.global.nc.v4") >= 4  # 16-byte loads of w (read-only path)
    assert_round_trips(f)


@pytest.mark.parametrize(
    "dtype,M,warps,unroll",
    [("bfloat16", 8, 8, 2), ("float16", 1, 4, 4), ("bfloat16", 3, 16, 2)],
)
def test_tensor_core_gemv_compiles_clean_and_round_trips(dtype, M, warps, unroll):
    from tirx.kernels.hopper.gemv import make_gemv_mma

    f = make_gemv_mma(dtype, M, warps, unroll)
    k = compile_clean(f)
    ab = "bf16" if dtype == "bfloat16" else "f16"
    # two m16n8k16 MMAs per 16-byte vector of a lane and 8 rows of X (ptxas may unroll further)
    groups = -(-M // 8)
    assert (
        k.ptx.count(f"mma.sync.aligned.m16n8k16.row.col.f32.{ab}.{ab}.f32") >= (2 * unroll * 2 + 2) * groups
    )
    assert_round_trips(f)


def test_gemv_refuses_what_it_does_not_compute():
    from tirx.kernels.hopper.gemv import make_gemv

    with pytest.raises(ValueError, match=r"^M: expected 1 to 8 rows, got 9"):
        make_gemv("bfloat16", 9)
    with pytest.raises(ValueError, match=r"^dtype: expected 'float16' or 'bfloat16'"):
        make_gemv("float32", 1)
    with pytest.raises(ValueError, match=r"^block: expected a multiple of 32"):
        make_gemv("float16", 1, block=100)
    with pytest.raises(ValueError, match=r"^split: expected a divisor of the 4 warps"):
        make_gemv("float16", 1, block=128, split=3)
    from tirx.kernels.hopper.gemv import make_gemv_mma

    with pytest.raises(ValueError, match=r"^M: expected 1 to 8 rows, got 9"):
        make_gemv_mma("bfloat16", 9)
    with pytest.raises(ValueError, match=r"^warps: expected 1 to 32, got 0"):
        make_gemv_mma("bfloat16", 1, warps=0)


@given(
    M=st.integers(65, 1 << 17),
    N=st.integers(1, 1 << 17),
    K=st.integers(8, 1 << 17),
    dtype=st.sampled_from(["bfloat16", "float8_e4m3fn"]),
    sms=st.sampled_from([132, 114, 78]),
    trans_b=st.booleans(),
    split=st.sampled_from([None, 1, 2, 3, 8]),
)
@settings(max_examples=300, deadline=None)
def test_the_tile_choice_is_the_model_s_first_minimum(M, N, K, dtype, sms, trans_b, split):
    """``_choose`` (its per-class terms computed once) picks exactly the pair ``_cost`` ranks
    first: the least modelled time, ties to the least computed, then the first in the order of
    splits and widths."""
    kb = -(-K // MM._bk(dtype))
    splits = (split,) if split is not None else tuple(t for t in (1, 2, 4, 8) if t == 1 or kb // t >= 16)
    pairs = [(w, t) for t in splits for w in MM._widths(trans_b)]
    want = min(pairs, key=lambda p: MM._cost(M, N, K, dtype, p[0], p[1], sms))
    assert MM._choose.__wrapped__(M, N, K, dtype, sms, trans_b, split) == want


@given(
    M=st.integers(1, 1 << 15),
    N=st.integers(1, 1 << 15),
    K=st.integers(8, 1 << 17),
    dtype=st.sampled_from(["float16", "bfloat16", "float8_e4m3fn"]),
    sms=st.sampled_from([132, 114, 78]),
)
@settings(max_examples=200, deadline=None)
def test_auto_split_k_only_fills_idle_sms(M, N, K, dtype, sms):
    s = MM.auto_split_k(M, N, K, dtype, sms)
    kblocks = -(-K // (128 if dtype.startswith("float8") else 64))
    assert s in (1, 2, 4, 8) if M > 64 else 1 <= s <= 8
    assert s == 1 or kblocks // s >= 16  # every share has k-blocks to stream
    # the config it picks sums its shares in the kernel
    assert s == 1 or MM.config(M, N, K, dtype, sms, split_k=s)["EPI"] in ("tma", "direct")
    if M > 64:  # the model's fastest (width, split) pair
        cfg = MM.config(M, N, K, dtype, sms, split_k=s)
        best = MM.model_us(M, N, K, dtype, cfg["BN"], s, sms)
        for t in (1, 2, 4, 8):
            if t == 1 or kblocks // t >= 16:
                assert all(MM.model_us(M, N, K, dtype, w, t, sms) >= best for w in (64, 128, 192, 256))
        return
    cfg = MM.config(M, N, K, dtype, sms)
    tiles = -(-M // cfg["BM"]) * -(-N // cfg["BN"])
    if tiles * 4 > sms or kblocks < 32:
        assert s == 1
    else:
        assert s * tiles <= sms


@given(
    M=st.integers(1, 64),
    N=st.integers(1, 1 << 17),
    K=st.integers(8, 1 << 15),
    dtype=st.sampled_from(["float16", "bfloat16", "float8_e4m3fn"]),
)
@settings(max_examples=200, deadline=None)
def test_decode_path_takes_a_gemv_only_for_few_rows(M, N, K, dtype):
    path = MM.decode_path(M, N, K, dtype)
    if dtype.startswith("float8") or M > MM.MMA_GEMV_MAX_M:
        assert path == "tiles"
    elif M <= MM.GEMV_MAX_M:
        assert path == "gemv"
    else:  # 3-8 rows: mma.sync where the wgmma tiles leave a quarter of the SMs idle
        cfg = MM.config(M, N, K, dtype)
        tiles = -(-N // cfg["BN"])
        assert path == ("mma" if tiles * 4 < 132 * 3 else "tiles")
    assert MM.decode_path(M, N, K + 8, dtype) == path  # K never decides


@given(
    S=st.one_of(st.integers(1, 20000), st.integers(1, 2500).map(lambda n: 8 * n)),
    D=st.sampled_from([64, 128, 256]),
    causal=st.booleans(),
)
@settings(max_examples=80, deadline=None)
def test_attention_tiles_never_outgrow_the_sequence(S, D, causal):
    from tirx.kernels import attn as AH
    from tirx.kernels.hopper import attention as A

    if S % 8 or S < 64:
        with pytest.raises(ValueError, match=rf"^q: sequence length {S} is not supported"):
            AH.config_for(S, D, causal)
        return
    cfg = AH.config_for(S, D, causal)
    assert cfg["BM"] <= S and cfg["BN"] <= S
    best = A.best_config(D, causal)
    if S < 128 or (causal and S == 128):  # one tile a head: 64 x 64 tiles, twice the CTAs
        assert (cfg["BM"], cfg["BN"]) == (64, 64)
    elif D == 256:  # 128 x 64 tiles: Q and two stages of K and V in shared memory
        # (causal below 2,048 keys: the dynamic scheduler instead of the lpt order)
        assert cfg == (dict(best, SCHED="dynamic") if causal and S < 2048 else best)
        assert (cfg["BM"], cfg["BN"]) == (128, 64)
    elif causal and S < 1024:  # the 128 x 128 ping-pong form at head dims 64 and 128
        assert cfg == A.best_config(128, True)
    elif max(best["BM"], best["BN"]) <= S:
        assert cfg == best
    A.make_attention(1, 1, S, D, causal, **cfg)  # the kernel's own checks accept it


@pytest.mark.parametrize(
    "S,D,causal", [(128, 64, True), (64, 128, False), (1000, 256, True), (128, 256, False)]
)
def test_short_sequence_tiles_compile_clean(S, D, causal):
    from tirx.kernels import attn as AH
    from tirx.kernels.hopper import attention as A

    compile_clean(A.make_attention(2, 2, S, D, causal, **AH.config_for(S, D, causal)))


class _Tensor:
    """A tensor as ``_gemm``'s call path reads it: an address and a shape."""

    def __init__(self, ptr: int, shape: tuple) -> None:
        self.ptr, self.shape = ptr, shape

    def data_ptr(self) -> int:
        return self.ptr


def test_a_call_seen_before_is_prepared_once(monkeypatch):
    """``_gemm`` remembers a call's kernel and descriptors under the tensors' addresses and the
    sizes (all a descriptor encodes): the same call again prepares nothing, a new address or
    size prepares anew, and the memory keeps at most its bound."""
    prepared, launched = [], []
    monkeypatch.setattr(MM, "_prepare", lambda *a: prepared.append(a[3:6]) or ("tma", None, 1, 2, 3))
    monkeypatch.setattr(MM, "_launch", lambda plan, *a: launched.append(plan) or a[2])
    monkeypatch.setattr(MM, "_CALLS", Bounded(2))
    monkeypatch.setattr(MM, "ROWS_ON_DEVICE", False)  # the host encodes: addresses in the key
    monkeypatch.setattr(MM, "sm_count", lambda dev: 132)

    Fake = _Tensor

    x, w, out = Fake(1 << 20, (64, 256)), Fake(2 << 20, (512, 256)), Fake(3 << 20, (64, 512))
    MM._gemm(x, w, out, "bfloat16")
    MM._gemm(x, w, out, "bfloat16")
    assert prepared == [(64, 512, 256)] and len(launched) == 2
    MM._gemm(x, w, Fake(4 << 20, (64, 512)), "bfloat16")  # another output: its descriptor differs
    MM._gemm(Fake(1 << 20, (32, 256)), w, Fake(3 << 20, (32, 512)), "bfloat16")  # another M
    assert len(prepared) == 3 and len(MM._CALLS) == 2  # the oldest entry went
    MM._gemm(x, w, out, "bfloat16")
    assert len(prepared) == 4


def test_the_swapped_product_keys_its_plan_by_the_addresses(monkeypatch):
    """A few rows (``swapped``) take the swapped product, whose descriptors (of B and of A) the
    host encodes whatever ``ROWS_ON_DEVICE`` says: its plan is remembered under the addresses,
    so a new A prepares anew (a plan keyed without them would launch on the old A's
    descriptor); more rows with ``ROWS_ON_DEVICE = True`` share one plan across addresses."""
    prepared = []

    def prepare(*a):
        rows = bool(a[12]) if len(a) > 12 else False
        prepared.append((a[3], a[0].ptr, rows))
        return ("direct", None, 1, 2, None, rows, None, True)

    monkeypatch.setattr(MM, "_prepare", prepare)
    monkeypatch.setattr(MM, "_launch", lambda plan, *a: a[2])
    monkeypatch.setattr(MM, "_CALLS", Bounded(64))
    monkeypatch.setattr(MM, "_SEEN", Bounded(64))
    monkeypatch.setattr(MM, "ROWS_ON_DEVICE", True)
    monkeypatch.setattr(MM, "sm_count", lambda dev: 132)

    Fake = _Tensor

    w = Fake(1 << 20, (4096, 256))
    for m, want in ((16, [(16, 2 << 20, False), (16, 4 << 20, False)]), (200, [(200, 2 << 20, True)])):
        prepared.clear()
        for ptr in (2 << 20, 4 << 20, 2 << 20):
            MM._gemm(Fake(ptr, (m, 256)), w, Fake(3 << 20, (m, 4096)), "bfloat16")
        assert prepared == want
    assert MM.swapped(9, 4096, "bfloat16", False, False, None, 132)
    assert MM.swapped(64, 8192, "float16", False, False, 1, 132)
    assert MM.swapped(16, 14336, "bfloat16", False, False, None, 132)  # 112 tiles of 128 rows
    for args in ((8, 4096, "bfloat16", False, False, None), (113, 4096, "bfloat16", False, False, None),
                 (16, 4096, "float8_e4m3fn", False, True, None), (16, 4096, "bfloat16", True, False, None),
                 (16, 4096, "bfloat16", False, False, 2),
                 (100, 14336, "bfloat16", False, False, None),  # 224 tiles of 64 rows: two waves
                 (24, 1024, "bfloat16", False, False, None)):  # 16 tiles: split-K instead  # fmt: skip
        assert not MM.swapped(*args, 132)


def test_traced_and_two_kblock_kernels_compile_clean():
    """``TRACE`` (tools/bench/gemm_trace.py's kernels) takes the trace buffer last and reads the
    cycle counter and the global timer; ``TRACE`` off leaves no trace of it. ``KPACK=2`` loads
    two A and two B tiles a stage on one barrier and runs eight wgmma steps an iteration."""
    k = compile_clean(HM.make("bfloat16", BM=64, BN=64, STAGES=6, EPI="tma", TRACE=True, KPACK=2))
    assert [p.name for p in k.info.params][-1] == "TR"
    assert "%clock64" in k.ptx and "%globaltimer" in k.ptx
    assert k.ptx.count("cp.async.bulk.tensor.2d.shared") == 4  # the loads (the C store is global.shared)
    assert k.ptx.count("wgmma.mma_async") == 8
    plain = compile_clean(HM.make("bfloat16", BM=64, BN=64, STAGES=8, EPI="tma"))
    assert "TR" not in [p.name for p in plain.info.params] and "%clock64" not in plain.ptx
    assert plain.ptx.count("wgmma.mma_async") == 4


@pytest.mark.parametrize("M", [9, 16, 17, 32, 33, 64, 65, 100, 112])
def test_the_swapped_product_tiles(M):
    """``swap_config``: A's rows fill a ``BN`` of ``M`` rounded up to 16, 128 rows of B a tile up
    to 16 rows of A (64 past them: twice the CTAs), two k-blocks a stage, the stages that fit
    (at most 8), C stored transposed from registers; the kernel compiles clean and takes the
    output as ``(N, M)`` of its own sizes (C's ``(M, N)``)."""
    cfg = MM.swap_config(M)
    assert cfg["BN"] >= M and cfg["BN"] % 16 == 0 and cfg["BN"] - 16 < max(M, 16)
    assert cfg["BM"] == (128 if M <= 16 else 64) and cfg["KPACK"] == 2 and cfg["TRANS_C"]
    assert cfg["EPI"] == "direct" and cfg["STAGES"] * 2 * (cfg["BM"] + cfg["BN"]) * 128 + 1024 <= 232448
    assert cfg["STAGES"] == 8 or (cfg["STAGES"] + 1) * 2 * (cfg["BM"] + cfg["BN"]) * 128 + 1024 > 232448
    assert MM.swapped(M, 4096, "bfloat16", False, False, None, 132)
    f = HM.make("bfloat16", **cfg)
    c = {p.name: b for p, b in f.buffer_map}["C"]
    assert [str(d) for d in c.shape] == ["N", "M"]
    if M in (16, 65):
        threads = 128 * (1 + cfg["BM"] // 64)
        k = compile_clean(f, max_registers=65536 // threads // 8 * 8)
        assert k.ptx.count("cp.async.bulk.tensor.2d") == 4  # 2 k-blocks x (B, A) a stage
        assert f"m64n{cfg['BN']}k16" in k.ptx


def test_calls_take_device_written_descriptors_until_they_repeat(monkeypatch):
    """``ROWS_ON_DEVICE = None`` (the default): a call on addresses and sizes not seen before
    launches the kernel that writes A's and C's descriptors itself (a new M costs no encode);
    the same call a second time prepares the host-encoded plan, which later repeats take from
    one lookup (the faster kernel for a steady loop)."""
    prepared, launched = [], []

    def prepare(*a):
        rows = bool(a[12]) if len(a) > 12 else False
        prepared.append((a[3], rows))
        return ("tma", "device" if rows else "host", 1, 2, 3, rows)

    monkeypatch.setattr(MM, "_prepare", prepare)
    monkeypatch.setattr(MM, "_launch", lambda plan, *a: launched.append(plan[1]) or a[2])
    monkeypatch.setattr(MM, "_CALLS", Bounded(64))
    monkeypatch.setattr(MM, "_SEEN", Bounded(64))
    monkeypatch.setattr(MM, "ROWS_ON_DEVICE", None)

    Fake = _Tensor

    w = Fake(1 << 20, (512, 256))
    x, out = Fake(2 << 20, (200, 256)), Fake(3 << 20, (200, 512))
    for _ in range(4):
        MM._gemm(x, w, out, "bfloat16")
    assert launched == ["device", "host", "host", "host"]
    assert prepared == [(200, True), (200, False)]
    for m in (201, 202, 203):  # a serving loop's new row counts on one buffer: device-written
        MM._gemm(Fake(2 << 20, (m, 256)), w, Fake(3 << 20, (m, 512)), "bfloat16")
    assert launched[4:] == ["device"] * 3 and prepared[2:] == [(m, True) for m in (201, 202, 203)]
    MM._gemm(Fake(2 << 20, (201, 256)), w, Fake(3 << 20, (201, 512)), "bfloat16")  # seen once
    assert launched[-1] == "host" and prepared[-1] == (201, False)
    monkeypatch.setattr(MM, "ROWS_ON_DEVICE", True)  # forced: the device-written plan, remembered
    MM._gemm(x, w, out, "bfloat16")
    assert launched[-1] == "device" and len(prepared) == 6


ROWS_ON_DEVICE_SETS = [
    ("bfloat16", {}),
    ("float16", {"EPI": "direct"}),
    ("bfloat16", {"BM": 64, "BN": 128, "STAGES": 8, "EPI": "atomic", "SPLIT_K": 4}),
    ("bfloat16", {"BN": 128, "STAGES": 6, "SPLIT_K": 4}),  # split-K summed in the kernel
    ("bfloat16", {"TRANS_B": True}),
    ("float8_e4m3fn", {"BN": 128, "STAGES": 6, "SCALES": "block"}),
]


@pytest.mark.parametrize("dt,tiles", ROWS_ON_DEVICE_SETS)
def test_kernels_that_write_their_descriptors_compile_clean(dt, tiles):
    """``ROWS_ON_DEVICE``: the kernel takes templates for A (and C with the TMA store) and A and
    a descriptor space; warp 0 patches each template's address and row count in shared memory
    and copies it out with the tensor-map proxy's release; the threads that use a descriptor
    acquire it first, and every TMA copy and prefetch of A and C reads the CTA's own."""
    f = HM.make(dt, ROWS_ON_DEVICE=True, **tiles)
    tma_c = tiles.get("EPI", "tma") == "tma"
    threads = 128 * (1 + tiles.get("BM", 128) // 64)
    k = compile_clean(f, max_registers=65536 // threads // 8 * 8)
    names = [p.name for p in k.info.params]
    reduce = tiles.get("SPLIT_K", 1) > 1 and tiles.get("EPI") != "atomic"
    assert names[:5] == ["M", "N", "K", "TA", "TB"]
    assert names[-4:] == ["A", "WS", "SP", "SC"] if reduce else names[-2:] == ["A", "WS"]
    assert ("TC" in names) == tma_c
    maps = 2 if tma_c else 1
    assert k.ptx.count("tensormap.replace.tile.global_address.shared::cta.b1024.b64") == maps
    assert k.ptx.count("tensormap.replace.tile.global_dim.shared::cta.b1024.b32") == maps
    assert k.ptx.count("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu") == maps
    # thread 0 acquires both before the prefetches and loads; each consumer's storing thread, C
    assert k.ptx.count("fence.proxy.tensormap::generic.acquire.gpu") == (3 if tma_c else 1)
    src = k.source
    assert "TA_param" not in src and "TC_param" not in src  # the templates are in global memory
    assert_round_trips(f)


def test_kernels_that_write_their_descriptors_fit_every_tile_set():
    """The 256 bytes of shared memory the patched descriptors take fit beside the stages of every
    tile set ``config`` picks (its stage count leaves room for them)."""
    for M in (65, 128, 1000, 4096):
        for N in (8, 100, 1000, 4096, 12288):
            for tb in (False, True):
                for split in (1, 4):
                    cfg = MM.config(M, N, 4096, "bfloat16", 132, tb, split)
                    stage = (cfg["BM"] + cfg["BN"]) * 128
                    staging = cfg["BM"] // 64 * 16384 if cfg["EPI"] == "tma" else 0
                    assert cfg["STAGES"] * stage + staging + 256 + 1024 <= 232448, cfg


def test_a_call_with_descriptors_written_on_the_device_encodes_no_new_m(monkeypatch):
    """With ``ROWS_ON_DEVICE``, a call at a new M or on new A and C addresses encodes nothing:
    A's and C's templates are encoded once a class (K and the box; N), B's descriptor once an
    address, and the launch passes the addresses of the templates, A and the stream's descriptor
    space."""
    from tirx.kernels import _host
    from tirx.runtime import tma

    calls = fake_tma_driver(monkeypatch)
    for name, value in [("_MAPS", Bounded(64)), ("_ENCODERS", {}), ("_TEMPLATES", {})]:
        monkeypatch.setattr(_host, name, value)
    templates: list = []

    class Words:
        """A template on the device as the host path reads it: its address."""

        def __init__(self, raw):
            self.raw = raw
            templates.append(self)

        def data_ptr(self):
            return (100 + templates.index(self)) << 24

    monkeypatch.setattr(tma, "words_on_device", lambda raw, device: Words(raw))
    monkeypatch.setattr(MM, "_CALLS", Bounded(64))
    monkeypatch.setattr(MM, "ROWS_ON_DEVICE", True)
    monkeypatch.setattr(MM, "sm_count", lambda dev: 132)
    kernels, launched = [], []

    def kernel(dtype, tiles):
        kernels.append(dict(tiles))
        return lambda *args: launched.append(args)

    monkeypatch.setattr(MM, "_kernel", kernel)
    space = type("Space", (), {"data_ptr": lambda self: 99 << 24})()
    monkeypatch.setattr(MM, "per_stream", lambda index, what, make: space)

    class Fake(_Tensor):
        """A tensor as the host path reads it: address, shape, dtype, device."""

        device = type("Device", (), {"index": 0})()
        dtype = "torch.bfloat16"

    w = Fake(1 << 24, (512, 256))
    for i, M in enumerate((200, 300, 301, 1000)):
        x, out = Fake((2 + i) << 24, (M, 256)), Fake((8 + i) << 24, (M, 512))
        MM._gemm(x, w, out, "bfloat16")
        args = launched[-1]
        # the templates', A's and the space's addresses: integers the launch does not check
        assert args[:3] == (M, 512, 256) and args[6] is out and args[7:] == (x.ptr, 99 << 24)
        assert (args[3], args[5]) == (100 << 24, 101 << 24) and args[4] == _host._MAPS.get(
            (w.ptr, 512, 256, (kernels[-1]["BN"], 64), "bfloat16", 128)
        )
    assert all(t.get("ROWS_ON_DEVICE") and t["BN"] == 64 for t in kernels)  # one class of tiles
    # three encodes for four new row counts and addresses: A's template (from the first x: K's
    # pitch, 128 x 64 boxes), B's descriptor, C's template (from the first out: N's pitch)
    assert sorted((c[0], c[2], c[3]) for c in calls) == [
        (1 << 24, [512], [64, 64]),
        (2 << 24, [512], [64, 128]),
        (8 << 24, [1024], [64, 64]),
    ]
    assert len(_host._TEMPLATES) == 2


def test_the_tile_model_fits_its_evidence():
    """The model's constants against the H100 timings they were fitted to
    (tools/bench/data/gemm_tiles_h100.json, tools/bench/gemm_model_fit.py): RMS log error at most
    0.2, and the fastest tile set picked for at least 12 of the 13 shapes timed with several
    (the split rows: split-K summed in the kernel)."""
    import json
    import math
    import pathlib

    data = pathlib.Path(__file__).parent.parent / "tools" / "bench" / "data" / "gemm_tiles_h100.json"
    runs = json.loads(data.read_text())["runs"]
    errs = [math.log(MM.model_us(M, N, K, "bfloat16", bn, s) / t) for M, N, K, bn, s, t in runs]
    assert math.sqrt(sum(e * e for e in errs) / len(errs)) <= 0.2
    groups: dict = {}
    for r in runs:
        groups.setdefault(tuple(r[:3]), []).append(r)
    several = [rs for rs in groups.values() if len(rs) > 1]
    right = sum(
        min(rs, key=lambda r: r[5]) is min(rs, key=lambda r: MM.model_us(*r[:3], "bfloat16", r[3], r[4]))
        for rs in several
    )
    assert len(several) == 13 and right >= 12


_GRID = [
    (4096, 4096, 4096), (8192, 8192, 8192), (4096, 4096, 4000), (3000, 4096, 4096), (5000, 5000, 5000),
    (4095, 4097, 4096), (16, 4096, 4096), (64, 8192, 8192), (128, 8192, 8192), (200, 12288, 4096),
    (16384, 1024, 1024), (65536, 128, 4096), (1024, 1024, 65536), (2048, 2048, 32768), (1000, 1000, 16384),
    (2048, 512, 8192), (8192, 192, 4096), (300, 8192, 8192), (100, 4096, 4096),
]  # fmt: skip


def _grid_tile_sets() -> list[tuple[str, tuple]]:
    """Every tile set the calls pick on the benchmark's grid (bf16 with both B layouts, fp8)."""
    sets = set()
    for dt in ("bfloat16", "float8_e4m3fn"):
        for M, N, Kd in _GRID:
            for tb in (False, True) if dt == "bfloat16" else (False,):
                s = MM.auto_split_k(M, N, Kd, dt, 132, tb)
                sets.add((dt, tuple(sorted(MM.config(M, N, Kd, dt, 132, tb, s).items()))))
    return sorted(sets)


@pytest.mark.parametrize("dt,tiles", _grid_tile_sets())
def test_every_tile_set_the_calls_pick_compiles_clean(dt, tiles):
    """The benchmark grid's kernels as the calls pick them (the model's widths and splits): no
    spills, no local memory, the register budget of one block per SM."""
    cfg = dict(tiles)
    threads = 128 * (1 + cfg["BM"] // 64)
    compile_clean(HM.make(dt, **cfg), max_registers=65536 // threads // 8 * 8)


def test_calls_take_dlpack_and_cuda_array_interface_arrays(monkeypatch):
    """``takes_arrays``: arrays of other libraries are viewed as torch tensors (DLPack first, then
    the CUDA array interface), the result comes back as the first one's kind (CuPy through
    DLPack, others as torch tensors), an ``out`` array is returned as given, torch tensors pass
    untouched, and a producer torch refuses is a TypeError naming the argument."""
    import sys
    import types

    from tirx.kernels import _host

    class Tensor:
        def __init__(self, src):
            self.src = src

    views = []

    def from_dlpack(x):
        if getattr(x, "bad", False):
            raise BufferError("unsupported dtype")
        views.append(("dlpack", x))
        return Tensor(x)

    def as_tensor(x, device=None):
        views.append(("cai", x, device))
        return Tensor(x)

    torch = types.SimpleNamespace(Tensor=Tensor, from_dlpack=from_dlpack, as_tensor=as_tensor)
    monkeypatch.setitem(sys.modules, "torch", torch)
    cupy = types.SimpleNamespace(from_dlpack=lambda t: ("cupy", t))
    monkeypatch.setitem(sys.modules, "cupy", cupy)

    class DL:
        def __dlpack__(self, stream=None):
            return None

    class CAI:
        __cuda_array_interface__ = {"shape": (1,)}

    CuPyArray = type("ndarray", (DL,), {"__module__": "cupy._core.core"})
    seen = []

    @_host.takes_arrays("x", "w", "out")
    def call(x, w=None, *, out=None, flag=1):
        seen.append((x, w, out, flag))
        return Tensor("result")

    t, u = Tensor("t"), Tensor("u")
    assert call(t, u, flag=2).src == "result" and seen[-1] == (t, u, None, 2) and views == []
    assert call(t, w=u, out=t).src == "result" and seen[-1] == (t, u, t, 1) and views == []
    d = DL()
    r = call(d, u)
    assert isinstance(r, Tensor) and seen[-1][0].src is d and seen[-1][1] is u
    c = CAI()
    call(t, w=c)
    assert views[-1] == ("cai", c, "cuda") and seen[-1][1].src is c
    cp = CuPyArray()
    r = call(cp, d)
    assert r[0] == "cupy" and r[1].src == "result"  # the first non-torch argument's kind
    o = DL()
    assert call(t, u, out=o) is o and seen[-1][2].src is o
    odd = object()
    call(odd, u)  # neither kind: handed on as it is, for the call's checks to name
    assert seen[-1][0] is odd
    bad = DL()
    bad.bad = True
    with pytest.raises(TypeError, match=r"^w: cannot view this DL as a torch tensor"):
        call(t, bad)
    monkeypatch.setitem(sys.modules, "torch", None)  # no torch: the call's own checks
    monkeypatch.setattr(_host, "_import_torch", lambda: None)
    call(d)
    assert seen[-1][0] is d


@pytest.mark.parametrize("K,dtype,loader", [(5000, "bfloat16", "cp"), (5008, "bfloat16", None),
                                            (40, "float16", "cp"), (5008, "float8_e4m3fn", "cp"),
                                            (5024, "float8_e4m3fn", None)])  # fmt: skip
def test_rows_16_mod_32_bytes_apart_take_the_cp_async_loads(K, dtype, loader, monkeypatch):
    """A row pitch of 16 modulo 32 bytes (TMA's slow rows) takes ``LOADER="cp"`` for a K-major B
    with ``CP_LOADS`` on, never for an N-major one (TMA reads it at any pitch), and not with
    ``CP_LOADS`` off."""
    monkeypatch.setattr(MM, "CP_LOADS", True)
    assert MM.config(1000, 1000, K, dtype).get("LOADER") == loader
    if dtype != "float8_e4m3fn":
        assert "LOADER" not in MM.config(1000, 1000, K, dtype, trans_b=True)
    monkeypatch.setattr(MM, "CP_LOADS", False)
    assert "LOADER" not in MM.config(1000, 1000, K, dtype)
