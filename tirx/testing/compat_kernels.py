"""The TIRx 0.1.0a4 compat kernels (``shared/compat/tirx-0.1.0a4/*.tirx``) built by hand
through the IRBuilder, without any front end.

``KERNELS`` maps the compat file stem to a zero-argument builder. Tests compare
``tirx.dumps(build())`` with the TIRx-printed text; benchmarks use them as seeds.
"""

from __future__ import annotations

from collections.abc import Callable

from tirx.ir import (
    And,
    Call,
    Cast,
    ForKind,
    GlobalVar,
    Max,
    PointerType,
    TensorType,
    Var,
    const,
)
from tirx.ir.op import call
from tirx.ir.types import bool_, float16, float32, handle, int32, int64
from tirx.surface.builder import IRBuilder, launch_args

__all__ = ["KERNELS"]


def _f32(v: float):
    return const(v, float32)


def _tid():
    return call("cuda.thread_idx", "x")


def _bid(axis: str = "x"):
    return call("cuda.block_idx", axis)


def _local(b: IRBuilder, name: str, dtype=int32, shape=(1,), scope="local"):
    return b.alloc(name, TensorType(shape, dtype, scope))


def ew_add_f16_dyn():
    b = IRBuilder()
    with b:
        n = Var("n")
        with b.function("add"):
            A = b.param("A", TensorType((n,), float16))
            B = b.param("B", TensorType((n,), float16))
            with b.device_entry(*launch_args((n + 128 - 1) // 128, 128)):
                i = b.bind("i", _bid() * 128 + _tid())
                with b.if_(i < n):
                    B[i] = A[i] + const(2.0, float16)
    return b.get()


def let_bind():
    b = IRBuilder()
    with b, b.function("lets"):
        A = b.param("A", TensorType((128,), int32))
        B = b.param("B", TensorType((128,), int64))
        with b.device_entry(*launch_args(1, 128)):
            tx = b.bind("tx", _tid())
            a = b.bind("a", A[tx] + 1)
            bb = b.bind("b", a * 2)
            c = b.bind("c", Cast(int64, bb) + const(3, int64))
            a1 = b.bind("a", a + bb)
            lo = b.bind("lo", tx * 2)
            hi = b.bind("hi", tx * 2 + 1)
            d = _local(b, "d")
            d[0] = lo + hi
            B[tx] = c + Cast(int64, a1 + d[0])
    return b.get()


def loops_kinds_cpu():
    b = IRBuilder()
    f32 = float32
    with b, b.function("loops"):
        A = b.param("A", TensorType((64, 64), f32))
        B = b.param("B", TensorType((64, 64), f32))
        V = b.param("V", TensorType((64,), f32))
        with b.for_("i", 0, 64, ForKind.PARALLEL) as i, b.for_("j", 0, 64, ForKind.VECTORIZED) as j:
            B[i, j] = A[i, j] * _f32(2.0)
        # TIRx numbers sibling loop vars; the hints below are what loading its text gives
        with b.for_("i_1", 2, 62, step=2) as i:
            V[i] = V[i - 2] + _f32(1.0)
        with b.for_("i_2", 1, 62) as i:
            V[i] = V[i] + V[i + 1]
        with b.for_("i_3", 0, 64, step=4) as i, b.for_("u", 0, 4, ForKind.UNROLLED) as u:
            V[i + u] = V[i + u] * _f32(0.5)
        with b.for_("i_4", 0, 4) as i, b.for_("j_1", 0, 8) as j, b.for_("k", 0, 2) as k:
            B[i * 8 + j, k] = A[k, i * 8 + j]
        with b.for_("i_5", 2, 6) as i, b.for_("j_2", 0, 8) as j:
            B[i, j] = _f32(0.0)
    return b.get()


def matmul_tiled_smem():
    b = IRBuilder()
    with b, b.function("mm_tiled"):
        A = b.param("A", TensorType((512, 512), float32))
        B = b.param("B", TensorType((512, 512), float32))
        C = b.param("C", TensorType((512, 512), float32))
        with b.device_entry(*launch_args((32, 32), (16, 16))):
            tx = b.bind("tx", _tid())
            ty = b.bind("ty", call("cuda.thread_idx", "y"))
            row = b.bind("row", _bid("y") * 16 + ty)
            col = b.bind("col", _bid("x") * 16 + tx)
            As = _local(b, "As", float32, (16, 16), "shared")
            Bs = _local(b, "Bs", float32, (16, 16), "shared")
            acc = _local(b, "acc", float32)
            acc[0] = _f32(0.0)
            with b.for_("kt", 0, 32) as kt:
                As[ty, tx] = A[row, kt * 16 + tx]
                Bs[ty, tx] = B[kt * 16 + ty, col]
                b.evaluate(call("cuda.cta_sync"))
                with b.for_("kk", 0, 16, ForKind.UNROLLED) as kk:
                    acc[0] = acc[0] + As[ty, kk] * Bs[kk, tx]
                b.evaluate(call("cuda.cta_sync"))
            C[row, col] = acc[0]
    return b.get()


def module_multi_func():
    b = IRBuilder()
    with b, b.module("Module"):
        with b.function("relu", private=True):
            x = b.param("x", float32)
            b.set_ret_type(float32)
            b.return_(Max(x, _f32(0.0)))
        with b.function("lerp", private=True):
            a = b.param("a", float32)
            bb = b.param("b", float32)
            t = b.param("t", float32)
            b.set_ret_type(float32)
            b.return_(a + (bb - a) * t)
        with b.function("k_relu"):
            A = b.param("A", TensorType((1024,), float32))
            B = b.param("B", TensorType((1024,), float32))
            with b.device_entry(*launch_args(4, 256)):
                i = b.bind("i", _bid() * 256 + _tid())
                B[i] = Call(GlobalVar("relu"), (A[i],), float32)
        with b.function("k_lerp"):
            A = b.param("A", TensorType((1024,), float32))
            B = b.param("B", TensorType((1024,), float32))
            C = b.param("C", TensorType((1024,), float32))
            with b.device_entry(*launch_args(4, 256)):
                i = b.bind("i", _bid() * 256 + _tid())
                C[i] = Call(GlobalVar("lerp"), (A[i], B[i], _f32(0.25)), float32)
    return b.get()


def ptr_reinterpret():
    b = IRBuilder()
    with b, b.function("from_handle"):
        h = b.param("h", handle)
        n = b.param("n", int32)
        Out = b.param("Out", TensorType((256,), int32))
        with b.device_entry(*launch_args(1, 256)):
            tx = b.bind("tx", _tid())
            p = b.bind("p", call("reinterpret", h, ty=PointerType(float32)))
            X = b.decl("X", TensorType((256,), float32), p)
            with b.if_(tx < n):
                bits = b.bind("bits", call("reinterpret", X[tx], ty=int32))
                Out[tx] = bits >> 23 & 255
    return b.get()


def break_continue():
    b = IRBuilder()
    with b, b.function("find_first"):
        A = b.param("A", TensorType((256, 64), int32))
        Idx = b.param("Idx", TensorType((256,), int32))
        Cnt = b.param("Cnt", TensorType((256,), int32))
        with b.device_entry(*launch_args(1, 256)):
            r = b.bind("r", _tid())
            found = _local(b, "found")
            found[0] = -1
            with b.for_("j", 0, 64) as j:
                with b.if_(A[r, j] < 0):
                    b.continue_()
                with b.if_(A[r, j].eq(42)):
                    found[0] = j
                    b.break_()
            Idx[r] = found[0]
            c = _local(b, "c")
            c[0] = 0
            k = _local(b, "k")
            k[0] = 0
            with b.while_(const(True)):
                k[0] = k[0] + 1
                with b.if_(k[0] >= 64):
                    b.break_()
                with b.if_((A[r, k[0]] % 2).eq(1)):
                    b.continue_()
                c[0] = c[0] + 1
            Cnt[r] = c[0]
    return b.get()


def dyn_multi_shape():
    b = IRBuilder()
    batch, L, D = Var("batch"), Var("L"), Var("D", int64)
    with b, b.function("seq_mean"):
        X = b.param("X", TensorType((batch, L, 64), float32))
        Y = b.param("Y", TensorType((batch, 64), float32))
        Z = b.param("Z", TensorType((D,), float32))
        with b.device_entry(*launch_args(batch, 64)):
            bb = b.bind("b", _bid())
            c = b.bind("c", _tid())
            acc = _local(b, "acc", float32)
            acc[0] = _f32(0.0)
            with b.for_("t", 0, L) as t:
                acc[0] = acc[0] + X[bb, t, c]
            Y[bb, c] = acc[0] / Cast(float32, L)
            with b.if_(And(bb.eq(0), Cast(int64, c) < D)):
                Z[Cast(int64, c)] = _f32(0.0)
    return b.get()


def reduce_smem_tree():
    b = IRBuilder()
    with b, b.function("block_sum"):
        A = b.param("A", TensorType((65536,), float32))
        Out = b.param("Out", TensorType((256,), float32))
        with b.device_entry(*launch_args(256, 256)):
            bx = b.bind("bx", _bid())
            tx = b.bind("tx", _tid())
            buf = _local(b, "buf", float32, (256,), "shared")
            buf[tx] = A[bx * 256 + tx]
            b.evaluate(call("cuda.cta_sync"))
            stride = _local(b, "stride")
            stride[0] = 128
            with b.while_(stride[0] > 0):
                with b.if_(tx < stride[0]):
                    buf[tx] = buf[tx] + buf[tx + stride[0]]
                b.evaluate(call("cuda.cta_sync"))
                stride[0] = stride[0] // 2
            with b.if_(tx.eq(0)):
                Out[bx] = buf[0]
    return b.get()


def mutable_scalars():
    b = IRBuilder()
    with b, b.function("cells"):
        A = b.param("A", TensorType((256,), float32))
        B = b.param("B", TensorType((256,), float32))
        with b.device_entry(*launch_args(1, 256)):
            tx = b.bind("tx", _tid())
            s = _local(b, "s", float32)
            s[0] = _f32(0.0)
            cnt = _local(b, "cnt")
            cnt[0] = 0
            flag = _local(b, "flag", bool_)
            flag[0] = const(False)
            with b.for_("k", 0, 8) as k:
                s[0] = s[0] + A[(tx + k) % 256]
                s[0] = s[0] * _f32(0.9)
                cnt[0] = cnt[0] + 1
                with b.if_(s[0] > _f32(10.0)):
                    flag[0] = const(True)
            t = _local(b, "t", float32)
            t[0] = _f32(1.0)
            with b.if_(flag[0]):
                t[0] = s[0] - Cast(float32, cnt[0])
            B[tx] = t[0]
    return b.get()


def inline_helpers():
    b = IRBuilder()
    with b, b.function("fused"):
        A = b.param("A", TensorType((2048,), float32))
        B = b.param("B", TensorType((2048,), float32))
        with b.device_entry(*launch_args(8, 256)):
            i = b.bind("i", _bid() * 256 + _tid())
            x = A[i]
            inner = _f32(0.7978845608) * (x + _f32(0.044715) * x * x * x)
            B[i] = _f32(0.5) * x * (_f32(1.0) + call("tanh", inner)) * _f32(2.0) + _f32(1e-05)
    return b.get()


def jit_specialize():
    b = IRBuilder()
    with b, b.function("scale_add"):
        A = b.param("A", TensorType((1000,), float32))
        B = b.param("B", TensorType((1000,), float32))
        with b.device_entry(*launch_args(8, 128)):
            i = b.bind("i", _bid() * 128 + _tid())
            with b.if_(i < 1000):
                B[i] = call("fma", A[i], _f32(2.0), B[i])
    return b.get()


KERNELS: dict[str, Callable] = {
    "ew_add_f16_dyn": ew_add_f16_dyn,
    "let_bind": let_bind,
    "loops_kinds_cpu": loops_kinds_cpu,
    "matmul_tiled_smem": matmul_tiled_smem,
    "module_multi_func": module_multi_func,
    "ptr_reinterpret": ptr_reinterpret,
    "break_continue": break_continue,
    "dyn_multi_shape": dyn_multi_shape,
    "reduce_smem_tree": reduce_smem_tree,
    "mutable_scalars": mutable_scalars,
    "inline_helpers": inline_helpers,
    "jit_specialize": jit_specialize,
}
