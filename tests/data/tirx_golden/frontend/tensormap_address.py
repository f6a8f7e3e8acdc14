# A TMA descriptor: T.handle("tensormap") is T.Ptr(T.TensorMap()); T.address_of(A_map) is its
# address, a uint64, reinterpreted as a pointer for a PTX operand.
from tirx.script import tirx as T


@T.function
def f(A_map: T.handle("tensormap"), B: T.Tensor((4,), "uint64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=(32,)))
    B[0] = T.address_of(A_map)
    T.ptx["prefetch.tensormap"](T.reinterpret(T.address_of(A_map), ty="handle"))
