"""The kernel library on a GPU (Hopper): every call against torch on fresh random data, outputs
poisoned with NaN first, at shapes that are not multiples of any tile; one compiled kernel per
dtype and tile class serves every shape."""

from __future__ import annotations

import pytest
from gpu_util import require_gpu

torch = require_gpu()

import tirx.kernels as K  # noqa: E402
from tirx.kernels import gemm as MM  # noqa: E402

pytestmark = pytest.mark.gpu

if torch.cuda.get_device_capability() < (9, 0):  # pragma: no cover
    pytest.skip("the library's kernels need sm_90a", allow_module_level=True)

SHAPES = [
    (1, 8, 8),
    (7, 100, 40),
    (64, 4096, 4096),
    (65, 4100, 264),
    (130, 1000, 4000),
    (1000, 1001, 1024),
    (3000, 4096, 4096),
    (4096, 4096, 4000),
    (257, 24, 8),
    (128, 1024, 16384),  # 16 tiles: the calls split K 8 ways (auto_split_k)
    (9, 200, 65536),
    (200, 12288, 1000),  # 128 x 192 tiles (config's model)
    (1000, 1000, 16384),  # 128 x 256 tiles in 4 shares of K (auto_split_k's model)
]


def _rel(out, ref) -> float:
    return float((out.double() - ref.double()).norm() / ref.double().norm().clamp_min(1e-30))


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("M,N,Kd", SHAPES)
def test_linear_and_matmul_at_any_shape(M, N, Kd, dt):
    g = torch.Generator(device="cuda").manual_seed(M * 7 + N * 13 + Kd)
    dtype = getattr(torch, dt)
    x = torch.randn(M, Kd, device="cuda", dtype=dtype, generator=g)
    w = torch.randn(N, Kd, device="cuda", dtype=dtype, generator=g)
    ref = x.float() @ w.float().t()
    out = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    K.linear(x, w, out=out)
    assert not out.isnan().any()
    assert _rel(out, ref) < 1e-2
    y = K.matmul(x, w.t())
    assert y.shape == (M, N) and _rel(y, ref) < 1e-2


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("M", [1, 2, 3, 5, 8, 9])
@pytest.mark.parametrize("N,Kd", [(4096, 4096), (1001, 264), (7, 2056), (128, 8), (14336, 1024)])
def test_decode_rows_through_the_gemv(M, N, Kd, dt):
    """Few rows take the decode GEMVs (CUDA cores for 1-2 rows, mma.sync for 3-8 where the
    wgmma tiles would leave SMs idle), the rest the wgmma tiles: each against float32."""
    from tirx.kernels._host import sm_count

    g = torch.Generator(device="cuda").manual_seed(M * 31 + N + Kd)
    dtype = getattr(torch, dt)
    x = torch.randn(M, Kd, device="cuda", dtype=dtype, generator=g)
    w = torch.randn(N, Kd, device="cuda", dtype=dtype, generator=g)
    out = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    before = MM._gemv.cache_info()
    K.linear(x, w, out=out)
    torch.cuda.synchronize()
    after = MM._gemv.cache_info()
    assert not out.isnan().any()
    assert _rel(out, x.float() @ w.float().t()) < 1e-2
    used = after.hits + after.misses > before.hits + before.misses
    assert used == (MM.decode_path(M, N, Kd, dt, sm_count(0)) != "tiles")


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("M", [1, 3, 8])
@pytest.mark.parametrize("N,Kd", [(4096, 4096), (1001, 264), (7, 2056), (17, 8)])
@pytest.mark.parametrize("warps,unroll", [(8, 2), (4, 4)])
def test_tensor_core_gemv(M, N, Kd, dt, warps, unroll):
    """The mma.sync decode GEMV (W's rows on the A side, X's on the B side, k in the lanes'
    own order): against float32, every tail, rows of W past n and columns past M never stored."""
    import tirx
    from tirx.kernels.hopper.gemv import make_gemv_mma

    g = torch.Generator(device="cuda").manual_seed(M * 17 + N + Kd)
    dtype = getattr(torch, dt)
    x = torch.randn(M, Kd, device="cuda", dtype=dtype, generator=g)
    w = torch.randn(N, Kd, device="cuda", dtype=dtype, generator=g)
    out = torch.full((M + 1, N), float("nan"), device="cuda", dtype=dtype)
    tirx.compile(make_gemv_mma(dt, M, warps, unroll), target="cuda")(x, w, out[:M])
    torch.cuda.synchronize()
    assert not out[:M].isnan().any() and out[M].isnan().all()  # the row after Y untouched
    assert _rel(out[:M], x.float() @ w.float().t()) < 1e-2


