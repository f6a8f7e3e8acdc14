"""Hopper kernels (tirx/kernels/hopper): every kernel compiles to an sm_90a cubin with an empty
NVRTC log and no local-memory use (no GPU needed); the Hopper ops print the PTX they
should; the interpreter refuses them clearly. On a GPU (skipped cleanly without one):
correctness against torch on fresh random data with NaN-poisoned outputs."""

from __future__ import annotations

import re

import pytest
from gpu_util import require_gpu as _gpu
from hopper_util import ARCH, assert_round_trips, compile_clean, no_disk_cache  # noqa: F401 (an autouse fixture)

pytest.importorskip("cuda.bindings.nvrtc")

import tirx
from tirx.errors import OpError
from tirx.kernels.hopper import gemm as G
from tirx.kernels.hopper import memory as MB
from tirx.script import tirx as T


def _clean(k):
    assert len(k.cubin) > 0
    assert ".target sm_90a" in k.ptx
    assert k.module.log == "", k.module.log
    # register arrays stayed in registers: no local loads/stores in the PTX
    assert not re.search(r"\b(ld|st)\.local\b", k.ptx), "local memory used"


_ALL = {**{f"memory:{n}": b for n, b in MB.KERNELS.items()}, **{f"gemm:{n}": b for n, b in G.KERNELS.items()}}


@pytest.mark.parametrize("name", sorted(_ALL))
def test_compiles_clean_for_sm90a(name):
    _clean(tirx.compile(_ALL[name](), target=ARCH, cache=False))


@pytest.mark.parametrize("name", sorted(_ALL))
def test_text_roundtrip(name):
    assert_round_trips(_ALL[name]())


@pytest.mark.parametrize("name", sorted(_ALL))
def test_ptxas_reports_no_spills(name):
    # gemm: __launch_bounds__(384, 1); setmaxnreg redistributes from 168 registers
    compile_clean(_ALL[name](), max_registers=168 if name.startswith("gemm") else None)


def test_memory_kernels_use_16_byte_accesses():
    for build in MB.KERNELS.values():
        ptx = tirx.compile(build(), target=ARCH, cache=False).ptx
        assert re.search(r"ld\.global(\.nc)?\.v4\.u32", ptx)
        assert re.search(r"st\.global\.v4\.u32", ptx)


@pytest.mark.parametrize("dt,ab", [("float16", "f16"), ("bfloat16", "bf16")])
def test_gemm_ptx_has_the_hopper_pipeline(dt, ab):
    k = tirx.compile(G.make_gemm(4096, 4096, 4096, dt), target=ARCH, cache=False)
    ptx = k.ptx
    assert f"wgmma.mma_async.sync.aligned.m64n256k16.f32.{ab}.{ab}" in ptx
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" in ptx
    assert "mbarrier.try_wait.parity" in ptx and "mbarrier.arrive.expect_tx" in ptx
    assert "setmaxnreg.inc.sync.aligned.u32 232" in ptx and "setmaxnreg.dec.sync.aligned.u32 40" in ptx
    assert "prefetch.tensormap" in ptx and "wgmma.wait_group.sync.aligned 1" in ptx
    assert "__launch_bounds__(384, 1)" in k.source


def test_gemm_tensor_maps_by_value_or_in_global_memory():
    k = tirx.compile(G.make_gemm(4096, 4096, 4096, "float16"), target=ARCH, cache=False)
    assert "const __grid_constant__ tirx_tensormap TA_param" in k.source
    assert ".param .align 64 .b8 gemm_tn_kernel_param_3[128]" in k.ptx
    assert [p.kind for p in k.info.params] == ["buffer"] * 3 + ["tensormap"] * 2
    assert k.fmt.endswith("128s128s") and k.param_offsets[3] % 64 == 0
    g = tirx.compile(G.make_gemm(4096, 4096, 4096, "float16", TMAP="global"), target=ARCH, cache=False)
    assert "grid_constant" not in g.source and [p.kind for p in g.info.params] == ["buffer"] * 5
    _clean(k)
    _clean(g)


def test_tensormap_argument_is_checked():
    from tirx.runtime.kernel import _tensormap_bytes

    assert _tensormap_bytes(bytes(128), "TA", "k()") == bytes(128)
    with pytest.raises(TypeError, match="128-byte TMA descriptor"):
        _tensormap_bytes(bytes(64), "TA", "k()")
    with pytest.raises(TypeError, match="parameter TA"):
        _tensormap_bytes(3, "TA", "k()")


