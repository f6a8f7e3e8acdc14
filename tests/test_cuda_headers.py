"""Generated CUDA includes only the headers its kernel needs (issue #16, compile time): every
header NVRTC parses costs every cold compile (cuda_fp8.h alone ~15-20 ms on a 2-core x86_64),
so a helper that needs one is emitted, with its include, only where its op is used."""

from __future__ import annotations

import pytest

import tirx
from tirx.script import tirx as T


def _packers(bf16: bool, fp8: bool):
    @T.function
    def k(F: T.Tensor((4,), T.float32), U: T.Tensor((2,), T.uint32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        if T.constexpr(bf16):
            U[0] = T.cuda.float22bfloat162_rn(F[0], F[1])
        if T.constexpr(fp8):
            U[1] = T.cuda.fp8x4_e4m3_from_float4(F[0], F[1], F[2], F[3])

    return k


def _source(f) -> str:
    from tirx.codegen import cuda

    return cuda.generate(f).text


@pytest.mark.parametrize(("bf16", "fp8"), [(True, False), (False, True), (True, True)])
def test_packed_conversion_headers_follow_the_ops_used(bf16, fp8):
    src = _source(_packers(bf16, fp8))
    assert ("cuda_fp8.h" in src) == fp8
    assert ("tirx_fp8x4_e4m3(float" in src) == fp8
    assert ("tirx_float2_to_bf162(float" in src) == bf16
    assert src.count("tirx_fp8x4_e4m3(float") <= 1 and src.count("tirx_float2_to_bf162(float") <= 1


@pytest.mark.parametrize(("bf16", "fp8"), [(True, False), (False, True), (True, True)])
def test_packed_conversion_helpers_compile_alone_and_together(bf16, fp8):
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(_packers(bf16, fp8), target="cuda -arch=sm_90a", cache=False)
    assert k.cubin


def test_bf16_attention_kernel_does_not_parse_the_fp8_header():
    attention = pytest.importorskip("tirx.kernels.hopper.attention")
    src = _source(attention.make_attention(1, 2, 256, 64))
    assert "tirx_float2_to_bf162(" in src  # P packed to bf16 pairs
    assert "cuda_fp8.h" not in src
