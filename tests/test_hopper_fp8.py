"""FP8 GEMM (tirx/kernels/hopper/fp8_gemm.py) and fp8 wgmma: every kernel compiles to an sm_90a
cubin with a clean NVRTC log, no spills and the k32 e4m3/e5m2 wgmma (no GPU needed); the op
checks its shape/dtype pairing; fp8 tensor-map plans. On a GPU (skipped cleanly without one):
correctness against a float32 reference of the dequantized inputs, outputs poisoned with NaN."""

from __future__ import annotations

import os
import re

import pytest
from gpu_util import require_gpu as _gpu
from hopper_util import ARCH, assert_round_trips, compile_clean, no_disk_cache  # noqa: F401 (an autouse fixture)

pytest.importorskip("cuda.bindings.nvrtc")

from hypothesis import given
from hypothesis import strategies as st

import tirx
from tirx.kernels.hopper import fp8_gemm as F
from tirx.script import tirx as T


@pytest.mark.parametrize("name", sorted(F.KERNELS))
def test_fp8_kernels_compile_clean_without_spills(name):
    compile_clean(F.KERNELS[name](), max_registers=168)


@pytest.mark.parametrize("name", sorted(F.KERNELS))
def test_fp8_text_roundtrip(name):
    assert_round_trips(F.KERNELS[name]())


@pytest.mark.parametrize("dt,ab", [("float8_e4m3fn", "e4m3"), ("float8_e5m2", "e5m2")])
@pytest.mark.parametrize("bn", [256, 128])
def test_fp8_ptx_has_k32_wgmma_and_the_pipeline(dt, ab, bn):
    k = tirx.compile(F.make_fp8_gemm(4096, 4096, 4096, dt, BN=bn, STAGES=4 if bn == 256 else 6), target=ARCH,
                     cache=False)  # fmt: skip
    ptx = k.ptx
    ins = re.findall(r"wgmma\.mma_async\.sync\.aligned\.\S+ \{[^}]*\}, %?\w+, %?\w+, [^;]*;", ptx)
    assert ins, "no wgmma.mma_async"
    for i in ins:  # fp8 wgmma is K-major only: scale-d, imm-scale-a, imm-scale-b and no transposes
        assert i.startswith(f"wgmma.mma_async.sync.aligned.m64n{bn}k32.f32.{ab}.{ab} "), i
        assert i.endswith("p, 1, 1;"), i
    assert len(ins) == 128 // 32  # one k-block: BK / 32 instructions
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" in ptx
    assert "setmaxnreg.inc.sync.aligned.u32 232" in ptx and "wgmma.wait_group.sync.aligned 1" in ptx
    # stage bytes: BM*BK + BN*BK fp8 bytes expected per full barrier
    assert f"{128 * 128 + bn * 128}" in k.source
    assert [p.kind for p in k.info.params] == ["buffer"] * 5 + ["tensormap"] * 3


def test_fp8_tma_store_epilogue():
    k = tirx.compile(F.make_fp8_gemm(4096, 4096, 4096), target=ARCH, cache=False)  # EPI="tma" by default
    ptx = k.ptx
    # 4 chunks of 64 x 64 per consumer, each: 8 x 2 packed bf16 pairs to the swizzled buffer
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group") == 4
    assert ptx.count("cvt.rn.bf16x2.f32") == 64 and ptx.count("st.shared::cta.b32") == 64
    assert "cp.async.bulk.wait_group.read 1" in ptx and "cp.async.bulk.wait_group.read 0" in ptx
    assert "fence.proxy.async.shared::cta" in ptx and "bar.sync" in ptx
    assert "st.global" not in ptx  # every output byte goes through the copy engine
    direct = tirx.compile(F.make_fp8_gemm(4096, 4096, 4096, EPI="direct"), target=ARCH, cache=False).ptx
    assert "st.global" in direct and "bulk_group" not in direct
    with pytest.raises(Exception, match="EPI"):
        F.make_fp8_gemm(4096, 4096, 4096, BN=64)


def test_fp8_cluster_multicast():
    k = tirx.compile(F.make_fp8_gemm(8192, 8192, 8192, CLUSTER=2), target=ARCH, cache=False)
    assert ".multicast::cluster" in k.ptx and "mapa.shared::cluster.u32" in k.ptx
    assert k.info.entry.cluster is not None


def test_fp8_sass_has_qgmma_and_no_local_memory():
    from tirx.tools.cli import find_nvdisasm

    exe = find_nvdisasm()
    if exe is None:
        pytest.skip("nvdisasm not installed")
    import subprocess
    import tempfile

    k = tirx.compile(F.make_fp8_gemm(4096, 4096, 4096), target=ARCH, cache=False)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.cubin")
        with open(path, "wb") as fh:
            fh.write(k.cubin)
        sass = subprocess.run([exe, "-c", path], capture_output=True, text=True, check=True).stdout
    assert sass.count("QGMMA.64x256x32.F32.E4M3.E4M3") == 4
    assert "HMMA" not in sass and "LDL" not in sass and "STL" not in sass


