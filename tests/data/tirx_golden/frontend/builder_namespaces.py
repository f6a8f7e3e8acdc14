# TIRx's builder namespaces used as its users use them: T.ir_builder (IRBuilder, function()),
# T.parser_protocol, T.op, T.ir, T.utils; ops by registry name (T.Op.get, T.expose_script_op,
# T.Call of an Op), T.expose_script_type, a helper namespace (T.register_script_namespace),
# T.pyfunc host helpers, T.resolve_global_info_args and T.resolve_global_info_.
import types

from tirx.script import tirx as T


@T.pyfunc
def lanes(total, per):
    return total // per


@T.resolve_global_info_args("dtype", resolver=lambda s: {"acc": T.float32, "idx": T.int32}[s])
def cast_to(value, dtype):
    return T.cast(value, dtype)


T.register_script_namespace("golden_helpers", types.SimpleNamespace(twice=lambda x: x * 2))

try:
    T.resolve_global_info_("mesh[0]")
    raise AssertionError("resolve_global_info_ resolved a selector")
except NotImplementedError:
    pass

exp = T.expose_script_op("prim.exp")
i32 = T.expose_script_type("ir.PrimType")("int32")

with T.ir_builder.IRBuilder() as ib:
    with T.ir_builder.function():
        T.parser_protocol.func_name_("f")
        A = T.parser_protocol.arg_("A", T.ir.Tensor((8,), T.ir.float32))
        n = T.parser_protocol.arg_("n", i32)
        x = T.parser_protocol.bind_(T.op.max(n, lanes(12, 4)), name="x")
        tmp = T.parser_protocol.bind_(T.ir.alloc_local((2,), "float32"), name="tmp")
        T.parser_protocol.setitem_(tmp, 0, A[7] + T.ir.float32(1.5))
        with T.parser_protocol.if_(T.op.and_(T.op.gt_(x, 1), T.op.lt_(x, 7))):
            with T.parser_protocol.then_():
                T.parser_protocol.setitem_(A, 0, exp(A[1]))
                T.parser_protocol.setitem_(A, 2, T.Call(T.Op.get("prim.sqrt"), [A[3]], ty=T.float32))
        loops = [T.parser_protocol.for_(T.parser_protocol.range_(2), names=nm) for nm in ("i", "j")]
        with T.utils.frame_scope(loops) as (i, j):
            T.parser_protocol.setitem_(A, 4 + i * 2 + j, cast_to(T.golden_helpers.twice(x) + i, "acc"))
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
            T.parser_protocol.emit_(T.Call(T.Op.get("tirx.cuda.cta_sync"), []))
f = ib.get()
