# A module built through TIRx's builder API: T.ir_builder.ir_module() opens the module frame
# (a T.IRModuleFrame); T.decl_function / T.module_member_ add finished functions (a public one
# added under another name keeps its symbol), T.module_set_attr / T.module_get_attr /
# T.module_global_infos set and read the module's attrs, and T.call_global_var_ calls the
# module's functions through their GlobalVars (m.<name>, m.global_vars).
from tirx.script import tirx as T


@T.function
def scale(x: T.int32, k: T.int32) -> T.int32:
    return x * k


with T.IRBuilder() as ib:
    with T.ir_builder.ir_module() as m:
        assert isinstance(m, T.IRModuleFrame)
        T.module_set_attr("version", T.int32(2))
        T.module_global_infos({})
        gv = T.decl_function("scale", scale)
        T.module_member_("twice", scale)
        k = T.module_member_("k", 3)  # not a function: returned unchanged
        with T.function_():
            T.func_name_("helper")
            x = T.arg_("x", T.int32)
            T.func_ret_type_(T.int32)
            T.return_(x + T.module_get_attr("version"))
        with T.function_():
            T.func_name_("main")
            A = T.arg_("A", T.Tensor((4,), "int32"))
            n = T.arg_("n", T.int32)
            T.setitem_(A, 0, T.call_global_var_(gv, [n, k]))
            T.setitem_(A, 1, T.call_global_var_(m.twice, [n, 2]))
            T.setitem_(A, 2, T.call_global_var_(m.global_vars["helper"], [A[3]]))
        assert sorted(m.global_vars) == ["helper", "main", "scale", "twice"] and not m.global_infos
f = ib.get()
