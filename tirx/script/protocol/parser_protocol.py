"""TIRx's parser protocol: the calls a TVMScript-style parser makes for each piece of syntax.

``def f(a: T.int32)`` is ``with T.function_(): T.func_name_("f"); a = T.arg_("a", T.int32)``;
``x = e`` is ``x = T.bind_(e, name="x")``; ``A[i] = v`` is ``T.setitem_(A, i, v)``; ``for i in
range(n)`` is ``with T.for_(T.range_(n), names="i") as i``; and so on. Each call here does what
tirx's Python frontend (``tirx/script/parser.py``) does for that syntax, through the same
IRBuilder methods and helpers, so a kernel built call by call is structurally equal to the
same kernel written with ``@T.function`` (``tests/test_builder_protocol.py`` checks it on
generated kernels).

``loc=`` arguments take a :class:`tirx.ir.span.Span` (or None): the statements and frames
built get it, as a parsed kernel's statements get their source position.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from collections.abc import Callable
from typing import Any

from tirx.surface.builder import IRBuilder

from ...ir import (
    AllocBuffer,
    Attrs,
    Buffer,
    BufferLoad,
    DeclBuffer,
    ForKind,
    Function,
    GlobalVar,
    IntImm,
    Module,
    PrimExpr,
    PrimType,
    Stmt,
    TensorType,
    Type,
    Var,
    convert,
)
from ...ir.node import Node
from ...surface.helpers import to_bool_expr as _to_bool_expr
from ..ir_names import MISSING as _MISSING
from ..parser import (
    AttrSpec,
    Cell,
    DeviceEntrySpec,
    LetAnn,
    LoopSpec,
    MetaVar,
    Parser,
    _is_type_like,
    _Like,
    lit,
)
from .frame import (
    AlreadyEmitted,
    ElseFrame,
    ForFrame,
    FunctionFrame,
    IfFrame,
    IRModuleFrame,
    RegionFrame,
    StmtFrame,
    ThenFrame,
    WhileFrame,
    check_loc,
    innermost,
    unwrap,
)
from .op import and_, eq_, ge_, gt_, if_then_else_, le_, lt_, ne_, not_, or_

__all__ = [
    "MISSING", "AlreadyEmitted", "IRModuleFrame", "add_to_parent", "and_", "arg_", "assert_", "at_",
    "bind_", "break_", "call_global_var_", "check_well_formed_", "compute_scope", "continue_", "decl_function", "decl_mutable_cell_", "device_context", "device_scope", "else_",
    "emit", "emit_", "eq_", "for_", "func_name_", "func_ret", "func_ret_type_", "function_", "ge_", "gt_",
    "if_", "if_then_else_", "launch_thread", "le_", "lt_", "module_attrs", "module_get_attr", "module_global_infos",
    "module_member_", "module_set_attr", "ne_", "not_", "or_", "parallel_launch", "pyfunc", "range_", "region", "resolve_global_info_",
    "resolve_global_info_args", "return_", "set_mutable_cell_", "setattr_", "setitem_",
    "supports_mutable_declarations", "tensor_store", "then_", "unpack_", "while_", "with_at_group_",
]  # fmt: skip

#: "no value given" (``bind_()`` / ``decl_mutable_cell_()`` without an initializer): ``T.MISSING``
MISSING: Any = _MISSING

#: ``x: T.int32 = 0`` declares mutable storage (``decl_mutable_cell_``), as in TIRx
supports_mutable_declarations = True

_ZERO = IntImm(0)


def _b() -> IRBuilder:
    return IRBuilder.current()


def _at(loc: Any) -> Any:
    loc = check_loc(loc)
    return _b().with_span(loc) if loc is not None else contextlib.nullcontext()


def _receipt(b: IRBuilder) -> AlreadyEmitted:
    return AlreadyEmitted(b.frame.stmts[-1])


# ------------------------------------------------------------------ functions
def function_(
    *, private: bool = False, persistent: bool = False, decl: bool = False, loc: Any = None
) -> FunctionFrame:
    """A function frame; name it with ``func_name_`` (default ``main``), add parameters with
    ``arg_``, the body inside. Needs an active ``T.IRBuilder()``."""
    if persistent:
        raise ValueError("function_: persistent=True is not supported by tirx (no persistent functions)")
    if decl:
        raise ValueError(
            "function_: decl=True (a signature entered before its body) is not supported; build the "
            "functions in any order inside T.IRModuleFrame(): calls between them resolve by name"
        )
    return FunctionFrame(private=private, loc=loc)


def function(
    is_private: bool = False, persistent: bool = False, *, private: bool | None = None
) -> FunctionFrame:
    """``T.ir_builder.function()`` / ``T.parser_protocol.function()``: TIRx's positional spelling
    of :func:`function_` (``private=`` overrides ``is_private``). Not ``T.function``, the
    decorator."""
    if private is None:
        private = is_private
    return function_(private=private, persistent=persistent)


def _function_payload(what: str) -> dict:
    b = _b()
    try:
        return b._function_frame().payload
    except RuntimeError:
        raise ValueError(f"{what} needs an open T.function_() frame") from None


def func_name_(name: str) -> None:
    """The function's name (a global symbol; once per function)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"func_name_: name must be an identifier, got {name!r}")
    p = _function_payload("func_name_")
    if p.get("named"):
        raise ValueError(f"func_name_: the function is already named {p['name']!r}")
    p["name"], p["named"] = name, True


