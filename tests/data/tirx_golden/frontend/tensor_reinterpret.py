# A tensor declared over another tensor's storage with another element type (TIRx reinterprets
# the storage: `T.decl_tensor(A.data, ...)` and `A.view("int32")`); the declaration keeps the
# scope its T.Tensor names (none: "global"), the storage is the pointer's.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), T.float16), B: T.Tensor((32,), T.uint32), C: T.Tensor((32,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    pair = T.alloc_local([2], "float16")
    pair[0] = A[tx * 2]
    pair[1] = A[tx * 2 + 1]
    words = T.decl_tensor(pair.data, ty_args=[T.Tensor((1,), T.uint32, scope="local")])
    S = T.alloc_shared([64], "float16")
    S[tx * 2] = pair[1]
    S[tx * 2 + 1] = pair[0]
    T.cuda.cta_sync()
    swapped = T.decl_tensor(S.data, ty_args=[T.Tensor((32,), T.uint32)])
    B[tx] = words[0] ^ swapped[31 - tx]
    acc = T.alloc_local([1], "float32")
    acc[0] = T.float32(1.5)
    bits = acc.view("int32")
    bits[0] = bits[0] + tx
    C[tx] = acc[0]
