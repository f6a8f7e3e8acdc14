"""The sparse warp-level MMA rows ``mma.sp{::ordered_metadata}.sync.aligned`` (tirx/ops/ptx_rows_mma.py).

Every form TIRx's table has (seven rows, each with and without ``::ordered_metadata`` and,
for the integer ones, ``.satfinite``): TIRx's printed text loads in tirx and prints back to
the same text, the chain (and ``T.ptx["mma.sp..."]``) written in a kernel builds the same IR,
print -> load is structurally equal and a fixpoint, and the CUDA compiles through NVRTC for
sm_90a with the instruction and register counts TIRx's asm has. A selector outside its
shape's range, a wrong operand count or type, and a shape outside a form's line are located
errors; the interpreter refuses the forms (it has no model of them: tests/test_ptx_mma_interp.py).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ptx_rows_util import BODY_LINE, family_tests, kernel

import tirx

#: (chain written in a kernel, TIRx's printed text of it, the (d, a, b, c) register counts of
#: TIRx's asm), recorded from apache-tvm-tirx 0.1.0a4 running the chain in the same kernel
#: (tests/ptx_rows_util.py's; y: uint32 registers, z: float32 ones)
_RECORDED: list[tuple[str, str, tuple[int, int, int, int]]] = [
    ('T.ptx.mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16(y[0], y[1], y[0], y[1], y[2], y[3], y[4], y[5], y[7], 3)',
     'T.ptx.mma(y[0], y[1], y[0], y[1], y[2], y[3], y[4], y[5], y[7], T.int32(3), "sp", "sync", "aligned", "m16n8k16", "row", "col", "f16", "f16", "f16", "f16", "")',
     (2, 2, 2, 2)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16(y[0], y[1], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[7], 1)',
     'T.ptx.mma(y[0], y[1], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[7], T.int32(1), "sp", "sync", "aligned", "m16n8k32", "row", "col", "f16", "f16", "f16", "f16", "")',
     (2, 4, 4, 2)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], 2)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], T.int32(2), "sp", "sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], 3)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], T.int32(3), "sp", "sync", "aligned", "m16n8k16", "row", "col", "f32", "bf16", "bf16", "f32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], 1)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], T.int32(1), "sp", "sync", "aligned", "m16n8k8", "row", "col", "f32", "tf32", "tf32", "f32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], 1)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], T.int32(1), "sp", "sync", "aligned", "m16n8k32", "row", "col", "f32", "f16", "f16", "f32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], 0)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], T.int32(0), "sp", "sync", "aligned", "m16n8k32", "row", "col", "f32", "bf16", "bf16", "f32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], 1)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], T.int32(1), "sp", "sync", "aligned", "m16n8k16", "row", "col", "f32", "tf32", "tf32", "f32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], 0)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], T.int32(0), "sp", "sync", "aligned", "m16n8k64", "row", "col", "f32", "e4m3", "e4m3", "f32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k64.row.col.f32.e5m2.e4m3.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], 0)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], T.int32(0), "sp", "sync", "aligned", "m16n8k64", "row", "col", "f32", "e5m2", "e4m3", "f32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], 1)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], T.int32(1), "sp", "sync", "aligned", "m16n8k32", "row", "col", "", "s32", "s8", "u8", "s32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], 1)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], T.int32(1), "sp", "sync", "aligned", "m16n8k32", "row", "col", "satfinite", "s32", "s8", "u8", "s32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k64.row.col.s32.u4.s4.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], 1)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], T.int32(1), "sp", "sync", "aligned", "m16n8k64", "row", "col", "", "s32", "u4", "s4", "s32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], 1)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], T.int32(1), "sp", "sync", "aligned", "m16n8k64", "row", "col", "satfinite", "s32", "u4", "s4", "s32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], 0)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], T.int32(0), "sp", "sync", "aligned", "m16n8k64", "row", "col", "", "s32", "s8", "s8", "s32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k64.row.col.satfinite.s32.s8.s8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], 0)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], T.int32(0), "sp", "sync", "aligned", "m16n8k64", "row", "col", "satfinite", "s32", "s8", "s8", "s32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k128.row.col.s32.u4.u4.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], 0)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], T.int32(0), "sp", "sync", "aligned", "m16n8k128", "row", "col", "", "s32", "u4", "u4", "s32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp.sync.aligned.m16n8k128.row.col.satfinite.s32.u4.u4.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], 0)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], T.int32(0), "sp", "sync", "aligned", "m16n8k128", "row", "col", "satfinite", "s32", "u4", "u4", "s32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16(y[0], y[1], y[0], y[1], y[2], y[3], y[4], y[5], y[7], 3)',
     'T.ptx.mma(y[0], y[1], y[0], y[1], y[2], y[3], y[4], y[5], y[7], T.int32(3), "sp::ordered_metadata", "sync", "aligned", "m16n8k16", "row", "col", "f16", "f16", "f16", "f16", "")',
     (2, 2, 2, 2)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16(y[0], y[1], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[7], 1)',
     'T.ptx.mma(y[0], y[1], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[7], T.int32(1), "sp::ordered_metadata", "sync", "aligned", "m16n8k32", "row", "col", "f16", "f16", "f16", "f16", "")',
     (2, 4, 4, 2)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], 2)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], T.int32(2), "sp::ordered_metadata", "sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], 3)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], T.int32(3), "sp::ordered_metadata", "sync", "aligned", "m16n8k16", "row", "col", "f32", "bf16", "bf16", "f32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], 1)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], z[4], z[5], z[6], z[7], y[7], T.int32(1), "sp::ordered_metadata", "sync", "aligned", "m16n8k8", "row", "col", "f32", "tf32", "tf32", "f32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], 1)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], T.int32(1), "sp::ordered_metadata", "sync", "aligned", "m16n8k32", "row", "col", "f32", "f16", "f16", "f32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], 0)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], T.int32(0), "sp::ordered_metadata", "sync", "aligned", "m16n8k32", "row", "col", "f32", "bf16", "bf16", "f32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], 1)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], T.int32(1), "sp::ordered_metadata", "sync", "aligned", "m16n8k16", "row", "col", "f32", "tf32", "tf32", "f32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], 0)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], T.int32(0), "sp::ordered_metadata", "sync", "aligned", "m16n8k64", "row", "col", "f32", "e4m3", "e4m3", "f32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e5m2.e4m3.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], 0)',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], z[4], z[5], z[6], z[7], y[7], T.int32(0), "sp::ordered_metadata", "sync", "aligned", "m16n8k64", "row", "col", "f32", "e5m2", "e4m3", "f32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], 1)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], T.int32(1), "sp::ordered_metadata", "sync", "aligned", "m16n8k32", "row", "col", "", "s32", "s8", "u8", "s32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], 1)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], T.int32(1), "sp::ordered_metadata", "sync", "aligned", "m16n8k32", "row", "col", "satfinite", "s32", "s8", "u8", "s32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k64.row.col.s32.u4.s4.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], 1)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], T.int32(1), "sp::ordered_metadata", "sync", "aligned", "m16n8k64", "row", "col", "", "s32", "u4", "s4", "s32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], 1)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[7], T.int32(1), "sp::ordered_metadata", "sync", "aligned", "m16n8k64", "row", "col", "satfinite", "s32", "u4", "s4", "s32", "")',
     (4, 2, 2, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], 0)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], T.int32(0), "sp::ordered_metadata", "sync", "aligned", "m16n8k64", "row", "col", "", "s32", "s8", "s8", "s32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k64.row.col.satfinite.s32.s8.s8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], 0)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], T.int32(0), "sp::ordered_metadata", "sync", "aligned", "m16n8k64", "row", "col", "satfinite", "s32", "s8", "s8", "s32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k128.row.col.s32.u4.u4.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], 0)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], T.int32(0), "sp::ordered_metadata", "sync", "aligned", "m16n8k128", "row", "col", "", "s32", "u4", "u4", "s32", "")',
     (4, 4, 4, 4)),
    ('T.ptx.mma.sp__ordered_metadata.sync.aligned.m16n8k128.row.col.satfinite.s32.u4.u4.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], 0)',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], T.int32(0), "sp::ordered_metadata", "sync", "aligned", "m16n8k128", "row", "col", "satfinite", "s32", "u4", "u4", "s32", "")',
     (4, 4, 4, 4)),
]  # fmt: skip


def _instr(chain: str) -> str:
    """The PTX instruction a chain spells: ``T.ptx.mma.sp__ordered_metadata.sync...`` ->
    ``mma.sp::ordered_metadata.sync...``."""
    return chain.split("(")[0].removeprefix("T.ptx.").replace("__", "::")


CASES = [(chain, printed, _instr(chain)) for chain, printed, _ in _RECORDED]

NO_COMPILE: dict[str, str] = {}

_K16 = "T.ptx.mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"
_K32 = "T.ptx.mma.sp.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16"
_REGS8 = "y[0], y[1], y[0], y[1], y[2], y[3], y[4], y[5]"
_REGS12 = "y[0], y[1], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[4], y[5]"

BAD_CHAINS = [
    # the selector's range follows who holds the metadata (TIRx's message: "must be one of 0, 1")
    (f"{_K32}({_REGS12}, y[7], 3)", ["operand 'f'", "must be one of 0, 1, got 3", "thread pair"]),
    (f"{_K16}({_REGS8}, y[7], 4)", ["must be one of 0, 1, 2, 3, got 4"]),
    (f"{_K16}({_REGS8}, y[7], -1)", ["must be one of 0, 1, 2, 3, got -1"]),
    ("T.ptx.mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], "
     "y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], 1)", ["must be one of 0, got 1", "all four"]),
    # operand counts: the d, a, b, c fragments, then e and f
    (f"{_K16}({_REGS8}, y[7])", ["takes 10 operand(s)", "d0, d1, a0, a1, b0, b1, c0, c1, e, f", "got 9"]),
    (f"{_K16}({_REGS8}, y[6], y[7], 0)", ["takes 10 operand(s)", "got 11"]),
    (f"{_K32}({_REGS8}, y[7], 0)", ["takes 14 operand(s)", "a0, a1, a2, a3", "got 10"]),
    # the metadata is a u32 register, the selector a literal
    (f"{_K16}({_REGS8}, w[7], 0)", ["operand 'e'", "uint32", "got int32"]),
    (f"{_K16}({_REGS8}, y[7], w[0])", ["operand 'f'", "integer literal"]),
    # shapes outside a form's selector line, types no line pairs, modifiers no form has
    ("T.ptx.mma.sp.sync.aligned.m16n8k128.row.col.s32.s8.s8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], "
     "y[3], y[4], y[5], y[6], y[7], y[4], y[5], y[6], y[7], y[7], 0)", ["takes .s8 only at .m16n8k64"]),
    ("T.ptx.mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.bf16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], "
     "y[3], z[4], z[5], z[6], z[7], y[7], 0)", ["no sparse mma pairs .f16 with .bf16"]),
    (f"T.ptx.mma.sp.sync.aligned.m16n8k16.row.col.satfinite.f16.f16.f16.f16({_REGS8}, y[7], 0)",
     ["'satfinite' is not a modifier allowed here", "f16"]),
    (f"T.ptx.mma.sp.sync.aligned.m16n8k16.row.row.f16.f16.f16.f16({_REGS8}, y[7], 0)",
     ["'row' is not a modifier allowed here", "col"]),
]  # fmt: skip

_SLOTS16 = '"sp", "sync", "aligned", "m16n8k16", "row", "col", "f16", "f16", "f16", "f16", ""'
BAD_TEXT = [
    (f'T.ptx.mma({_REGS8}, y[7], T.int32(7), {_SLOTS16})', ["must be one of 0, 1, 2, 3, got 7"]),
    (f'T.ptx.mma({_REGS8}, T.int32(0), {_SLOTS16})', ["takes 10 operand(s)", "got 9"]),
    (f'T.ptx.mma({_REGS8}, y[7], T.int32(0), "sp", "sync", "aligned", "m16n8k16", "row", "col", "f16", "f16", '
     '"f16", "f16")', ["takes 11 modifier strings"]),
    (f'T.ptx.mma({_REGS8}, y[7], T.int32(0), "sp::unordered", "sync", "aligned", "m16n8k16", "row", "col", '
     '"f16", "f16", "f16", "f16", "")', ["slot .spvariant is 'sp::unordered'", "sp::ordered_metadata"]),
]  # fmt: skip

globals().update(family_tests(CASES, BAD_CHAINS, BAD_TEXT, NO_COMPILE))


# ----------------------------------------------------------------------------- the subscript form
@pytest.mark.parametrize("chain, printed, _instr", CASES, ids=[f"{i}" for i in range(len(CASES))])
def test_the_subscript_form_builds_the_chain(chain, printed, _instr):
    # T.ptx["mma.sp::ordered_metadata.sync..."](...) is the chain T.ptx.mma.sp__ordered_metadata.sync...
    args = chain[chain.index("(") :]
    built = kernel(f'T.ptx["{_instr}"]{args}')
    tirx.assert_structural_equal(built, kernel(chain))
    assert printed in tirx.dumps(built)


# ----------------------------------------------------------------------------- register counts
def _asm_groups(src: str, instr: str) -> tuple[int, ...]:
    """The register counts of the brace groups of ``instr``'s inline asm in CUDA ``src``."""
    m = re.search(r'asm volatile\("' + re.escape(instr) + r" ([^;]*);", src)
    assert m is not None, src[-1500:]
    return tuple(len(g.split(",")) for g in re.findall(r"\{([^}]*)\}", m.group(1)))


