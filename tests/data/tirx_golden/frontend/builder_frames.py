# TIRx's builder frames and receipts: T.frame's frame classes, T.frame_scope (several frames in
# one with), T.add_to_parent (a statement node made apart, added to the open frame),
# T.AlreadyEmitted receipts (emit_ of one emits nothing), T.MISSING storage without an
# initializer, T.supports_mutable_declarations, and T.setattr_ storing through an attribute.
import types

from tirx.script import tirx as T

with T.IRBuilder() as ib:
    with T.function_() as fn:
        assert isinstance(fn, T.frame.FunctionFrame) and isinstance(fn, T.frame.StmtFrame)
        T.func_name_("f")
        A = T.arg_("A", T.Tensor((4, 8), "int32"))
        n = T.arg_("n", T.int32)
        assert T.supports_mutable_declarations
        c = T.decl_mutable_cell_(T.MISSING, ty=T.int32, name="c")
        r = T.set_mutable_cell_(c, n + 1)
        assert isinstance(r, T.AlreadyEmitted)
        T.emit_(r)  # a receipt: already emitted, nothing more
        state = types.SimpleNamespace(count=c, label="start")
        assert isinstance(T.setattr_(state, "count", state.count * 2), T.AlreadyEmitted)
        assert T.setattr_(state, "label", "done") is None and state.label == "done"
        v = T.Var("v", T.int32)
        T.add_to_parent(T.Bind(v, c + 3))
        with T.frame_scope([T.for_(T.range_(2), names="a"), T.for_(T.range_(3), names="b")]) as (a, b):
            T.setitem_(A, T.utils.tensor_indices(A, a * 3 + b), v)
        with T.frame_scope([T.for_(T.range_(4), names="k")]) as k:  # one frame: its loop var
            T.setitem_(A, (k, 7), k)
f = ib.get()
