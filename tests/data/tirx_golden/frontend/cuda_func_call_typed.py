# A typed T.cuda.func_call: TIRx prints it without ty=; as a stored value the tensor types it,
# as a let's value the annotation does.
from tirx.script import tirx as T

SRC = "__device__ int tirx_add_one(int a) { return a + 1; }"


@T.function
def f(a: T.Tensor((32,), "int32"), b: T.Tensor((32,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    x: T.let[T.int32] = T.cuda.func_call("tirx_add_one", a[tx], SRC, ty="int32")
    b[tx] = T.cuda.func_call("tirx_add_one", x, SRC, ty="int32")