def _annotation(x: Any, what: str) -> Any:
    x = unwrap(x)
    if type(x) is LetAnn:
        return x.ty
    if callable(x) and not _is_type_like(x) and not isinstance(x, (Var, PrimExpr)):
        x = x()  # a callable annotation is evaluated (TIRx's protocol)
    return x


def func_ret_type_(annotation: Any, *, loc: Any = None) -> None:
    """The return type (``-> T.int32``); None: no return value."""
    _function_payload("func_ret_type_")
    ann = _annotation(annotation, "func_ret_type_")
    if isinstance(ann, PrimExpr):
        ann = ann.ty
    with _at(loc):
        _b().set_ret_type(ann)


func_ret = func_ret_type_


def arg_(name: str, annotation: Any, *, loc: Any = None) -> Var | Buffer:
    """A parameter: a scalar Var, or for ``T.Tensor(...)`` the Buffer the body indexes (its
    data pointer is the parameter). An existing Var becomes the parameter itself."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"arg_: name must be an identifier, got {name!r}")
    _function_payload("arg_")
    ann = _annotation(annotation, "arg_")
    if not isinstance(ann, Var) and not _is_type_like(ann):
        raise TypeError(f"arg_: parameter {name!r}: {ann!r} is not a type")
    with _at(loc):
        return _b().param(name, ann)


def check_well_formed_(function: Function | Module) -> None:
    """Raise a located ``tirx.DiagnosticError`` if ``function`` breaks a rule of the verifier
    (the check both front ends run)."""
    if not isinstance(function, (Function, Module)):
        raise TypeError(f"check_well_formed_: expected a Function or Module, got {type(function).__name__}")
    IRBuilder(getattr(function, "name", "<ir>")).verify(function)


# ------------------------------------------------------------------ bindings
def _rename_fresh(b: IRBuilder, buf: Buffer, name: str) -> Buffer:
    """A tensor allocated by the call just before (``A = T.alloc_local(...)``) takes the target's
    name, as a parsed kernel names it; any other tensor keeps its name."""
    if buf.name == name or not b.frames or not b.frame.stmts:
        return buf
    last = b.frame.stmts[-1]
    if type(last) is AllocBuffer and last.buffer is buf:
        new = buf.replace(name=name, data=buf.data.replace(name=name))
        b.frame.stmts[-1] = last.replace(buffer=new)
        return new
    if type(last) is DeclBuffer and last.buffer is buf:
        new = buf.replace(name=name)
        b.frame.stmts[-1] = last.replace(buffer=new)
        return new
    return buf


def bind_(value: Any = MISSING, *, ty: Any = None, name: str | None = None, loc: Any = None,
          value_loc: Any = None, name_loc: Any = None, frame_value: bool = False) -> Any:  # fmt: skip
    """``name = value`` (``name: ty = value`` with ``ty=T.let[...]``/a type).

    An expression becomes an immutable ``Bind`` of a new Var (returned); a Var is returned
    itself (an alias, no Bind); a tensor keeps its identity (a fresh allocation takes the
    name); other Python values are returned unchanged. ``ty=`` always makes a typed Bind."""
    if name is not None and (not isinstance(name, str) or not name.isidentifier()):
        raise ValueError(f"bind_: name must be an identifier, got {name!r}")
    if value is MISSING:
        raise TypeError("bind_: a value is required (declare storage without one with decl_mutable_cell_)")
    if isinstance(value, AlreadyEmitted):
        value = value.value
    if type(value) is MetaVar:
        return value.value
    b = _b()
    nm = name or "v"
    if ty is not None:
        t = _annotation(ty, "bind_")
        if not _is_type_like(t):
            raise TypeError(f"bind_: ty= must be a type, got {t!r}")
        with _at(loc):
            return b.bind(nm, convert(unwrap(value), _Like(_as_type(t))), _as_type(t))
    if type(value) is Cell:
        return value
    if isinstance(value, Buffer):
        return _rename_fresh(b, value, name) if name else value
    if isinstance(value, Var):
        return value
    if isinstance(value, PrimExpr) or type(value) in (int, float, bool):
        with _at(loc):
            return b.bind(nm, convert(value))
    return value


def _as_type(t: Any) -> Type:
    from ...ir.types import as_type

    return as_type(t, "binding type")


def decl_mutable_cell_(value: Any = MISSING, *, ty: Any = None, name: str | None = None, loc: Any = None,
                       name_loc: Any = None) -> Any:  # fmt: skip
    """Mutable storage: ``x: T.int32 = 0`` is ``decl_mutable_cell_(0, ty=T.int32, name="x")`` (a
    one-element local tensor; the result reads it, ``set_mutable_cell_`` writes it). Without
    ``ty=``, ``value`` is storage made already (``T.local_scalar()``, a tensor)."""
    if name is not None and (not isinstance(name, str) or not name.isidentifier()):
        raise ValueError(f"decl_mutable_cell_: name must be an identifier, got {name!r}")
    b = _b()
    if ty is None:
        if value is MISSING:
            raise TypeError("decl_mutable_cell_: give ty= or an existing storage handle")
        value = unwrap(value)
        if isinstance(value, Buffer):
            return _rename_fresh(b, value, name) if name else value
        if isinstance(value, BufferLoad):
            return value
        raise TypeError(f"decl_mutable_cell_: {value!r} is not storage (give ty= to declare some)")
    t = _annotation(ty, "decl_mutable_cell_")
    if isinstance(t, TensorType):
        with _at(loc):
            buf = b.alloc(name or "buf", t)
            if value is not MISSING:
                raise TypeError("decl_mutable_cell_: a tensor declaration takes no initializer")
        return buf
    if not _is_type_like(t):
        raise TypeError(f"decl_mutable_cell_: ty= must be a type, got {t!r}")
    pt = _as_type(t)
    if not isinstance(pt, PrimType):
        raise TypeError(f"decl_mutable_cell_: mutable storage needs a primitive dtype, got {pt}")
    with _at(loc):
        buf = b.alloc(name or "v", TensorType((1,), pt, "local"))
        if value is not MISSING:
            b.store(buf, (_ZERO,), convert(unwrap(value), _Like(pt)))
    return BufferLoad(buf, (_ZERO,))


def set_mutable_cell_(target: Any, value: Any, *, loc: Any = None) -> AlreadyEmitted:
    """``x = value`` for mutable storage ``x``: a store, no new binding."""
    idx: tuple
    if type(target) is Cell:
        buf, idx = target.buffer, (_ZERO,)
    elif isinstance(target, BufferLoad):
        buf, idx = target.buffer, target.indices
    elif isinstance(target, Buffer):
        if any(not (isinstance(d, IntImm) and d.value == 1) for d in target.shape):
            raise TypeError(f"set_mutable_cell_: tensor {target.name} is not a one-element storage")
        buf, idx = target, (_ZERO,) * len(target.shape)
    else:
        raise TypeError(f"set_mutable_cell_: target must be mutable storage, got {type(target).__name__}")
    b = _b()
    with _at(loc):
        b.store(buf, idx, unwrap(value))
    return _receipt(b)


# ------------------------------------------------------------------ statements
def emit_(value: Any, *, loc: Any = None) -> None:
    """An expression statement: an expression is evaluated (``T.evaluate``), a statement node is
    added, a frame (``T.device_entry(...)`` as a bare statement) opens and holds the rest of
    the enclosing frame; receipts, None, Vars, tensors and strings emit nothing; sequences
    are emitted element by element."""
    if value is None or isinstance(value, AlreadyEmitted):
        return
    if isinstance(value, (list, tuple)):
        for v in value:
            emit_(v, loc=loc)
        return
    if isinstance(value, (Var, Buffer, str, Cell, MetaVar, GlobalVar)):
        return
    b = _b()
    if isinstance(value, (StmtFrame, DeviceEntrySpec, AttrSpec)):  # a concise frame
        owner = innermost()
        if owner is None:
            raise ValueError("emit_: a frame emitted as a statement needs an enclosing frame to close it")
        with _at(loc):
            value.__enter__()
        owner.concise.append(value)
        return
    if isinstance(value, Stmt):
        with _at(loc):
            b.emit(value)
        return
    if isinstance(value, PrimExpr) or type(value) in (int, float, bool):
        with _at(loc):
            b.evaluate(value)
        return
    raise TypeError(f"emit_: cannot emit a {type(value).__name__} as a statement")


emit = emit_


def add_to_parent(stmt: Stmt) -> None:
    """Append a statement node to the innermost open frame."""
    if not isinstance(stmt, Stmt):
        raise TypeError(f"add_to_parent: expected a statement, got {type(stmt).__name__}")
    _b().emit(stmt)


def assert_(condition: Any, message: Any = "", *, loc: Any = None) -> None:
    """``assert cond, message``: message text, a sequence of parts, or ``(kind, parts)``."""
    cond = unwrap(condition)
    if type(cond) is MetaVar:
        cond = cond.value
    parts: tuple[str, ...]
    if isinstance(message, str):
        kind, parts = "RuntimeError", (message,)  # no message: one empty part, as TIRx
    elif (
        isinstance(message, tuple)
        and len(message) == 2
        and isinstance(message[0], str)
        and isinstance(message[1], (list, tuple))
    ):
        kind, parts = message[0], tuple(str(x) for x in message[1])
    elif isinstance(message, (list, tuple)):
        kind, parts = "RuntimeError", tuple(str(x) for x in message)
    else:
        raise TypeError(f"assert_: message must be a str, parts or (kind, parts), got {message!r}")
    if not isinstance(cond, PrimExpr) and not cond:  # decided now, as in a parsed kernel
        raise AssertionError(f"assertion failed{': ' + ' '.join(parts) if parts else ''}")
    # one that holds stays a statement (T.bool(True)), as a parsed kernel keeps it
    with _at(loc):
        _b().assert_(_to_bool_expr(cond), kind, parts)


def if_(condition: Any, *, loc: Any = None) -> IfFrame:
    """``if cond:``; the branches are ``with T.then_():`` and ``with T.else_():`` inside."""
    return IfFrame(condition, loc)


def then_(*, loc: Any = None) -> ThenFrame:
    return ThenFrame(loc)


def else_(*, loc: Any = None) -> ElseFrame:
    return ElseFrame(loc)


def while_(condition: Any, *, loc: Any = None) -> WhileFrame:
    return WhileFrame(condition, loc)


def range_(*args: Any, annotations: dict | None = None) -> ForFrame:
    """``range(stop)`` / ``range(start, stop[, step])`` as a serial loop frame (``for_`` names it)."""
    from tirx.surface.forms import LOOPS, RANGE

    if not 1 <= len(args) <= 3:
        raise TypeError(f"range_ takes 1 to 3 bounds, got {len(args)}")
    args = tuple(unwrap(a) for a in args)
    if (
        len(args) == 3
        and isinstance(args[2], (int, IntImm))
        and int(args[2].value if isinstance(args[2], IntImm) else args[2]) == 0
    ):
        raise ValueError("range_: the step must not be zero")
    if annotations:
        head = LOOPS[ForKind.SERIAL].call(list(args), {"annotations": annotations})
    else:
        head = RANGE.call(list(args), {})
    return ForFrame(LoopSpec([head]))


def for_(iterable: Any, *, names: Any = None, loc: Any = None) -> ForFrame:
    """The loop frame for ``for names in iterable`` (``range_``, ``T.serial``, ``T.grid``, a
    Python ``range``): entering gives the loop var, or the tuple for several loops."""
    if isinstance(iterable, range):
        iterable = range_(iterable.start, iterable.stop, *(() if iterable.step == 1 else (iterable.step,)))
    if isinstance(iterable, ForFrame):
        if iterable.entered:
            raise ValueError("for_: the loop frame was entered already")
        return ForFrame(iterable.spec, names, loc if loc is not None else iterable.loc)
    if type(iterable) is MetaVar:
        iterable = iterable.value
    if type(iterable) is LoopSpec:
        return ForFrame(iterable, names, loc)
    raise TypeError(
        f"for_: cannot loop over {type(iterable).__name__}: use range_, T.serial, T.unroll, "
        "T.vectorized, T.parallel, T.thread_binding or T.grid"
    )


def break_(*, loc: Any = None) -> AlreadyEmitted:
    b = _b()
    with _at(loc):
        b.break_()
    return _receipt(b)


def continue_(*, loc: Any = None) -> AlreadyEmitted:
    b = _b()
    with _at(loc):
        b.continue_()
    return _receipt(b)


def return_(value: Any = None, *, loc: Any = None) -> AlreadyEmitted:
    """``return`` / ``return value`` (a literal takes the function's return type)."""
    b = _b()
    val = unwrap(value)
    if type(val) is MetaVar:
        val = val.value
    ret_ty = _function_payload("return_")["ret_ty"]
    if val is not None and ret_ty is not None and not isinstance(val, PrimExpr):
        val = convert(val, _Like(ret_ty))
    with _at(loc):
        b.return_(val)
    return _receipt(b)


def unpack_(value: Any) -> Any:
    """The elements of ``value`` for ``a, b = value`` (a Python tuple; others unchanged)."""
    if type(value) is MetaVar:
        value = value.value
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return value


def _indices(buf: Buffer, key: Any, span: Any) -> tuple:
    if isinstance(key, list):
        key = tuple(key)
    return Parser.indices(buf, key, span)  # the frontend's rule


def setitem_(target: Any, key: Any, value: Any, *, loc: Any = None) -> AlreadyEmitted | None:
    """``target[key] = value``: a store into a tensor (a literal takes its dtype); Python
    containers are assigned in Python."""
    target, value = unwrap(target), unwrap(value)
    if not isinstance(target, Buffer):
        target[key] = value
        return None
    b = _b()
    sp = check_loc(loc) or b.span
    if not isinstance(value, PrimExpr) and type(value) in (int, float, bool):
        value = lit(value, _Like(target.dtype), sp)
    with _at(loc):
        b.store(target, _indices(target, key, sp), value)
    return _receipt(b)


def tensor_store(dest: Buffer, indices: Any, value: Any) -> AlreadyEmitted:
    """``dest[indices] = value`` (indices a sequence); the receipt holds the store."""
    if not isinstance(dest, Buffer):
        raise TypeError(f"tensor_store: dest must be a tensor, got {type(dest).__name__}")
    if not isinstance(indices, (list, tuple)):
        indices = (indices,)
    r = setitem_(dest, tuple(indices), value)
    assert r is not None
    return r


def setattr_(target: Any, name: str, value: Any, *, loc: Any = None) -> AlreadyEmitted | None:
    """``target.name = value``: a store through a mutable-scalar attribute, else Python's setattr."""
    cur = getattr(target, name, None)
    if type(cur) is Cell or (isinstance(cur, BufferLoad) and all(isinstance(i, IntImm) for i in cur.indices)):
        return set_mutable_cell_(cur, value, loc=loc)
    setattr(target, name, value)
    return None


# ------------------------------------------------------------------ locations
def at_(loc: Any, value: Any) -> Any:
    """Attach ``loc`` to ``value`` (a node without a span, a receipt's node, a frame, or each
    element of a list/tuple) and return ``value`` itself. Spans never change structural
    equality, so attaching one to a node in place is safe."""
    loc = check_loc(loc)
    if loc is None:
        return value

    def attach(x: Any) -> None:
        if isinstance(x, AlreadyEmitted):
            attach(x.value)
        elif isinstance(x, (list, tuple)):
            for y in x:
                attach(y)
        elif isinstance(x, Node) and getattr(x, "span", 0) is None:
            object.__setattr__(x, "span", loc)
        elif isinstance(x, StmtFrame) and x.loc is None and not x.entered:
            x.loc = loc

    attach(value)
    return value


def with_at_group_(location: Any, thunk: Callable[[], Any], *, attach_result: bool = True) -> Any:
    """Run ``thunk()`` once with ``location`` as the source position of what it builds."""
    location = check_loc(location, "location")
    if not callable(thunk):
        raise TypeError(f"with_at_group_: thunk must be callable, got {type(thunk).__name__}")
    if location is None or not IRBuilder.is_active():
        return thunk()
    with IRBuilder.current().with_span(location):
        r = thunk()
    return at_(location, r) if attach_result else r


# ------------------------------------------------------------------ modules
def _module(what: str) -> IRBuilder:
    b = _b()
    if b.module_funcs is None:
        raise ValueError(f"{what} needs an open module frame (with T.IRModuleFrame(...):)")
    return b


def decl_function(func_name: str, func_signature: Function) -> GlobalVar:
    """Add a finished Function to the open module under ``func_name``; returns the GlobalVar that
    calls it (``T.Call(gv, [args], ty=...)``). tirx has no signature-only declarations."""
    if not isinstance(func_name, str) or not func_name.isidentifier():
        raise ValueError(f"decl_function: func_name must be an identifier, got {func_name!r}")
    if not isinstance(func_signature, Function):
        raise TypeError(
            f"decl_function: expected a finished tirx Function, got {type(func_signature).__name__} "
            "(build functions inside the module frame to declare them)"
        )
    b = _module("decl_function")
    assert b.module_funcs is not None  # _module checked it
    if any(f.name == func_name for f in b.module_funcs):
        raise ValueError(f"decl_function: the module already has a function {func_name!r}")
    f = func_signature
    if f.name != func_name:
        # as in TIRx, a public function keeps its symbol under the new name (``global_symbol``)
        attrs = dict(f.attrs.items())
        if not f.private:
            attrs.setdefault("global_symbol", f.name)
        f = f.replace(name=func_name, attrs=Attrs(attrs))
    b.module_funcs.append(f)
    fr = innermost()
    return fr._gv(func_name) if isinstance(fr, IRModuleFrame) else GlobalVar(func_name)


def module_member_(name: str, value: Any) -> Any:
    """A class member of a module: a Function is added (its GlobalVar returned); anything else is
    returned unchanged."""
    if isinstance(value, Function):
        return decl_function(name, value)
    return value


#: where ``T.module_attrs({...})`` in a ``@T.ir_module`` class body leaves its dict for the decorator
CLASS_ATTRS_KEY = "__tirx_module_attrs__"


def module_attrs(attrs: dict, allow_overwrite: bool = False) -> None:
    """The open module's attributes (printed as TIRx prints them: ``T.module_attrs({...})``
    first in the class body). In a ``@T.ir_module`` class body, which Python runs before the
    decorator, the dict is left in the class namespace for the decorator."""
    if not isinstance(attrs, dict):
        raise TypeError(f"module_attrs: attrs must be a dict, got {type(attrs).__name__}")
    caller = sys._getframe(1).f_locals
    if not IRBuilder.is_active() and "__qualname__" in caller and "__module__" in caller:
        if CLASS_ATTRS_KEY in caller and not allow_overwrite:
            raise ValueError("module_attrs: given twice in this class body")
        caller[CLASS_ATTRS_KEY] = dict(attrs)
        return
    b = _module("module_attrs")
    if b.module_attrs and not allow_overwrite:
        raise ValueError(
            "module_attrs: the module's attrs are set already (allow_overwrite=True replaces them)"
        )
    b.module_attrs = dict(attrs)


def module_get_attr(attr_key: str) -> Any:
    """One attribute of the open module, or None."""
    attrs = _module("module_get_attr").module_attrs
    assert attrs is not None  # made with module_funcs when the module opened
    return attrs.get(attr_key)


def module_set_attr(attr_key: str, attr_value: Any, allow_overwrite: bool = False) -> None:
    """Set one attribute of the open module (None removes it)."""
    if not isinstance(attr_key, str):
        raise TypeError(f"module_set_attr: attr_key must be a str, got {type(attr_key).__name__}")
    b = _module("module_set_attr")
    assert b.module_attrs is not None  # made with module_funcs when the module opened
    if attr_key in b.module_attrs and not allow_overwrite:
        raise ValueError(
            f"module_set_attr: attr {attr_key!r} is set already (allow_overwrite=True replaces it)"
        )
    if attr_value is None:
        b.module_attrs.pop(attr_key, None)
    else:
        b.module_attrs[attr_key] = attr_value


def module_global_infos(global_infos: dict) -> None:
    """TIRx's per-module global infos (device meshes, ...): a tirx Module holds none, so only an
    empty mapping is accepted."""
    if not isinstance(global_infos, dict):
        raise TypeError(f"module_global_infos: expected a dict, got {type(global_infos).__name__}")
    _module("module_global_infos")
    if any(global_infos.values()):
        raise ValueError("module_global_infos: tirx modules hold no global infos (not supported)")


class GlobalInfoUnsupported(ValueError, NotImplementedError):
    """``resolve_global_info_``: no global infos to look up (TIRx raises NotImplementedError)."""


def resolve_global_info_(content: Any) -> Any:
    """TIRx defines no global-info selectors, and neither does tirx: always raises
    (a ValueError that is also the NotImplementedError TIRx raises)."""
    if not isinstance(content, str):
        raise TypeError(f"resolve_global_info_: expected a str selector, got {type(content).__name__}")
    raise GlobalInfoUnsupported(f"resolve_global_info_: tirx has no global infos to resolve {content!r} in")


def resolve_global_info_args(*fields: str, resolver: Callable[[str], Any]) -> Callable:
    """Decorator: the named arguments of a builder function, when given as strings, are
    replaced by ``resolver(string)`` before the call (other values pass unchanged)."""
    if not callable(resolver):
        raise TypeError("resolve_global_info_args: resolver must be callable")
    names = tuple(dict.fromkeys(fields))

    def deco(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        for n in names:
            if n not in sig.parameters:
                raise ValueError(f"resolve_global_info_args: {fn.__name__} has no parameter {n!r}")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            ba = sig.bind(*args, **kwargs)
            ba.apply_defaults()
            for n in names:
                v = ba.arguments.get(n)
                if isinstance(v, str):
                    ba.arguments[n] = resolver(v)
            return fn(*ba.args, **ba.kwargs)

        return wrapper

    return deco


def pyfunc(function: Callable) -> Callable:
    """Mark a plain Python function kept in an ``@T.ir_module`` class: returned unchanged (a tirx
    Module holds only IR functions, so the module leaves it out)."""
    if not callable(function):
        raise TypeError(f"pyfunc: expected a callable, got {type(function).__name__}")
    return function


# ------------------------------------------------------------------ regions
def _region_frame(kind: str, pos: list, attrs: Any, body_params: Any) -> RegionFrame:
    """Check the header through its form (tirx/surface/region_forms.py, shared with the text loader)."""
    from tirx.surface import region_forms

    from ...ir.stmt import REGION_KINDS

    fname = f"T.{kind}"
    if attrs:
        raise ValueError(f"{fname}: TIRx's built-in regions take no attrs, got {attrs!r}")
    spec = next(f for f in region_forms.FORMS if f.name == kind)
    _, args = spec.call([unwrap(a) for a in pos], {}, None, fname)
    var = None
    if body_params is not None:
        body_params = list(body_params)
        want = int(REGION_KINDS[kind][1])
        if len(body_params) != want or not all(isinstance(v, Var) for v in body_params):
            raise TypeError(f"{fname}: body_params must hold {want} Var(s), got {body_params!r}")
        var = body_params[0] if body_params else None
    return RegionFrame(kind, args, var)


def launch_thread(thread_tag: str, extent: Any, *, attrs: Any = None, body_params: Any = None) -> RegionFrame:
    """``with T.launch_thread("threadIdx.x", n) as v:``: the body sees ``v``, the thread index
    (typed like ``extent``). Inside a device entry CUDA reads ``threadIdx``/``blockIdx``."""
    return _region_frame("launch_thread", [thread_tag, extent], attrs, body_params)


def compute_scope(name: str, *, attrs: Any = None, body_params: Any = None) -> RegionFrame:
    """``with T.compute_scope("name"):`` TIRx's named CPU compute helper (not on CUDA)."""
    return _region_frame("compute_scope", [name], attrs, body_params)


def device_context(
    device_type: Any, device_id: Any, *, attrs: Any = None, body_params: Any = None
) -> RegionFrame:
    """``with T.device_context(device_type, device_id):`` TIRx's host device context (not on CUDA)."""
    return _region_frame("device_context", [device_type, device_id], attrs, body_params)


def device_scope(*, attrs: Any = None, body_params: Any = None) -> RegionFrame:
    """``with T.device_scope():`` TIRx's host/device splitting boundary (inline in a kernel)."""
    return _region_frame("device_scope", [], attrs, body_params)


def parallel_launch(*, attrs: Any = None, body_params: Any = None) -> RegionFrame:
    """``with T.parallel_launch():`` TIRx's CPU worker team (not on CUDA)."""
    return _region_frame("parallel_launch", [], attrs, body_params)


def region(op: Any, args: Any, body_params: Any = None, attrs: Any = None) -> RegionFrame:
    """A region by its op name (``"tirx.launch_thread"`` or ``"launch_thread"``) and arguments."""
    from ...ir.stmt import REGION_KINDS

    name = getattr(op, "name", op)
    if not isinstance(name, str):
        raise TypeError(f"region: op must be a region op name, got {op!r}")
    kind = name[5:] if name.startswith("tirx.") else name
    if kind not in REGION_KINDS:
        raise ValueError(f"region: {name!r} is not a region op (one of {', '.join(REGION_KINDS)})")
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"region: args must be a list, got {type(args).__name__}")
    return _region_frame(kind, list(args), attrs, body_params)


def call_global_var_(function: GlobalVar, args: Any) -> PrimExpr:
    """``Module.callee(x)``: a call of a function of the open module, typed by its declared
    return type (literal arguments take the parameter dtypes, as ``@T.ir_module`` does)."""
    from ..decorators import GlobalRef

    if not isinstance(function, GlobalVar):
        raise TypeError(f"call_global_var_: expected a GlobalVar, got {type(function).__name__}")
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"call_global_var_: args must be a list, got {type(args).__name__}")
    b = _module("call_global_var_")
    assert b.module_funcs is not None  # _module checked it
    callee = next((f for f in b.module_funcs if f.name == function.name), None)
    if callee is None:
        raise ValueError(f"call_global_var_: the module has no function {function.name!r} (declare it first)")
    ref = GlobalRef(callee.name, [p.ty for p in callee.params], callee.ret_ty)
    return ref(*[unwrap(a) for a in args])