@pytest.mark.parametrize("i", range(len(_RECORDED)))
def test_the_asm_has_tirx_register_counts(i):
    # d, a, b, c as TIRx's asm groups them; e is one register and f the selector after them
    from tirx.codegen.cuda import generate

    chain, _printed, counts = _RECORDED[i]
    src = generate(kernel(chain, keep=True)).text
    assert _asm_groups(src, _instr(chain)) == counts
    n = sum(counts)
    assert re.search(rf"\}}, %{n}, %{n + 1};", src), src[-1500:]  # e, then the selector ("n" immediate)


_SP = ("sp", "sync", "aligned")
#: (row, modifiers, registers of d, a, b, c, e, f) per the PTX ISA's sparse fragment tables
SPARSE_COUNTS = [
    ("mma_sp_f16acc", (*_SP, "m16n8k16", "row", "col", "f16", "f16", "f16", "f16"), [2, 2, 2, 2, 1, 1]),
    ("mma_sp_f16acc_pair", (*_SP, "m16n8k32", "row", "col", "f16", "f16", "f16", "f16"), [2, 4, 4, 2, 1, 1]),
    ("mma_sp", (*_SP, "m16n8k8", "row", "col", "f32", "tf32", "tf32", "f32"), [4, 2, 2, 4, 1, 1]),
    ("mma_sp", (*_SP, "m16n8k16", "row", "col", "f32", "bf16", "bf16", "f32"), [4, 2, 2, 4, 1, 1]),
    ("mma_sp_pair", (*_SP, "m16n8k16", "row", "col", "f32", "tf32", "tf32", "f32"), [4, 4, 4, 4, 1, 1]),
    ("mma_sp_all", (*_SP, "m16n8k64", "row", "col", "f32", "e4m3", "e5m2", "f32"), [4, 4, 4, 4, 1, 1]),
    ("mma_sp_int_pair", (*_SP, "m16n8k32", "row", "col", "", "s32", "s8", "s8", "s32"), [4, 2, 2, 4, 1, 1]),
    ("mma_sp_int_pair", (*_SP, "m16n8k64", "row", "col", "", "s32", "u4", "s4", "s32"), [4, 2, 2, 4, 1, 1]),
    ("mma_sp_int_all", (*_SP, "m16n8k64", "row", "col", "satfinite", "s32", "s8", "u8", "s32"), [4, 4, 4, 4, 1, 1]),
    ("mma_sp_int_all", (*_SP, "m16n8k128", "row", "col", "", "s32", "u4", "s4", "s32"), [4, 4, 4, 4, 1, 1]),
    # the dense row of a shape holds twice the sparse A registers
    ("mma", ("sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32"), [4, 4, 2, 4, 0, 0]),
]  # fmt: skip


