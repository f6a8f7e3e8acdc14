# tirx.backend.cuda.lang (my own kernel): SMEMPool placement rules. Views are rounded up to
# their align= (none: packed), sub-byte dtypes take whole bytes, move_base_to rewinds the pool so
# two views share bytes, layout=None leaves the view without a layout, and commit(size) records
# more than the high-water mark. A second pool over a static shared tensor's pointer hands out
# views of it and records nothing.
from tirx.script import tirx as T
from tirx.backend.cuda.lang import SMEMPool


@T.function
def f(A: T.Tensor((32,), "float16"), B: T.Tensor((32,), "float32"), C: T.Tensor((32,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    pool = SMEMPool()
    flag = pool.alloc((3,), "int8")
    halves = pool.alloc((32,), "float16", align=64)
    nib = pool.alloc((7,), "float4_e2m1fn")
    words = pool.alloc((2, 16), "float32", align=16, layout=None)
    pool.move_base_to(64)
    alias = pool.alloc((16,), "uint32")
    pool.commit(4096)
    raw = T.alloc_shared((256,), "uint8", align=128)
    sub = SMEMPool(raw.data)
    lo = sub.alloc((8,), "int32", align=16)
    hi = sub.alloc((8,), "int32", align=32)
    sub.commit()
    if tx < 3:
        flag[tx] = T.int8(tx)
    halves[tx] = A[tx]
    T.cuda.cta_sync()
    words[tx // 16, tx % 16] = T.float32(halves[31 - tx]) * T.float32(2)
    T.cuda.cta_sync()
    B[tx] = words[tx % 2, tx // 2]
    if tx < 8:
        lo[tx] = T.int32(flag[tx % 3]) + tx
        hi[tx] = T.int32(alias[tx])
    T.cuda.cta_sync()
    C[tx] = lo[tx % 8] + hi[tx % 8]
