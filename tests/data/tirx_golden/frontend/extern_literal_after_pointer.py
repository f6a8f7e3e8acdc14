# Bare int literals after a pointer argument of T.call_extern stay int32 and print bare, as TIRx
# prints them (held-out round 17: tirx printed T.int32(-1)).
from tirx.script import tirx as T


@T.function
def f(depth: T.Tensor((64,), "int32"), level: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    old = T.call_extern("atomicCAS", T.address_of(depth[tx]), -1, level + 1, ty="int32")
    depth[tx + 32] = old
    depth[0] = T.call_extern("atomicMax", T.address_of(depth[1]), 7, ty="int32")