@pytest.mark.parametrize("row, mods, want", SPARSE_COUNTS, ids=[f"{r}-{m[3]}" for r, m, _ in SPARSE_COUNTS])
def test_sparse_a_holds_half_the_dense_registers(row, mods, want):
    # PTX ISA 9.7.14.6.2: A is M x K/2 (2:4 structured sparse); B, C and D are the dense ones
    from tirx.ops.ptx_table import opcodes

    lay = {r.name: r for r in opcodes()["ptx.mma"].rows}[row].layout(mods)
    assert [sum(1 for o in lay if o.name.rstrip("0123456789") == k) for k in "dabcef"] == want


# ----------------------------------------------------------------------------- the selector
#: the selectors TIRx 0.1.0a4 accepts per (accumulator, shape, A=B type) among the shapes the
#: forms' slots list (empty: no form takes the combination), recorded with float32 (f32) or
#: uint32 registers; every value from -1 to 4 was tried
TIRX_SELECTORS: dict[tuple[str, str, str], tuple[int, ...]] = {
    ("f16", "m16n8k16", "f16"): (0, 1, 2, 3), ("f16", "m16n8k32", "f16"): (0, 1),
    ("f32", "m16n8k8", "f16"): (), ("f32", "m16n8k8", "bf16"): (), ("f32", "m16n8k8", "tf32"): (0, 1, 2, 3),
    ("f32", "m16n8k16", "f16"): (0, 1, 2, 3), ("f32", "m16n8k16", "bf16"): (0, 1, 2, 3),
    ("f32", "m16n8k16", "tf32"): (0, 1), ("f32", "m16n8k32", "f16"): (0, 1), ("f32", "m16n8k32", "bf16"): (0, 1),
    ("f32", "m16n8k32", "tf32"): (), ("f32", "m16n8k64", "e4m3"): (0,), ("f32", "m16n8k64", "e5m2"): (0,),
    ("s32", "m16n8k32", "u8"): (0, 1), ("s32", "m16n8k32", "s8"): (0, 1), ("s32", "m16n8k32", "u4"): (),
    ("s32", "m16n8k32", "s4"): (), ("s32", "m16n8k64", "u8"): (0,), ("s32", "m16n8k64", "s8"): (0,),
    ("s32", "m16n8k64", "u4"): (0, 1), ("s32", "m16n8k64", "s4"): (0, 1), ("s32", "m16n8k128", "u8"): (),
    ("s32", "m16n8k128", "s8"): (), ("s32", "m16n8k128", "u4"): (0,), ("s32", "m16n8k128", "s4"): (0,),
}  # fmt: skip

