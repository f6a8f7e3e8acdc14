# `with T.device_entry():` with no launch values (TIRx prints it so; every launch value is 1):
# the body still reads the thread index. A function without parameters: TIRx prints no
# `from __future__ import annotations` line for it.
from tirx.script import tirx as T


@T.function
def f():
    with T.device_entry():
        v = T.alloc_local((1,), "int32")
        v[0] = T.cuda.thread_idx("x")
        v[0] = v[0] + 1