def test_gemm_cluster_multicast_ptx():
    k = tirx.compile(G.make_gemm(4096, 4096, 4096, "float16", CLUSTER=2), target=ARCH, cache=False)
    assert ".multicast::cluster" in k.ptx
    assert "mapa.shared::cluster.u32" in k.ptx and "barrier.cluster.arrive" in k.ptx
    assert k.info.entry.cluster is not None
    _clean(k)


def test_gemm_cluster_sharing_a_ptx():
    """SHARE="A": each CTA multicasts half of the A tile (its rows m0 + rank * BM / 2) and loads
    its own B tile; the host plans split A's box instead of B's."""
    k = tirx.compile(
        G.make_gemm(128, 8192, 1024, "float16", BN=64, STAGES=8, GROUP_M=1, CLUSTER=2, SHARE="A"),
        target=ARCH,
        cache=False,
    )
    assert ".multicast::cluster" in k.ptx and k.info.entry.cluster is not None
    _clean(k)
    pa, pb = G.plans_for(128, 8192, 1024, "float16", dict(BN=64, CLUSTER=2, SHARE="A", STAGES=8))
    assert (pa.box, pb.box) == ((64, 64), (64, 64))
    pa, pb = G.plans_for(256, 8192, 1024, "float16", dict(BN=64, CLUSTER=2))
    assert (pa.box, pb.box) == ((128, 64), (32, 64))
    pa, pb = G.plans_for(256, 8192, 1024, "float16", {})  # the kernel's defaults: 128 x 256 tiles
    assert (pa.box, pb.box) == ((128, 64), (256, 64))
    with pytest.raises(Exception, match="N // BN"):
        G.make_gemm(128, 192, 1024, "float16", BN=64, CLUSTER=2, SHARE="A")  # 3 column tiles
    with pytest.raises(Exception, match="SHARE is"):
        G.make_gemm(256, 256, 1024, "float16", CLUSTER=2, SHARE="C")


def test_gemm_best_config_keeps_the_sms_busy():
    """Wide tiles where they fill the GPU; narrower tiles and a deeper ring for few row-blocks."""
    assert G.best_config(4096, 4096, 4096) == dict(BM=128, BN=256, STAGES=4, GROUP_M=8, EPI="tma")
    assert G.best_config(8192, 1024, 8192)["BN"] == 256
    skinny = G.best_config(128, 8192, 8192)
    assert (skinny["BN"], skinny["STAGES"], skinny["GROUP_M"]) == (64, 8, 1)
    assert G.best_config(1024, 2048, 1024)["BN"] == 128  # 8 x 16 tiles of 128 x 128
    for shape in ((128, 8192, 8192), (256, 4096, 4096), (1024, 2048, 1024), (8192, 1024, 8192)):
        G.make_gemm(*shape, "float16", **G.best_config(*shape))  # every pick passes the kernel's checks


def test_gemm_jit_specializes_over_tiles():
    a = G.make_gemm(4096, 4096, 4096, "float16", BN=128, STAGES=6)
    b = G.make_gemm(4096, 4096, 4096, "float16")
    assert a is not b and G.make_gemm(4096, 4096, 4096, "float16", BN=128, STAGES=6) is a
    k = tirx.compile(a, target=ARCH, cache=False)
    assert "m64n128k16" in k.ptx
    _clean(k)


def test_gemm_pingpong_ptx_has_named_barrier_turns():
    k = tirx.compile(G.make_gemm(4096, 4096, 4096, "float16", PINGPONG=True, BM=128, BN=128), target=ARCH,
                     cache=False)  # fmt: skip
    assert k.ptx.count("wgmma.mma_async.sync.aligned.m64n128k16") == 8  # 2 row halves x 4 k-steps
    assert "bar.sync" in k.ptx and "bar.arrive" in k.ptx
    _clean(k)
    with pytest.raises(Exception, match="PINGPONG"):
        G.make_gemm(4096, 4096, 4096, "float16", PINGPONG=True, BM=128, CLUSTER=2)