_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "u8": 8, "s8": 8, "u4": 4, "s4": 4,
         "f32": 32, "s32": 32}  # fmt: skip


def _call(sp: str, shape: str, acc: str, at: str, bt: str, sat: bool, sel: int) -> str:
    """A chain of a sparse form with the PTX ISA's register counts (A is M x K/2)."""
    m, n, k = (int(x) for x in re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape).groups())
    nd = nc = m * n // 32 * _BITS[acc] // 32
    na, nb = m * k // 2 // 32 * _BITS[at] // 32, n * k // 32 * _BITS[at] // 32
    acc_reg = "z" if acc == "f32" else "y"
    ops = ([f"{acc_reg}[{i}]" for i in range(nd)] + [f"y[{i % 8}]" for i in range(na + nb)]
           + [f"{acc_reg}[{(i + 4) % 8}]" for i in range(nc)] + ["y[7]", str(sel)])  # fmt: skip
    mods = ".".join([sp.replace("::", "__"), "sync", "aligned", shape, "row", "col", *(["satfinite"] * sat),
                     acc, at, bt, acc])  # fmt: skip
    return f"T.ptx.mma.{mods}({', '.join(ops)})"


@settings(max_examples=120)
@given(
    st.sampled_from(sorted(TIRX_SELECTORS)),
    st.integers(-1, 4),
    st.sampled_from(["sp", "sp::ordered_metadata"]),
)
def test_the_selector_range_is_tirx(form, sel, sp):
    # tirx takes exactly the selectors (and shape/type lines) TIRx takes; a refusal is located
    acc, shape, at = form
    call = _call(sp, shape, acc, at, at, False, sel)
    if sel in TIRX_SELECTORS[form]:
        kernel(call)
        return
    with pytest.raises(tirx.DiagnosticError) as ei:
        kernel(call)
    msg = str(ei.value)
    assert re.search(rf"\.py:{BODY_LINE}:5", msg), msg
    if TIRX_SELECTORS[form]:
        allowed = ", ".join(map(str, TIRX_SELECTORS[form]))
        assert f"operand 'f' (the sparsity selector) must be one of {allowed}, got {sel}" in msg, msg
    else:
        assert f"takes .{at} only at" in msg, msg