def test_fp8_gemm_rejects_bad_parameters():
    with pytest.raises(Exception, match="multiples of the tile"):
        F.make_fp8_gemm(4096, 4096, 4000)
    with pytest.raises(Exception, match="BK must be 128"):
        F.make_fp8_gemm(4096, 4096, 4096, BK=64)
    with pytest.raises(Exception, match="227 KiB"):
        F.make_fp8_gemm(4096, 4096, 4096, BN=128, STAGES=7)  # 7 x 32 KiB + 32 KiB of epilogue buffers
    F.make_fp8_gemm(4096, 4096, 4096, BN=128, STAGES=7, EPI="direct")  # fits without them
    with pytest.raises(Exception, match="227 KiB"):
        F.make_fp8_gemm(4096, 4096, 4096, STAGES=5, EPI="direct")
    with pytest.raises(Exception, match="float8_e4m3fn or float8_e5m2"):
        F.make_fp8_gemm(4096, 4096, 4096, "float16")


def _wgmma_kernel(shape: str, dt: str):
    @T.function
    def k(C: T.Tensor((4,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
        acc = T.alloc_local((128,), "float32")
        T.ptx.wgmma_mma_async(shape, dt, T.address_of(acc[0]), T.uint64(0), T.uint64(0), 0)
        C[0] = acc[0]

    return k


@pytest.mark.parametrize(
    "shape,dt,msg",
    [
        ("m64n256k16", "e4m3", "e4m3 inputs take shape k32"),
        ("m64n256k32", "bf16", "bf16 inputs take shape k16"),
        ("m64n256k32", "e3m4", "dtype must be"),
        ("m64n256k8", "e4m3", "shape must be"),
    ],
)
def test_wgmma_checks_fp8_shape_and_dtype(shape, dt, msg):
    with pytest.raises(tirx.DiagnosticError, match=msg):
        tirx.compile(_wgmma_kernel(shape, dt), target=ARCH, cache=False)


@given(
    n=st.sampled_from(range(8, 257, 8)), dt=st.sampled_from(["e4m3", "e5m2", "float8_e4m3fn", "float8_e5m2"])
)
def test_wgmma_fp8_source_names_n_half_accumulators(n, dt):
    from tirx.codegen.cuda import generate

    src = generate(_wgmma_kernel(f"m64n{n}k32", dt)).text
    ab = dt.replace("float8_", "").replace("fn", "")
    line = next(s for s in src.splitlines() if "wgmma.mma_async" in s)
    assert f"m64n{n}k32.f32.{ab}.{ab}" in line
    assert line.count('"+f"') == n // 2 and "p, 1, 1;" in line and "p, 1, 1, 0" not in line


def test_tma_plan_takes_fp8():
    from tirx.runtime.tma import TensorMapPlan

    pa, pb, pc = F.plans(4096, 2048, 1024, CLUSTER=2)
    assert pa.box == (128, 128) and pa.box_bytes == 128 * 128
    assert pb.box == (128, 128)
    assert pc.dtype == "bfloat16" and pc.shape == (4096, 2048) and pc.box_bytes == 8192
    assert TensorMapPlan("float8_e5m2", (64, 256), (64, 128), 128).box_bytes == 64 * 128
    with pytest.raises(ValueError, match="swizzle span"):
        TensorMapPlan("float8_e4m3fn", (64, 512), (64, 256), 128)


# ------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
@pytest.mark.parametrize(
    "M,N,K,dt,cfg",
    [
        (256, 512, 384, "float8_e4m3fn", {"SMS": 3, "EPI": "direct"}),
        (1024, 1024, 512, "float8_e4m3fn", {"BN": 128, "STAGES": 6, "SMS": 7, "EPI": "direct"}),
        (512, 1024, 1024, "float8_e4m3fn", {"CLUSTER": 2, "SMS": 4, "EPI": "direct"}),
        (1024, 2048, 768, "float8_e4m3fn", {"CLUSTER": 2, "BN": 128, "GROUP_M": 2, "EPI": "direct"}),
        (2048, 2048, 2048, "float8_e5m2", {"EPI": "direct"}),
        (4096, 4096, 4096, "float8_e4m3fn", {"EPI": "direct"}),
        (256, 512, 384, "float8_e4m3fn", {"SMS": 3}),  # EPI="tma", the default
        (1024, 1024, 512, "float8_e4m3fn", {"BN": 128, "STAGES": 6, "SMS": 7}),
        (1024, 2048, 768, "float8_e4m3fn", {"CLUSTER": 2, "GROUP_M": 2, "SMS": 6}),
        (2048, 2048, 2048, "float8_e5m2", {}),
        (4096, 4096, 4096, "float8_e4m3fn", {}),
        (8192, 1024, 8192, "float8_e4m3fn", {"CLUSTER": 2}),
    ],
)
def test_gpu_fp8_gemm(M, N, K, dt, cfg):
    torch = _gpu()
    tdt = getattr(torch, dt)
    a = torch.randn(M, K, device="cuda").to(tdt)
    b = torch.randn(N, K, device="cuda").to(tdt)
    sa = torch.rand(1, device="cuda") + 0.5
    sb = torch.rand(1, device="cuda") * 0.02 + 0.01
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    pa, pb, pc = F.plans(M, N, K, dt, BN=cfg.get("BN", 256), CLUSTER=cfg.get("CLUSTER", 1))
    k = tirx.compile(F.make_fp8_gemm(M, N, K, dt, **cfg), target="cuda")
    k(a, b, c, sa, sb, pa.param(a), pb.param(b), pc.param(c))
    torch.cuda.synchronize()
    ref = (a.double() @ b.double().t()) * (sa.double() * sb.double())
    out = c.double()
    assert not torch.isnan(out).any(), "NaN in output (unwritten element?)"
    assert ((out - ref).norm() / ref.norm()).item() < 1e-2