def test_gemm_tma_store_epilogue_ptx():
    """EPI="tma": swizzled staging stores, a proxy fence, per-warpgroup named barriers,
    TMA tile stores committed as a bulk group, and a wait before the staging tiles are reused."""
    for dt, cvt in (("float16", "cvt.rn.f16x2.f32"), ("bfloat16", "cvt.rn.bf16x2.f32")):
        ptx = tirx.compile(G.make_gemm(1024, 1024, 512, dt, EPI="tma", STAGES=4), target=ARCH).ptx
        assert "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group" in ptx
        assert "cp.async.bulk.commit_group" in ptx and "cp.async.bulk.wait_group.read" in ptx
        assert "fence.proxy.async.shared::cta" in ptx and "bar.sync" in ptx
        assert cvt in ptx and "st.shared::cta.b32" in ptx, "packed pairs stored as 4-byte words"
    with pytest.raises(tirx.DiagnosticError, match="EPI='tma'"):
        G.make_gemm(1024, 1024, 512, "float16", EPI="tma", PINGPONG=True, BN=128)
    with pytest.raises(tirx.DiagnosticError, match="EPI is"):
        G.make_gemm(1024, 1024, 512, "float16", EPI="smem")


def test_gemm_pingpong_refuses_tiles_that_spill():
    with pytest.raises(tirx.DiagnosticError, match="accumulators per thread must be <= 128"):
        G.make_gemm(1024, 1024, 512, "bfloat16", PINGPONG=True)  # BM 128 x BN 256: 256 fp32 each
    compile_clean(G.make_gemm(1024, 1024, 512, "bfloat16", PINGPONG=True, BN=128, STAGES=6))


def test_gemm_rejects_bad_tiles():
    with pytest.raises(Exception, match="multiples of the tile"):
        G.make_gemm(4000, 4096, 4096, "float16")
    with pytest.raises(Exception, match="setmaxnreg budget"):
        G.make_gemm(3072, 4096, 4096, "float16", BM=192)


def test_wgmma_op_checks_its_arguments():
    @T.function
    def bad(C: T.Tensor((4,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
        acc = T.alloc_local((4,), "float32")
        T.ptx.wgmma_mma_async("m64n7k16", "f16", T.address_of(acc[0]), T.uint64(0), T.uint64(0), 0)
        C[0] = acc[0]

    with pytest.raises(tirx.DiagnosticError, match="multiple of 8"):
        tirx.compile(bad, target=ARCH, cache=False)


def test_other_tma_ops_assemble():
    @T.function
    def tma_misc(X: T.Tensor((64, 64), "float16"), TM: T.Ptr(T.uint8, "tensormap")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128, dynamic_smem_bytes=9216))
        dsm = T.alloc_buffer((9216,), "uint8", scope="shared.dyn")
        bar = T.alloc_shared((1,), "uint64")
        base = (T.ptx.cvta_to_shared(T.address_of(dsm[0])) + T.uint32(1023)) & T.uint32(0xFFFFFC00)
        if T.cuda.thread_idx("x") == 0:
            T.ptx.mbarrier_init(T.address_of(bar[0]), 1)
            T.ptx.fence_proxy_async()
            T.evaluate(T.ptx.mbarrier_arrive_expect_tx(T.address_of(bar[0]), 8192))
            T.ptx.tma_load_3d(base, TM, 0, 0, 0, T.address_of(bar[0]))
            while not T.ptx.mbarrier_try_wait_parity_u32(T.ptx.cvta_to_shared(T.address_of(bar[0])), 0):
                pass
            T.ptx.tma_store_2d(TM, 0, 0, base)
            T.ptx.tma_store_commit()
            T.ptx.tma_store_wait(0)
        X[0, 0] = X[0, 1]

    k = tirx.compile(tma_misc, target=ARCH, cache=False)
    for ins in (
        "cp.async.bulk.tensor.3d",
        "cp.async.bulk.tensor.2d.global.shared::cta",
        "cp.async.bulk.wait_group.read 0",
    ):
        assert ins in k.ptx
    _clean(k)


def test_tma_plan_validates():
    from tirx.runtime.tma import TensorMapPlan

    p = TensorMapPlan("bfloat16", (4096, 4096), (128, 64), 128)
    assert p.box_bytes == 128 * 64 * 2
    with pytest.raises(ValueError, match="swizzle span"):
        TensorMapPlan("float32", (64, 64), (64, 64), 128)
    with pytest.raises(ValueError, match="dtype"):
        TensorMapPlan("float17", (64, 64), (64, 64), 128)
    with pytest.raises(ValueError, match="box dims"):
        TensorMapPlan("float16", (64, 512), (512, 64), 128)


def test_interpreter_refuses_hopper_ops_clearly():
    for f in (G.make_gemm(4096, 4096, 4096, "float16"),):
        # the first op without a CPU model is named: shared-window addresses or inline PTX
        with pytest.raises(OpError, match=r"cannot run T\.(ptx\.|cuda\.cvta_generic_to_shared)"):
            k = tirx.compile(f, target="interp")
            k(*[None] * 5)


# ------------------------------------------------------------------------------- GPU


def _rel(torch, out, ref):
    out = out.double()
    assert not torch.isnan(out).any(), "NaN in output (unwritten element?)"
    return ((out - ref.double()).norm() / ref.double().norm()).item()


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 4095, 4096, (1 << 20) + 77])
def test_gpu_vector_add(n):
    torch = _gpu()
    k = tirx.compile(MB.make_vector_add("float16"), target="cuda")
    a = torch.randn(n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, device="cuda", dtype=torch.float16)
    c = torch.full_like(a, float("nan"))
    k(a, b, c)
    assert torch.equal(c, a + b)


