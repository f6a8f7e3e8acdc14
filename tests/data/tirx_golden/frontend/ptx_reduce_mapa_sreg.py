# PTX forms held-out round 15 met (my own kernel): cp.reduce.async.bulk into global memory with
# any .redOp/.type (.add.noftz.bf16, .min.u32, .xor.b64), a generic mapa.u64 (TIRx prints no
# space string), mbarrier.pending_count, and special registers of the cluster (%nclusterid.x).
from tirx.script import tirx as T


@T.function
def f(G: T.Tensor((256,), "bfloat16"), U: T.Tensor((64,), "uint32"), W: T.Tensor((32,), "uint64"),
      O: T.Tensor((32,), "uint64"), C: T.Tensor((32,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    sb = T.alloc_shared((256,), "bfloat16", align=128)
    su = T.alloc_shared((64,), "uint32", align=128)
    sw = T.alloc_shared((32,), "uint64", align=128)
    bar = T.alloc_shared((1,), "uint64", align=8)
    state = T.alloc_local((1,), "uint64")
    cnt = T.alloc_local((1,), "uint32")
    remote = T.alloc_local((1,), "uint64")
    sb[tx] = T.bfloat16(1.0)
    su[tx] = T.uint32(tx)
    sw[tx] = T.uint64(tx)
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(32))
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    T.ptx.mbarrier.arrive.shared.b64(state[0], bar.ptr_to([0]))
    T.ptx.mbarrier.pending_count.b64(cnt[0], state[0])
    T.ptx.mapa.u64(remote[0], T.reinterpret(sw.ptr_to([31 - tx]), ty=T.uint64), T.uint32(0))
    O[tx] = remote[0] - T.reinterpret(sw.ptr_to([0]), ty=T.uint64)
    C[tx] = T.Cast("int32", cnt[0]) + T.cuda.mov_sreg(32, "nclusterid.x") * 100
    if tx == 0:
        T.ptx["cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16"](G.ptr_to([0]), sb.ptr_to([0]), T.uint32(64))
        T.ptx["cp.reduce.async.bulk.global.shared::cta.bulk_group.min.u32"](U.ptr_to([0]), su.ptr_to([0]), T.uint32(128))
        T.ptx["cp.reduce.async.bulk.global.shared::cta.bulk_group.xor.b64"](W.ptr_to([0]), sw.ptr_to([0]), T.uint32(256))
        T.ptx.cp.async_.bulk.commit_group()
        T.ptx.cp.async_.bulk.wait_group(0)
