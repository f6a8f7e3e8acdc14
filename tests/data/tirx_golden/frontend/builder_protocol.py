# TIRx's builder API (T.function_, T.arg_, T.bind_, T.if_, T.for_, ...) builds f call by call;
# TIRx runs this same program, so its printed text is the IR both builders must make.
from tirx.script import tirx as T

with T.IRBuilder() as ib:
    with T.function_():
        T.func_name_("f")
        A = T.arg_("A", T.Tensor((16,), "int32"))
        n = T.arg_("n", T.int32)
        T.func_ret_type_(T.int32)
        x = T.bind_(n + 2, name="x")
        alias = T.bind_(n, name="alias")
        y = T.bind_(x * 3, ty=T.int32, name="y")
        c = T.decl_mutable_cell_(5, ty=T.int32, name="c")
        T.set_mutable_cell_(c, c + x)
        with T.while_(T.lt_(c, 10)):
            T.set_mutable_cell_(c, c + 2)
            with T.if_(T.eq_(c, 7)):
                with T.then_():
                    T.break_()
        with T.for_(T.range_(2, 8, 2), names="j") as j:
            with T.if_(T.and_(T.gt_(j, 3), T.not_(T.ne_(j, 7)), T.or_(T.le_(j, alias), T.ge_(j, 2)))):
                with T.then_():
                    T.setitem_(A, j, y)
                with T.else_():
                    T.continue_()
        with T.for_(T.serial(4), names="k") as k:
            T.tensor_store(A, [k], c + k)
        T.assert_(T.gt_(n, 2), "n must be large")
        T.return_(T.if_then_else_(T.gt_(n, 3), x, y))
f = ib.get()