@pytest.mark.gpu
@pytest.mark.parametrize("N,dt", [(4096, "float16"), (8192, "bfloat16"), (2048, "float16")])
def test_gpu_softmax_rmsnorm(N, dt):
    torch = _gpu()
    tdt = getattr(torch, dt)
    rows = 301
    x = torch.randn(rows, N, device="cuda", dtype=tdt) * 3
    w = torch.randn(N, device="cuda", dtype=tdt)
    y = torch.full_like(x, float("nan"))
    blk = MB.softmax_block(N, dt)
    tirx.compile(MB.make_softmax(N, dt, blk), target="cuda")(x, y)
    tol = 4e-3 if dt == "float16" else 3e-2
    assert _rel(torch, y, torch.softmax(x.double(), -1)) < tol
    y.fill_(float("nan"))
    tirx.compile(MB.make_rmsnorm(N, dt, blk, 1e-6), target="cuda")(x, w, y)
    xd = x.double()
    assert _rel(torch, y, xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()) < tol


@pytest.mark.gpu
@pytest.mark.parametrize(
    "M,N,K,dt,cfg",
    [
        (256, 512, 320, "float16", {}),
        (384, 768, 1024, "bfloat16", {}),
        (1024, 1024, 512, "float16", {"BN": 128, "STAGES": 6, "SMS": 7}),
        (4096, 4096, 4096, "bfloat16", {}),
        (512, 512, 256, "float16", {"CLUSTER": 2, "SMS": 4}),
        (1024, 2048, 1024, "bfloat16", {"CLUSTER": 2, "GROUP_M": 2}),
        (4096, 4096, 4096, "float16", {"CLUSTER": 2}),
        (1024, 1024, 1024, "float16", {"TMAP": "global"}),
        (512, 1024, 512, "bfloat16", {"TMAP": "global", "CLUSTER": 2}),
        (1024, 1024, 512, "float16", {"PINGPONG": True, "BM": 128, "BN": 128, "STAGES": 6}),
        (384, 640, 320, "bfloat16", {"PINGPONG": True, "BM": 128, "BN": 128, "SMS": 3}),  # 5 tiles a CTA
        (384, 640, 320, "float16", {"PINGPONG": True, "BM": 128, "BN": 128, "SMS": 2}),  # 8 and 7 tiles
        (256, 512, 256, "float16", {"PINGPONG": True, "BM": 64, "BN": 256, "STAGES": 5, "SMS": 5}),
        # TMA-store epilogue: staging tiles reused by later tiles of the same CTA (SMS 3)
        (1024, 1024, 512, "float16", {"EPI": "tma"}),
        (512, 768, 256, "bfloat16", {"EPI": "tma", "STAGES": 3, "SMS": 3}),
        (1024, 2048, 1024, "float16", {"EPI": "tma", "CLUSTER": 2}),
        (4096, 4096, 4096, "bfloat16", {"EPI": "tma"}),
        (256, 8192, 1024, "bfloat16", {"EPI": "tma", "BN": 64, "STAGES": 8, "GROUP_M": 1}),
        (384, 512, 320, "float16", {"EPI": "tma", "BN": 128, "STAGES": 4, "SMS": 2}),
        # clusters sharing A (side by side along N): one row-block, several row-blocks with
        # groups, 3 work units a cluster, the register epilogue, BM 64 (32-row halves)
        (
            128,
            8192,
            1024,
            "float16",
            {"EPI": "tma", "BN": 64, "STAGES": 8, "GROUP_M": 1, "CLUSTER": 2, "SHARE": "A"},
        ),
        (512, 1024, 512, "bfloat16", {"CLUSTER": 2, "SHARE": "A", "BN": 128, "GROUP_M": 2}),
        (256, 1536, 320, "float16", {"CLUSTER": 2, "SHARE": "A", "BN": 128, "SMS": 4, "EPI": "tma"}),
        (
            128,
            2048,
            512,
            "bfloat16",
            {"BM": 64, "BN": 64, "STAGES": 8, "CLUSTER": 2, "SHARE": "A", "GROUP_M": 1, "PRODUCER_REGS": 40},
        ),
    ],
)
def test_gpu_gemm(M, N, K, dt, cfg):
    torch = _gpu()
    tdt = getattr(torch, dt)
    a = torch.randn(M, K, device="cuda", dtype=tdt)
    b = torch.randn(N, K, device="cuda", dtype=tdt)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=tdt)
    pa, pb = G.plans_for(M, N, K, dt, cfg)
    k = tirx.compile(G.make_gemm(M, N, K, dt, **cfg), target="cuda")
    desc = pa.device if cfg.get("TMAP") == "global" else pa.param
    descb = pb.device if cfg.get("TMAP") == "global" else pb.param
    extra = (G.c_plan(M, N, dt).param(c),) if cfg.get("EPI") == "tma" else ()
    k(a, b, c, desc(a), descb(b), *extra)
    torch.cuda.synchronize()
    tol = 2e-3 if dt == "float16" else 1e-2
    assert _rel(torch, c, a.double() @ b.double().t()) < tol


