# More of TIRx's builder API: emit_/emit of call statements, add_to_parent, at_,
# with_at_group_, frame_scope, func_ret, unpack_, tensor_indices, check_well_formed_.
from tirx.script import tirx as T

with T.IRBuilder() as ib:
    with T.function_():
        T.func_name_("f")
        A = T.arg_("A", T.Tensor((4, 8), "int32"))
        n = T.arg_("n", T.int32)
        T.func_ret(T.int32)
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
            T.emit_(T.cuda.cta_sync())
            T.emit(T.cuda.warp_sync())
            a, b = T.unpack_((n + 1, n + 2))
            T.setitem_(A, T.tensor_indices(A, (1, 2)), a * b)
            x = T.at_(None, T.bind_(n * 3, name="x"))
            y = T.with_at_group_(None, lambda: T.bind_(x + 1, name="y"))
            T.setitem_(A, (0, 0), y)
        T.return_(n)
f = ib.get()
T.check_well_formed_(f)
