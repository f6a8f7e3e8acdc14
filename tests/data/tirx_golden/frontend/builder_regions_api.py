# The region statements built through TIRx's builder API (T.launch_thread, T.region, ...).
from tirx.script import tirx as T

with T.IRBuilder() as ib:
    with T.function_():
        T.func_name_("f")
        A = T.arg_("A", T.Tensor((16,), "float32"))
        n = T.arg_("n", T.int32)
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=8)):
            with T.launch_thread("blockIdx.x", 2) as bx:
                with T.region("tirx.launch_thread", ["threadIdx.x", 8]) as tx:
                    T.setitem_(A, bx * 8 + tx, T.float32(1.0))
        with T.compute_scope("helper"):
            T.setitem_(A, 0, T.float32(2.0))
        with T.device_context(2, n):
            T.setitem_(A, 1, T.float32(3.0))
        with T.parallel_launch():
            T.setitem_(A, 2, T.float32(4.0))
f = ib.get()