def test_gemm_tuned_candidates_are_best_config_s_and_compile():
    """``gemm_tuned`` is ``best_config`` as a use of ``@T.autotune``: its candidates include every
    tile set ``best_config`` picks, the pruning keeps the ones that divide the problem (GROUP_M no
    more than the tile rows), and each kept candidate compiles clean for sm_90a."""
    picks = {
        tuple(sorted(G.best_config(*s).items()))
        for s in ((4096, 4096, 4096), (128, 8192, 8192), (1024, 2048, 1024))
    }
    cands = {tuple(sorted(G._fits([c], {"M": 4096, "N": 8192})[0].items())) for c in G.CANDIDATES}
    assert {p for p in picks if dict(p)["GROUP_M"] == 8} <= cands
    kept = G._fits(G.CANDIDATES, {"M": 128, "N": 8192})
    assert kept and all(c["GROUP_M"] == 1 for c in kept)
    assert G._fits(G.CANDIDATES, {"M": 128, "N": 8200}) == []  # no tile divides N
    assert G.gemm_tuned.key == ("M", "N", "K", "DT") and G.gemm_tuned.fn is G.gemm_tn
    for c in G._fits(G.CANDIDATES, {"M": 1024, "N": 1024})[:2]:
        _clean(
            tirx.compile(
                G.gemm_tuned.specialize(M=1024, N=1024, K=512, DT="bfloat16", **c), target=ARCH, cache=False
            )
        )


@pytest.mark.gpu
def test_gpu_gemm_tuned_times_every_candidate_and_runs_the_winner(tmp_path, monkeypatch):
    torch = _gpu()
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path))
    M = N = K = 2048
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    tuned = G._tuned()  # a fresh tuner: nothing remembered
    tuned(a, b, c, M=M, N=N, K=K, DT="bfloat16")
    torch.cuda.synchronize()
    assert _rel(torch, c, a.double() @ b.double().t()) < 1e-2
    key = (M, N, K, "bfloat16")
    timed = tuned.timings[key]
    assert len(timed) == len(G._fits(G.CANDIDATES, {"M": M, "N": N})) and not tuned.failures[key]
    assert tuned.best_config(key) == min(timed, key=lambda t: t[1])[0]
