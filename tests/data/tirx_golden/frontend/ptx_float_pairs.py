from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((4,), "uint64"), B: T.Tensor((4,), "float32"), H: T.Tensor((2,), "uint16")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    if T.cuda.thread_idx("x") == 0:
        lhs: T.let = T.cuda.make_float2(B[0], B[1])
        rhs: T.let = T.cuda.make_float2(B[2], B[3])
        acc = T.local_scalar("uint64")
        # .f32x2: two floats packed in one 64-bit register (sm_100)
        T.ptx.mul.f32x2(acc, lhs, rhs)
        T.ptx.fma.rn.f32x2(A[0], lhs, rhs, acc)
        T.ptx["add.rz.f32x2"](A[1], lhs, rhs)
        T.ptx.sub.rn.ftz.f32x2(A[2], A[1], rhs)
        # mixed precision: a 16-bit source converted to .f32 first
        T.ptx.add.rn.f32.bf16(B[0], H[0], B[1])
        T.ptx["sub.rn.sat.f32.f16"](B[1], H[1], B[2])
        T.ptx.fma.rn.f32.bf16(B[2], H[0], H[1], B[3])
