# wgmma.mma_async through TIRx's PTX table (the chain form, descriptors from shared memory): the
# accumulators are read and written (+f), scale_d is a predicate input (printed marker "p4").
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64, 16), "float16"), B: T.Tensor((8, 16), "float16"), C: T.Tensor((128, 4), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    tx = T.cuda.thread_idx("x")
    As = T.alloc_shared((64, 16), "float16", align=128)
    Bs = T.alloc_shared((8, 16), "float16", align=128)
    acc = T.alloc_local((4,), "float32")
    da = T.alloc_local((1,), "uint64")
    db = T.alloc_local((1,), "uint64")
    for i in T.unroll(8):
        As[(tx * 8 + i) // 16, (tx * 8 + i) % 16] = A[(tx * 8 + i) // 16, (tx * 8 + i) % 16]
    if tx < 16:
        for i in T.unroll(8):
            Bs[(tx * 8 + i) // 16, (tx * 8 + i) % 16] = B[(tx * 8 + i) // 16, (tx * 8 + i) % 16]
    for j in T.unroll(4):
        acc[j] = T.float32(0)
    T.ptx.fence.proxy.async_()
    T.cuda.cta_sync()
    T.ptx.wgmma.fence.sync.aligned()
    T.cuda.wgmma_encode_matrix_descriptor(T.address_of(da[0]), T.address_of(As[0, 0]), 8, 16, 0)
    T.cuda.wgmma_encode_matrix_descriptor(T.address_of(db[0]), T.address_of(Bs[0, 0]), 8, 16, 0)
    T.ptx.wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16(acc[0], acc[1], acc[2], acc[3], da[0], db[0], True, 1, 1, 0, 0)
    T.ptx.wgmma.commit_group.sync.aligned()
    T.ptx.wgmma.wait_group.sync.aligned(0)
    for j in T.unroll(4):
        C[tx, j] = acc[j]