#: the type pairs a form may mix: B of A's group (f16, bf16 and tf32 only with themselves)
_GROUP = {"e4m3": ("e4m3", "e5m2"), "e5m2": ("e4m3", "e5m2"), "u8": ("u8", "s8"), "s8": ("u8", "s8"),
          "u4": ("u4", "s4"), "s4": ("u4", "s4")}  # fmt: skip


@st.composite
def _valid_forms(draw):
    acc, shape, at = draw(st.sampled_from(sorted(f for f, sels in TIRX_SELECTORS.items() if sels)))
    bt = draw(st.sampled_from(_GROUP.get(at, (at,))))
    sat = acc == "s32" and draw(st.booleans())
    sp = draw(st.sampled_from(["sp", "sp::ordered_metadata"]))
    sel = draw(st.sampled_from(TIRX_SELECTORS[(acc, shape, at)]))
    return sp, shape, acc, at, bt, sat, sel


@settings(max_examples=60)
@given(_valid_forms())
def test_valid_forms_round_trip(form):
    # every valid form prints as TIRx's positional form (the 10 or 11 slot strings and the
    # empty marker), loads back equal, and printing is a fixpoint
    sp, shape, acc, at, bt, sat, sel = form
    built = kernel(_call(*form))
    text = tirx.dumps(built)
    slots = [sp, "sync", "aligned", shape, "row", "col", *((["satfinite"] if sat else [""]) if acc == "s32" else []),
             acc, at, bt, acc, ""]  # fmt: skip
    assert f"T.int32({sel}), " + ", ".join(f'"{s}"' for s in slots) + ")" in text, text
    again = tirx.loads(text)
    tirx.assert_structural_equal(again, built)
    assert tirx.dumps(again) == text
