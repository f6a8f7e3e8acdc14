# A C function called with a vector type is called lane by lane (TIRx scalarises the call): one
# lane of each vector argument, scalar arguments as they are. A dynamic shared-memory allocation
# with no dynamic_smem_bytes in the launch is sized by what it takes.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), T.float16x2), B: T.Tensor((64,), T.float32x4), C: T.Tensor((64,), T.float32)):
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64)):
        i = T.cuda.thread_idx("x")
        A[i] = T.call_pure_extern("__hfma", A[i], A[i], A[63 - i], ty=T.float16x2)
        B[i] = T.call_pure_extern("fmaxf", B[i], T.float32(0.5), ty=T.float32x4)
        s = T.alloc_tensor(ty_args=[T.Tensor((64,), T.float32, scope="shared.dyn")])
        s[i] = C[i]
        T.cuda.cta_sync()
        C[i] = s[63 - i]
