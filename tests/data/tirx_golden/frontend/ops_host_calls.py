# TIRx's host-runtime ops and packed/LLVM/SPIR-V calls, and the script-only spellings.
from tirx.script import tirx as T


@T.function
def f(F: T.Tensor((64,), T.float32), N: T.Tensor((64,), T.int32)):
    shape = T.stack_make_shape(64)
    t = T.stack_make_dltensor(T.tensor_data_ptr(F), shape, 0, 1, T.float32(0.0), 0)
    r = T.call_packed("fname", t, N[0], 0, 1.5)
    r2 = T.call_cpacked("fname", F[0], 0)
    r3 = T.call_packed_lowered("fname", F[0])
    r4 = T.call_cpacked_lowered("fname", F[0], 0)
    r5 = T.call_packed("fname", F[0], ty="float32")
    q = T.call_llvm_intrin("llvm.sqrt", F[0], ty="float32")
    q2 = T.call_llvm_pure_intrin("llvm.fabs", F[1], ty="float32")
    g = T.call_spirv_pure_glsl450(31, F[0], ty="float32")
    a = T.stack_alloca("arg_tcode", 3)
    ws = T.alloc_workspace(2, 0, 256, 2, 32)
    e = T.free_workspace(2, 0, ws)
    v = T.abi_field_get(F.data, 0, 1, ty="int32")
    T.abi_field_set(F.data, 0, 1, v)
    u = T.call_intrin("tirx.undef", ty="int32")
    T.throw_last_error()
    T.cpu_parallel_barrier()
