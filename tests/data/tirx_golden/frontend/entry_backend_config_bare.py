# TIRx's argument-free device entry with compile settings: T.device_entry(backend_config=...)
# without a launch prints as T.device_entry(attrs={"backend_config": ...}) (every launch value 1).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((4,), T.int32)):
    with T.device_entry(backend_config={"cuda": {"nvrtc": []}}):
        A[0] = A[1] + A[2]