def test_linear_keeps_leading_dimensions():
    x = torch.randn(3, 5, 72, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(40, 72, device="cuda", dtype=torch.bfloat16)
    y = K.linear(x, w)
    assert y.shape == (3, 5, 40)
    assert _rel(y, torch.nn.functional.linear(x.float(), w.float())) < 1e-2


def test_one_kernel_serves_every_shape_of_a_class():
    from tirx.kernels._host import sm_count

    MM._kernel.cache_clear()
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    tile_sets = set()
    for m in (1000, 1500, 2048, 3001, 4096):
        for k in (1024, 2000, 4096):
            K.linear(a[:m, :k].contiguous(), w[:, :k].contiguous())
            sms = sm_count(0)
            cfg = MM.config(m, 4096, k, "float16", sms, split_k=MM.auto_split_k(m, 4096, k, "float16", sms))
            tile_sets.add(tuple(sorted(cfg.items())))
    # a kernel per tile set the model picks (two here), never one per shape
    assert MM._kernel.cache_info().currsize == len(tile_sets) <= 2


def test_empty_and_zero_k():
    a = torch.randn(5, 0, device="cuda", dtype=torch.float16)
    w = torch.randn(8, 0, device="cuda", dtype=torch.float16)
    assert (K.linear(a, w) == 0).all()
    assert K.linear(
        torch.randn(0, 16, device="cuda", dtype=torch.float16),
        torch.randn(8, 16, device="cuda", dtype=torch.float16),
    ).shape == (0, 8)


@pytest.mark.parametrize(
    "M,N,Kd", [(1, 8, 8), (100, 1000, 40), (3000, 4096, 4000), (130, 24, 4096), (1000, 1000, 16384)]
)
def test_matmul_of_a_row_major_b(M, N, Kd):
    g = torch.Generator(device="cuda").manual_seed(M + N + Kd)
    a = torch.randn(M, Kd, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(Kd, N, device="cuda", dtype=torch.bfloat16, generator=g)
    out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    K.matmul(a, b, out=out)
    assert _rel(out, a.float() @ b.float()) < 1e-2


def test_bad_layouts_are_refused_with_the_fix():
    a = torch.randn(16, 32, device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match=r"^b: a row-major b needs N a multiple of 8"):
        K.matmul(a, torch.randn(32, 20, device="cuda", dtype=torch.float16))
    with pytest.raises(ValueError, match=r"^b: expected a row-major \(K, N\) tensor or the transpose"):
        K.matmul(a, torch.randn(32, 48, device="cuda", dtype=torch.float16)[:, ::2])
    with pytest.raises(ValueError, match=r"^x: K = 12 must be a multiple of 8"):
        K.linear(
            torch.randn(4, 12, device="cuda", dtype=torch.float16),
            torch.randn(8, 12, device="cuda", dtype=torch.float16),
        )


@pytest.mark.parametrize("split", [2, 3, 7])
@pytest.mark.parametrize(
    "M,N,Kd", [(1, 4096, 8192), (16, 1000, 4000), (200, 512, 65536), (64, 24, 8), (130, 4096, 200)]
)
@pytest.mark.parametrize("layout", ["k_major", "row_major_b", "fp8"])
def test_split_k_adds_every_share_once(M, N, Kd, split, layout):
    """Split-K: shares of the k-blocks add into a float32 sum; K shorter than the shares
    (empty shares), K not a multiple of a share, partial tiles, both B layouts and fp8."""
    g = torch.Generator(device="cuda").manual_seed(M * 3 + N + Kd + split)
    if layout == "fp8":
        Kd = -(-Kd // 16) * 16
        a = (torch.randn(M, Kd, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
        w = (torch.randn(N, Kd, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
        sa, sb = torch.tensor([0.5], device="cuda"), torch.tensor([0.25], device="cuda")
        out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        MM._gemm(a, w, out, "float8_e4m3fn", scales=(sa, sb), split_k=split)
        ref = (a.float() @ w.float().t()) * 0.125
    else:
        a = torch.randn(M, Kd, device="cuda", dtype=torch.bfloat16, generator=g)
        w = torch.randn(N, Kd, device="cuda", dtype=torch.bfloat16, generator=g)
        out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        if layout == "row_major_b":
            if N % 8:
                pytest.skip("a row-major b needs N a multiple of 8")
            MM._gemm(a, w.t().contiguous(), out, "bfloat16", trans_b=True, split_k=split)
        else:
            MM._gemm(a, w, out, "bfloat16", split_k=split)
        ref = a.float() @ w.float().t()
    assert not out.isnan().any()
    assert _rel(out, ref) < 1e-2


@pytest.mark.parametrize("M", [9, 16, 17, 32, 33, 64, 65, 100, 112])
@pytest.mark.parametrize("N,Kd", [(4096, 4096), (3500, 20008), (8000, 136), (6000, 264)])
@pytest.mark.parametrize("mode", [None, True])
def test_the_swapped_product_at_any_shape(M, N, Kd, mode, monkeypatch):
    """9-112 rows take the swapped product (C^T = W x^T, C stored transposed, two k-blocks a
    stage, a partial last pair of k-blocks zero-filled): against float32 torch, the output
    poisoned first; with ``ROWS_ON_DEVICE = True`` forced, a second x at another address of the
    same shape gets its own descriptor (the same bits as a fresh call)."""
    monkeypatch.setattr(MM, "ROWS_ON_DEVICE", mode)
    g = torch.Generator(device="cuda").manual_seed(M * 31 + N + Kd)
    xs = [torch.randn(M, Kd, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(2)]
    w = torch.randn(N, Kd, device="cuda", dtype=torch.bfloat16, generator=g)
    assert MM.swapped(M, N, "bfloat16", False, False, None)
    outs = []
    for x in (*xs, xs[0]):
        out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        K.linear(x, w, out=out)
        outs.append(out)
    for x, out in zip((*xs, xs[0]), outs):
        assert not out.isnan().any()
        assert _rel(out, x.float() @ w.float().t()) < 1e-2
    assert torch.equal(outs[0], outs[2]) and not torch.equal(outs[0], outs[1])
    y = K.matmul(xs[1], w.t())  # the K-major b of a matmul takes it too
    assert torch.equal(y, outs[1])


@pytest.mark.parametrize("M,N,Kd,split", [(65, 4096, 4096, 4), (16, 1000, 8192, 3), (300, 264, 20000, 8)])
def test_split_k_in_the_kernel_is_deterministic_and_leaves_its_counters_zero(M, N, Kd, split):
    """The shares' partials summed in the kernel in share order: the same bits on every run
    (whichever share finished last), the tile counters back at zero after each launch, the
    atomic epilogue (a forced tile set) within rounding of it; two streams at once each use
    their own space."""
    g = torch.Generator(device="cuda").manual_seed(M + N + Kd)
    x = torch.randn(M, Kd, device="cuda", dtype=torch.bfloat16, generator=g)
    w = torch.randn(N, Kd, device="cuda", dtype=torch.bfloat16, generator=g)
    ref = x.float() @ w.float().t()
    outs = []
    for _ in range(4):
        out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        MM._gemm(x, w, out, "bfloat16", split_k=split)
        outs.append(out)
    torch.cuda.synchronize()
    assert _rel(outs[0], ref) < 1e-2
    assert all(torch.equal(o, outs[0]) for o in outs[1:])
    stream = torch.cuda.current_stream().cuda_stream
    box = MM.per_stream(0, "gemm_split", None, stream)
    assert int(box[2].abs().sum()) == 0
    cfg = MM.config(M, N, Kd, "bfloat16", split_k=split) | {"EPI": "atomic"}
    at = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    MM._gemm(x, w, at, "bfloat16", cfg=cfg)
    assert _rel(at, outs[0]) < 1e-2
    streams = [torch.cuda.Stream() for _ in range(2)]
    got = [torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16) for _ in streams]
    torch.cuda.synchronize()
    for s, o in zip(streams, got):
        with torch.cuda.stream(s):
            for _ in range(3):
                MM._gemm(x, w, o, "bfloat16", split_k=split)
    torch.cuda.synchronize()
    assert all(torch.equal(o, outs[0]) for o in got)
    spaces = {MM.per_stream(0, "gemm_split", None, s.cuda_stream)[3] for s in streams}
    assert len(spaces) == 2


@pytest.mark.parametrize(
    "dt,M,N,Kd,tiles",
    [
        ("bfloat16", 1000, 1001, 5000, {}),  # a partial k-block and partial tiles both ways
        ("bfloat16", 257, 24, 8, {}),  # one piece of K
        ("float16", 130, 4100, 264, {"SPLIT_K": 3}),  # shares of K summed in the kernel
        ("bfloat16", 64, 300, 40, {"BM": 64, "BN": 64, "STAGES": 3}),  # the shallowest ring (LAG 1)
        ("bfloat16", 4096, 4096, 5000, {}),
        ("float8_e4m3fn", 300, 1000, 5008, {}),
        ("float8_e4m3fn", 65, 264, 48, {"BM": 64, "BN": 128, "EPI": "direct", "SPLIT_K": 2}),
    ],
)
def test_cp_async_loads_give_the_tma_loads_bits(dt, M, N, Kd, tiles, monkeypatch):
    """``LOADER="cp"`` (the rows of a 16-modulo-32-byte pitch copied by cp.async into the
    128-byte swizzle TMA writes): the same products in the same order as the TMA loads of the
    same tile set, so the same bits (zero-filled edges included), and the calls choose it for
    such a K."""
    monkeypatch.setattr(MM, "CP_LOADS", True)
    fp8 = dt.startswith("float8")
    g = torch.Generator(device="cuda").manual_seed(M + N + Kd)
    x = torch.randn(M, Kd, device="cuda", generator=g)
    w = torch.randn(N, Kd, device="cuda", generator=g) / Kd**0.5
    x, w = (x.to(getattr(torch, dt)), w.to(getattr(torch, dt)))
    scales = (torch.tensor([0.5], device="cuda"), torch.tensor([2.0], device="cuda")) if fp8 else ()
    cfg = MM.config(M, N, Kd, dt, split_k=tiles.get("SPLIT_K", 1)) | tiles
    assert cfg["LOADER"] == "cp"
    outs = []
    for loader in ("cp", "tma"):
        out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16 if fp8 else x.dtype)
        MM._gemm(x, w, out, dt, scales=scales, cfg=cfg | {"LOADER": loader})
        outs.append(out)
    torch.cuda.synchronize()
    ref = x.float() @ w.float().t()
    assert not outs[0].isnan().any() and _rel(outs[0], ref) < 1e-2
    assert torch.equal(outs[0], outs[1])


@pytest.mark.parametrize(
    "M,N,Kd",
    [
        (1, 8, 16),
        (100, 1000, 48),
        (1000, 4096, 4096),
        (4096, 4100, 4000),
        (257, 30, 1024),
        (200, 12288, 1024),
    ],
)
def test_scaled_matmul_at_any_shape(M, N, Kd):
    g = torch.Generator(device="cuda").manual_seed(M + N + Kd)
    a = (torch.randn(M, Kd, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(N, Kd, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
    sa = torch.tensor([0.5], device="cuda")
    sb = torch.tensor([0.25], device="cuda")
    out = K.scaled_matmul(a, b.t(), sa, sb)
    ref = (a.float() @ b.float().t()) * 0.125
    assert out.dtype == torch.bfloat16 and _rel(out, ref) < 1e-2


@pytest.mark.parametrize("M,N,Kd", [(1, 8, 16), (100, 1000, 48), (1000, 4096, 4096), (257, 30, 1024)])
def test_scaled_matmul_with_rowwise_scales(M, N, Kd):
    """torch._scaled_mm's rowwise form: scale_a (M, 1), scale_b (1, N), both B layouts' epilogues
    (N % 8 == 0: TMA store; else the checked stores) and partial tiles (scales read in bounds)."""
    g = torch.Generator(device="cuda").manual_seed(M * 5 + N + Kd)
    a = (torch.randn(M, Kd, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(N, Kd, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
    sa = torch.rand(M, 1, device="cuda", generator=g) + 0.5
    sb = torch.rand(1, N, device="cuda", generator=g) + 0.5
    out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    K.scaled_matmul(a, b.t(), sa, sb, out=out)
    ref = (a.float() @ b.float().t()) * sa * sb
    assert not out.isnan().any() and _rel(out, ref) < 1e-2
    with pytest.raises(ValueError, match=r"^scale_a, scale_b: expected one float32 each \(per tensor\)"):
        K.scaled_matmul(a, b.t(), sa, sb.t().contiguous() if N > 1 else torch.ones(2, 1, device="cuda"))


@pytest.mark.parametrize(
    "M,N,Kd",
    [(1, 8, 16), (100, 1000, 48), (1000, 4096, 4096), (257, 300, 1040), (64, 7168, 2048), (4096, 4096, 4096)],
)
def test_scaled_matmul_with_block_scales(M, N, Kd):
    """DeepGEMM's scales: one per row of a and 128 of K, one per 128 x 128 block of b; partial
    k-blocks and tiles, a few rows (64-row tiles), both epilogues; against the dequantized
    product in float32."""
    g = torch.Generator(device="cuda").manual_seed(M * 3 + N + Kd)
    a = (torch.randn(M, Kd, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(N, Kd, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
    kb, nb = -(-Kd // 128), -(-N // 128)
    sa = torch.rand(M, kb, device="cuda", generator=g) + 0.5
    sb = torch.rand(kb, nb, device="cuda", generator=g) + 0.5
    out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    K.scaled_matmul(a, b.t(), sa, sb, out=out)
    af = a.float() * sa.repeat_interleave(128, 1)[:, :Kd]
    bf = b.float() * sb.t().repeat_interleave(128, 0).repeat_interleave(128, 1)[:N, :Kd]
    assert not out.isnan().any() and _rel(out, af @ bf.t()) < 1e-2
    with pytest.raises(ValueError, match=r"^scale_a, scale_b: expected"):
        K.scaled_matmul(a, b.t(), sa, sb.t().contiguous() if kb != nb else sb[:, :0])


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_softmax_and_rms_norm(dt):
    dtype = getattr(torch, dt)
    x = torch.randn(3, 7, 4096, device="cuda", dtype=dtype)
    w = torch.randn(4096, device="cuda", dtype=dtype)
    assert _rel(K.softmax(x), torch.softmax(x.float(), -1)) < 1e-2
    ref = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
    assert _rel(K.rms_norm(x, w), ref) < 1e-2
    with pytest.raises(ValueError, match=r"^x: rows of 1000 elements are not supported"):
        K.softmax(torch.randn(2, 1000, device="cuda", dtype=dtype))


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_against_sdpa(causal, dt):
    q, k, v = (torch.randn(2, 4, 512, 128, device="cuda", dtype=getattr(torch, dt)) for _ in range(3))
    o = K.attention(q, k, v, causal=causal)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    assert _rel(o, ref) < 2e-2
    o2 = K.attention(q, k, v, causal=causal)  # cached descriptors and kernel: the same result
    assert torch.equal(o, o2)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "B,H,HKV,S,D", [(2, 8, 2, 512, 128), (1, 6, 1, 384, 64), (2, 4, 2, 1000, 128), (1, 4, 2, 640, 256)]
)
def test_grouped_query_attention_through_the_public_call(B, H, HKV, S, D, causal):
    """Fewer K / V heads than query heads (multi-query at HKV = 1), as SDPA's enable_gqa."""
    q = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(B, HKV, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    o = K.attention(q, k, v, causal=causal)
    kf, vf = (t.float().repeat_interleave(H // HKV, dim=1) for t in (k, v))
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kf, vf, is_causal=causal)
    assert _rel(o, ref) < 2e-2
    with pytest.raises(ValueError, match="HKV dividing H"):
        K.attention(
            q, k[:, :1].repeat(1, 3, 1, 1) if H % 3 else k[:, :1].repeat(1, 5, 1, 1), v, causal=causal
        )


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "B,H,S,D",
    [
        (3, 2, 64, 128),
        (2, 3, 128, 64),
        (2, 2, 184, 64),
        (1, 2, 1000, 128),
        (4, 8, 128, 128),
        (2, 3, 64, 256),
        (1, 2, 1000, 256),
        (2, 4, 2048, 256),
    ],
)
def test_attention_at_short_and_ragged_sequences(B, H, S, D, causal):
    """The public call picks tiles no longer than the sequence (config_for)."""
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = K.attention(q, k, v, causal=causal)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    assert _rel(o, ref) < 2e-2


def _varlen_reference(q, k, v, cq, ck, causal):
    """Each sequence on its own through SDPA in float32 (K / V repeated per query-head group)."""
    H, hkv = q.shape[1], k.shape[1]
    out = []
    for b in range(len(cq) - 1):
        qs = q[cq[b] : cq[b + 1]].float().transpose(0, 1)
        ks, vs = (t[ck[b] : ck[b + 1]].float().transpose(0, 1).repeat_interleave(H // hkv, 0) for t in (k, v))
        if ks.shape[1] == 0:
            out.append(torch.zeros_like(qs))
            continue
        out.append(torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, is_causal=causal))
    return out


@pytest.mark.parametrize(
    "lens,H,HKV,D,causal,dt",
    [
        ([1, 7, 129, 1000, 64], 4, 4, 128, False, "bfloat16"),
        ([1, 7, 129, 1000, 64], 4, 4, 128, True, "bfloat16"),
        ([300, 5, 2048, 16, 191], 8, 2, 64, True, "bfloat16"),  # grouped-query, 192-row tiles
        ([300, 5, 777, 16, 191], 6, 1, 64, False, "float16"),  # multi-query
        ([513, 2, 1100], 2, 2, 256, True, "bfloat16"),
        ([513, 2, 1100], 2, 2, 256, False, "float16"),
        ([0, 40, 0, 200], 2, 2, 128, True, "bfloat16"),  # empty sequences
    ],
)
def test_varlen_attention_against_each_sequence(lens, H, HKV, D, causal, dt):
    """Sequences of different lengths packed along the tokens: each one's rows against SDPA on
    that sequence alone (nothing reaches across a sequence's ends), never NaN."""
    g = torch.Generator(device="cuda").manual_seed(sum(lens) + H + D)
    dtype = getattr(torch, dt)
    cq = [0]
    for n in lens:
        cq.append(cq[-1] + n)
    tot = cq[-1]
    q = torch.randn(tot, H, D, device="cuda", dtype=dtype, generator=g)
    k, v = (torch.randn(tot, HKV, D, device="cuda", dtype=dtype, generator=g) for _ in range(2))
    cu = torch.tensor(cq, device="cuda", dtype=torch.int32)
    o = K.attention_varlen(q, k, v, cu, causal=causal)
    assert not o.isnan().any()
    for b, ref in enumerate(_varlen_reference(q, k, v, cq, cq, causal)):
        if lens[b]:
            assert _rel(o[cq[b] : cq[b + 1]].transpose(0, 1), ref) < 2e-2, b
    assert torch.equal(o, K.attention_varlen(q, k, v, cu, max_seqlen_q=max(lens), causal=causal))


def test_varlen_attention_with_other_key_lengths_and_one_kernel_for_every_batch():
    """Keys of their own lengths (``cu_seqlens_k``; one sequence without keys gives zeros);
    batches of other lengths and counts run the kernel compiled for the first."""
    from tirx.kernels import attn as AH

    AH._compiled_varlen.cache_clear()
    for lq, lk in (([100, 1, 300], [50, 0, 1000]), ([5, 600], [700, 3]), ([128] * 9, [64] * 9)):
        cq, ck = [0], [0]
        for a, b in zip(lq, lk):
            cq.append(cq[-1] + a)
            ck.append(ck[-1] + b)
        q = torch.randn(cq[-1], 4, 128, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(ck[-1], 4, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        o = K.attention_varlen(
            q,
            k,
            v,
            torch.tensor(cq, device="cuda", dtype=torch.int32),
            torch.tensor(ck, device="cuda", dtype=torch.int32),
        )
        for b, ref in enumerate(_varlen_reference(q, k, v, cq, ck, False)):
            got = o[cq[b] : cq[b + 1]].transpose(0, 1).float()
            assert (got == 0).all() if lk[b] == 0 else _rel(got, ref) < 2e-2, (lq, lk, b)
    assert AH._compiled_varlen.cache_info().currsize == 1


def test_varlen_attention_never_writes_outside_the_tokens():
    """Offsets past the tokens (or below zero) are clipped: the rows of a bigger buffer around
    the output stay as they were."""
    from tirx.kernels import attn as AH
    from tirx.kernels.hopper import attention as A

    H, D, n = 2, 128, 300
    q = torch.randn(n, H, D, device="cuda", dtype=torch.bfloat16)
    cu = torch.tensor([-50, 100, 100 + 2 * n], device="cuda", dtype=torch.int32)
    big = torch.full((n + 256, H, D), 7.0, device="cuda", dtype=torch.bfloat16)
    o = big[128 : 128 + n]
    kern = AH._compiled_varlen(H, D, False, "bfloat16", tuple(sorted(A.config_varlen(D).items())))
    kern(o, *AH.varlen_maps(q, q, q), cu, cu, 2, n, 2 * n)
    torch.cuda.synchronize()
    assert (big[:128] == 7).all() and (big[128 + n :] == 7).all()


@pytest.mark.parametrize("causal", [False, True])
def test_varlen_attention_with_too_small_a_max_seqlen_leaves_nan(causal):
    """``max_seqlen_q`` below a sequence's length: the rows the grid does not cover come out NaN
    (not whatever memory held), the covered ones right."""
    H, D, lens = 2, 128, [700, 100]
    q = torch.randn(sum(lens), H, D, device="cuda", dtype=torch.bfloat16)
    cq = [0, lens[0], sum(lens)]
    cu = torch.tensor(cq, device="cuda", dtype=torch.int32)
    o = K.attention_varlen(q, q, q, cu, max_seqlen_q=300, causal=causal)  # 3 blocks of 128 rows
    ref = _varlen_reference(q, q, q, cq, cq, causal)
    # blocks of 128 rows from the sequence's first row: 6 (the last of 60 rows); the grid's 3 CTAs
    # take blocks 0-2, or, causal, the last three (rows 384-699, the longest first)
    lost = slice(0, 384) if causal else slice(384, 700)
    kept = slice(384, 700) if causal else slice(0, 384)
    assert o[lost].isnan().all() and not o[kept].isnan().any() and not o[700:].isnan().any()
    assert _rel(o[kept].transpose(0, 1), ref[0][:, kept]) < 2e-2
    assert _rel(o[700:].transpose(0, 1), ref[1]) < 2e-2


def test_varlen_attention_refuses_what_it_does_not_compute():
    q = torch.randn(10, 4, 128, device="cuda", dtype=torch.bfloat16)
    cu = torch.tensor([0, 4, 10], device="cuda", dtype=torch.int32)
    with pytest.raises(ValueError, match="cu_seqlens_k: causal"):
        K.attention_varlen(q, q, q, cu, cu.clone(), causal=True)
    with pytest.raises(TypeError, match="cu_seqlens_q: dtype"):
        K.attention_varlen(q, q, q, cu.long())
    with pytest.raises(ValueError, match="k: shape"):
        K.attention_varlen(q, q[:, :3], q[:, :3], cu)
    with pytest.raises(ValueError, match="cu_seqlens_q: expected batch"):
        K.attention_varlen(q, q, q, cu[:1])
    with pytest.raises(ValueError, match="q: head dim 96"):
        K.attention_varlen(q[..., :96].contiguous(), q[..., :96].contiguous(), q[..., :96].contiguous(), cu)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize(
    "B,H,HKV,L,D",
    [
        (1, 32, 8, 4096, 128),
        (3, 8, 8, 1000, 64),
        (2, 6, 1, 300, 128),
        (4, 16, 2, 77, 64),
        (1, 8, 1, 20000, 128),
    ],
)
def test_decode_attention_against_sdpa(B, H, HKV, L, D, dt):
    """decode_attention against SDPA on the valid keys of each batch entry (K / V repeated per
    group for grouped-query attention), outputs never NaN."""
    g = torch.Generator(device="cuda").manual_seed(B * 100 + L)
    dtype = getattr(torch, dt)
    q = torch.randn(B, H, D, device="cuda", dtype=dtype, generator=g)
    k, v = (torch.randn(B, HKV, L, D, device="cuda", dtype=dtype, generator=g) for _ in range(2))
    lens = torch.randint(1, L + 1, (B,), device="cuda", dtype=torch.int32, generator=g)
    lens[0] = L
    o = K.decode_attention(q, k, v, lens)
    assert o.shape == (B, H, D) and not o.isnan().any()
    for b in range(B):
        n = int(lens[b])
        kk, vv = (t[b : b + 1, :, :n].float().repeat_interleave(H // HKV, dim=1) for t in (k, v))
        ref = torch.nn.functional.scaled_dot_product_attention(q[b : b + 1, :, None].float(), kk, vv)[:, :, 0]
        assert _rel(o[b : b + 1], ref) < 1e-2
    assert torch.equal(o, K.decode_attention(q, k, v, lens))  # deterministic: no atomics


def test_decode_attention_refuses_what_it_does_not_compute():
    """Misaligned storage (its rows are read by 16-byte copies), GQA beyond 8 query heads per
    K / V head, head dims it has no kernel for: ValueErrors naming the argument."""
    q = torch.randn(1, 8, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(1, 1, 64, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    flat = torch.randn(1 * 64 * 128 + 1, device="cuda", dtype=torch.bfloat16)
    kmis = flat[1:].view(1, 1, 64, 128)  # contiguous, 2 bytes off 16-byte alignment
    with pytest.raises(ValueError, match=r"^k: the tensor's address must be 16-byte aligned"):
        K.decode_attention(q, kmis, v)
    with pytest.raises(ValueError, match=r"^k: 1 K / V heads for 16 query heads"):
        K.decode_attention(torch.randn(1, 16, 128, device="cuda", dtype=torch.bfloat16), k, v)
    with pytest.raises(ValueError, match=r"^q: head dim 96 is not supported"):
        K.decode_attention(torch.randn(1, 8, 96, device="cuda", dtype=torch.bfloat16), k, v)


@pytest.mark.parametrize("P", [16, 256])
def test_decode_attention_over_a_paged_cache(P):
    """vLLM's layout: pages of P keys in a shuffled pool, a block table per batch entry; the
    result equals the contiguous cache's (the same kernel, other strides)."""
    g = torch.Generator(device="cuda").manual_seed(P)
    B, H, HKV, L, D = 3, 16, 4, 1000, 128
    q = torch.randn(B, H, D, device="cuda", dtype=torch.bfloat16, generator=g)
    k, v = (torch.randn(B, HKV, L, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(2))
    lens = torch.tensor([1000, 999, 3], device="cuda", dtype=torch.int32)
    npg = -(-L // P)
    pool = B * npg + 5
    bt = torch.randperm(pool, device="cuda", generator=g)[: B * npg].to(torch.int32).view(B, npg).contiguous()
    kc, vc = (
        torch.randn(pool, P, HKV, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(2)
    )
    for b in range(B):
        for j in range(npg):
            n = min(P, L - j * P)
            kc[bt[b, j], :n] = k[b, :, j * P : j * P + n].transpose(0, 1)
            vc[bt[b, j], :n] = v[b, :, j * P : j * P + n].transpose(0, 1)
    paged = K.decode_attention(q, kc, vc, lens, block_table=bt)
    flat = K.decode_attention(q, k, v, lens)
    assert not paged.isnan().any()
    assert _rel(paged, flat) < 1e-3  # the same sums, other chunk lengths at most


def test_tensor_map_encoders_agree():
    """The ctypes encoder (the library's fast path) writes the bytes cuda-bindings' does."""
    from tirx.runtime.tma import TensorMapPlan, _Encoder

    x = torch.empty(1000, 4104, device="cuda", dtype=torch.bfloat16)
    for shape, box, sw in [
        ((1000, 4104), (128, 64), 128),
        ((1000, 4104), (64, 64), 128),
    ]:
        plan = TensorMapPlan("bfloat16", shape, box, sw)
        enc = _Encoder(plan)
        assert enc.fn is not None
        assert enc(x.data_ptr()) == enc._bindings(x.data_ptr()) == plan.encode(x.data_ptr())


# a fresh process calling the library; run twice on one cache, the second takes every kernel
# from its ready record (tirx.runtime.ready): the frontend is never imported there
FRESH = r"""
import json, sys, warnings
warnings.filterwarnings("error", message="tirx")  # a ready record that disagrees with its kernel
import torch
import tirx.kernels as K

def rel(a, b):
    return float((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-30))

g = torch.Generator(device="cuda").manual_seed(5)
r = lambda *s, dt=torch.bfloat16: torch.randn(*s, device="cuda", dtype=dt, generator=g)
errs = {}
x, w = r(1000, 264), r(1001, 264)
errs["linear"] = rel(K.linear(x, w), x.float() @ w.float().t())
x16, w16 = r(3, 4096, dt=torch.float16), r(4096, 4096, dt=torch.float16)
errs["gemv"] = rel(K.matmul(x16, w16.t()), x16.float() @ w16.float().t())
q, k, v = r(2, 8, 1000, 128), r(2, 2, 1000, 128), r(2, 2, 1000, 128)
ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
errs["attention"] = rel(K.attention(q, k, v, causal=True), ref)
cu = torch.tensor([0, 300, 1000], device="cuda", dtype=torch.int32)
qv, kv, vv = r(1000, 8, 64), r(1000, 8, 64), r(1000, 8, 64)
o = K.attention_varlen(qv, kv, vv, cu, max_seqlen_q=700)
t = lambda a, s, e: a[s:e].transpose(0, 1)[None]
ref = torch.cat([torch.nn.functional.scaled_dot_product_attention(t(qv, s, e), t(kv, s, e), t(vv, s, e))[0]
                 .transpose(0, 1) for s, e in ((0, 300), (300, 1000))])
errs["varlen"] = rel(o, ref)
y = r(64, 4096)
errs["softmax"] = rel(K.softmax(y), torch.softmax(y.float(), -1))
torch.cuda.synchronize()
print(json.dumps({"errs": errs, "script": "tirx.script" in sys.modules}))
"""


def test_a_new_process_launches_the_library_from_ready_records(tmp_path):
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TIRX_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=root)
    runs = []
    for _ in range(2):
        p = subprocess.run(
            [sys.executable, "-c", FRESH], env=env, capture_output=True, text=True, timeout=900
        )
        assert p.returncode == 0, p.stderr[-3000:]
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    assert runs[0]["script"] and not runs[1]["script"]  # the second process built nothing
    for run in runs:
        assert all(e < 1e-2 for e in run["errs"].values()), run["errs"]
    assert runs[0]["errs"] == runs[1]["errs"]  # the same kernels


def test_the_calls_take_cupy_arrays():
    """CuPy arrays (DLPack) in, CuPy arrays out, the same values as for torch tensors; an ``out``
    array is written in place."""
    cupy = pytest.importorskip("cupy")
    g = torch.Generator(device="cuda").manual_seed(11)
    x = torch.randn(300, 264, device="cuda", dtype=torch.float16, generator=g)
    w = torch.randn(1000, 264, device="cuda", dtype=torch.float16, generator=g)
    cx, cw = cupy.from_dlpack(x), cupy.from_dlpack(w)
    y = K.linear(cx, cw)
    assert isinstance(y, cupy.ndarray) and y.shape == (300, 1000)
    assert torch.equal(torch.from_dlpack(y), K.linear(x, w))
    out = cupy.full((300, 1000), float("nan"), dtype=cupy.float16)
    assert K.linear(cx, cw, out=out) is out and torch.equal(torch.from_dlpack(out), K.linear(x, w))
    q = torch.randn(1, 4, 256, 64, device="cuda", dtype=torch.bfloat16, generator=g)
    o = K.attention(cupy.from_dlpack(q), q, q, causal=True)  # mixed: the first non-torch kind
    assert isinstance(o, cupy.ndarray) and torch.equal(
        torch.from_dlpack(o), K.attention(q, q, q, causal=True)
    )
    r = torch.randn(8, 1024, device="cuda", generator=g)
    s = K.softmax(cupy.from_dlpack(r))
    assert isinstance(s, cupy.ndarray) and torch.allclose(
        torch.from_dlpack(s), torch.softmax(r, -1), atol=1e-6
    )
