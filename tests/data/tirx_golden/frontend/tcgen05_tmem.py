from tirx.script import tirx as T


@T.function
def f(B: T.Tensor((128,), "uint32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    y = T.alloc_local((1,), "uint32")
    t = T.tmem((128, 64))  # noqa: F841 - declared, not used
    u = T.tmem((128, 32), "float16")  # noqa: F841
    y[0] = T.uint32(0)
    B[T.cuda.thread_idx("x")] = T.cuda.get_tmem_addr(y[0], 0, 16)
