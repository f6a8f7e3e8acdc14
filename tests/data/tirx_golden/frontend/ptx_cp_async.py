from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), "float16"), P: T.Tensor((2,), "uint64"), N: T.Tensor((1,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tid = T.cuda.thread_idx("x")
    S = T.alloc_shared((64,), "float16")
    n = N[0]
    # attribute chains and PTX text name the same instructions
    T.ptx.cp.async_.ca.shared.global_(S.ptr_to([0]), A.ptr_to([0]), 4)
    T.ptx["cp.async.ca.shared.global.L2::128B"](S.ptr_to([8]), A.ptr_to([8]), 8)
    T.ptx["cp.async.cg.shared::cta.global.L2::256B"](S.ptr_to([16]), A.ptr_to([16]), 16, pred=tid < 8)
    T.ptx["cp.async.cg.shared.global.L2::cache_hint"](S.ptr_to([24]), A.ptr_to([24]), 16, P[0])
    T.ptx["cp.async.ca.shared.global.L2::cache_hint.L2::64B"](
        S.ptr_to([32]), A.ptr_to([32]), 16, P[1], pred=n
    )
    # src-size zero-fills the tail of the copy
    T.ptx["cp.async.cg.shared.global"](S.ptr_to([40]), A.ptr_to([40]), 16, T.uint32(8))
    T.ptx["cp.async.ca.shared.global.L2::cache_hint.L2::128B"](
        S.ptr_to([48]), A.ptr_to([48]), 16, T.uint32(4), P[0]
    )
    T.ptx.cp.async_.commit_group()
    T.ptx.cp.async_.wait_group(0)
    T.cuda.cta_sync()
    A[tid] = S[tid] + T.float16(1)
