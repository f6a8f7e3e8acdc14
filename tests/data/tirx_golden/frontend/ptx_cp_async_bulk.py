from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32"), C: T.Tensor((2,), "uint64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tid = T.cuda.thread_idx("x")
    if tid == 0:
        S = T.alloc_shared((64,), "float32")
        bar = T.alloc_shared((2,), "uint64")
        remote = T.alloc_local((2,), "uint32")
        T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](
            S.ptr_to([0]), A.data, T.uint32(64), bar.ptr_to([0])
        )
        T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint"](
            S.ptr_to([16]), A.ptr_to([16]), T.uint32(64), bar.ptr_to([0]), C[0]
        )
        T.ptx.cp.async_.bulk.shared__cluster.global_.mbarrier__complete_tx__bytes(
            S.ptr_to([32]), A.data, T.uint32(32), bar.ptr_to([1])
        )
        T.ptx["cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"](
            S.ptr_to([40]), A.ptr_to([40]), T.uint32(32), bar.ptr_to([1]), C[1]
        )
        T.ptx.mapa.shared__cluster.u32(remote[0], T.cuda.cvta_generic_to_shared(S.ptr_to([48])), T.uint32(0))
        T.ptx.mapa.shared__cluster.u32(remote[1], T.cuda.cvta_generic_to_shared(bar.ptr_to([1])), T.uint32(0))
        T.ptx["cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"](
            remote[0], S.ptr_to([0]), T.uint32(16), remote[1]
        )
        T.ptx["cp.async.bulk.global.shared::cta.bulk_group"](B.data, S.ptr_to([0]), T.uint32(64))
        T.ptx["cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint"](
            B.ptr_to([16]), S.ptr_to([16]), T.uint32(64), C[0]
        )
        T.ptx.cp.async_.bulk.commit_group()
        T.ptx.cp.async_.bulk.wait_group.read(0)
        T.ptx.cp.async_.bulk.wait_group(0)
