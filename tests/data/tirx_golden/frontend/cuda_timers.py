# TIRx's profiler timers: a global uint64 record buffer, a per-thread tag and write offset.
from tirx.script import tirx as T


@T.function
def f(P: T.Tensor((64,), T.uint64)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=32))
    tag = T.alloc_local((1,), "uint64")
    off = T.alloc_local((1,), "uint32")
    T.cuda.timer_init(P.data, tag.data, off.data, 1, 0)
    T.cuda.timer_start(3, P.data, tag.data, off.data, 2, T.cuda.thread_idx("x") == 0)
    T.cuda.timer_end(3, P.data, tag.data, off.data, 2, T.cuda.thread_idx("x") == 0)
    T.cuda.timer_finalize(P.data, tag.data, off.data, 2, T.cuda.thread_idx("x") == 0)
