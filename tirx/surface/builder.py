"""IRBuilder: the one place where script constructs become IR nodes.

Both front ends (the Python-AST frontend in ``tirx.script`` and the text grammar in
``tirx.grammar``) drive this builder, so what ``x = e``, ``for``, ``if``, ``with
T.device_entry`` mean is written once. Frames collect statements; a span stack stamps
every emitted statement with its source location; name scopes follow the frames.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, TypeVar, cast, overload

from tirx.ir import (
    AllocBuffer,
    Assert,
    AttrStmt,
    Bind,
    Break,
    Buffer,
    BufferStore,
    Continue,
    DeclBuffer,
    DeviceEntry,
    Evaluate,
    For,
    ForKind,
    Function,
    GlobalVar,
    IfThenElse,
    IntImm,
    Module,
    PointerType,
    PrimExpr,
    PrimType,
    Return,
    SeqStmt,
    Stmt,
    TensorType,
    Type,
    Var,
    While,
    convert,
    deep,
)
from tirx.ir.buffer import register_store
from tirx.ir.expr import Call, Cast
from tirx.ir.fold import fold_cast
from tirx.ir.function import PERSISTENT_KERNEL
from tirx.ir.names import is_printable_name
from tirx.ir.node import EMPTY_ATTRS, Attrs
from tirx.ir.stmt import LAUNCH_FIELDS_KEY, seq
from tirx.ir.types import as_prim, as_type, int32, void

__all__ = ["IRBuilder", "launch_args", "range_extent"]

_S = TypeVar("_S", bound=Stmt)  # emit gives back the statement's own class

_tls = threading.local()
deep.carry_stack(_tls)  # a deep function body is built on tirx.ir.deep's worker thread


class _Frame:
    __slots__ = ("kind", "names", "payload", "stmts")

    def __init__(self, kind: str, payload: Any = None):
        self.kind = kind
        self.payload = payload
        self.stmts: list[Stmt] = []
        self.names: dict[str, Any] = {}


def launch_args(
    grid: Any, block: Any, cluster: Any = None, dynamic_smem_bytes: Any = None
) -> tuple[tuple, Attrs]:
    """Normalize a launch configuration to DeviceEntry's (args, attrs), as TIRx prints it."""

    def dims(v: Any, what: str) -> list:
        if isinstance(v, (list, tuple)):
            if not 1 <= len(v) <= 3:
                raise ValueError(f"LaunchConfig.{what} takes 1 to 3 dimensions, got {len(v)}")
            v = list(v)
        else:
            v = [v]
        return [convert(x) for x in v] + [convert(1)] * (3 - len(v))

    fields = ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]
    args = dims(grid, "grid") + dims(block, "block")
    if cluster is not None:
        fields += ["cluster.x", "cluster.y", "cluster.z"]
        args += dims(cluster, "cluster")
    if dynamic_smem_bytes is not None:
        fields.append("dynamic_smem_bytes")
        args.append(convert(dynamic_smem_bytes))
    for i, a in enumerate(args):
        if not (isinstance(a.ty, PrimType) and a.ty.is_int):
            raise TypeError(f"LaunchConfig: {fields[i]} must be an integer, got dtype {a.ty}")
    return tuple(args), Attrs({"cuda.kernel_attrs": {}, LAUNCH_FIELDS_KEY: fields})


def _dim(s: Any) -> Any:
    """A tensor dimension as an expression: what ``convert`` makes of it, an int32 literal directly."""
    if type(s) is int and -0x80000000 <= s <= 0x7FFFFFFF:
        return IntImm(s, int32)
    return convert(s)


class IRBuilder:
    """Builds a Function or a Module through nested frames.

    Use as a context manager to make it ``IRBuilder.current()`` (plain Python helpers
    called from a kernel emit statements through it).

    With ``check_well_formed=True`` (what both front ends pass) every finished function
    (or module) goes through ``tirx.ir.verify.verify_well_formed``, so the Python frontend
    and the text loader reject exactly the same programs, with one located message per
    rule. ``source_text`` is the text being loaded (for the caret snippet of spans in
    ``source_name``; Python sources are read from their files).
    """

    def __init__(
        self,
        source_name: str = "<script>",
        *,
        check_well_formed: bool = False,
        source_text: str | None = None,
    ):
        self.source_name = source_name
        self.source_text = source_text
        self.check_well_formed = check_well_formed
        self.frames: list[_Frame] = []
        self.spans: list[Any] = []
        self.result: Function | Module | None = None
        self.module_funcs: list[Function] | None = None
        self.module_checked: set[str] = set()
        self.module_attrs: dict | None = None  # the open module's attrs (T.module_set_attr adds)
        self.data_named: Buffer | None = None  # the tensor whose ``.data`` the script named last

    def name_data(self, buf: Buffer) -> Any:
        """``buf.data`` as a script names it: the pointer, noting the tensor it was named
        through (a declaration over it keeps that tensor: ``DeclBuffer.data_of``)."""
        self.data_named = buf
        return buf.data

    # -- current builder -----------------------------------------------------------
    def __enter__(self) -> IRBuilder:
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _tls.stack.pop()

    @staticmethod
    def current() -> IRBuilder:
        stack = getattr(_tls, "stack", None)
        if not stack:
            raise RuntimeError(
                "no IRBuilder is active: statements can only be emitted while a kernel is built"
            )
        return stack[-1]

    @staticmethod
    def is_active() -> bool:
        return bool(getattr(_tls, "stack", None))

    #: TIRx's name (``IRBuilder.is_in_scope()``: whether a kernel is being built)
    is_in_scope = is_active

    # -- spans ---------------------------------------------------------------------
    @contextlib.contextmanager
    def with_span(self, span: Any) -> Iterator[None]:
        self.spans.append(span)
        try:
            yield
        finally:
            self.spans.pop()

    @property
    def span(self) -> Any:
        return self.spans[-1] if self.spans else None

    # -- names ---------------------------------------------------------------------
    def define(self, name: str, value: Any) -> None:
        self.frames[-1].names[name] = value

    def lookup(self, name: str, default: Any = None) -> Any:
        for f in reversed(self.frames):
            if name in f.names:
                return f.names[name]
        return default

    def lookup_local(self, name: str, default: Any = None) -> Any:
        return self.frames[-1].names.get(name, default) if self.frames else default

    def is_defined(self, name: str) -> bool:
        return any(name in f.names for f in self.frames)

    # -- frames --------------------------------------------------------------------
    @property
    def frame(self) -> _Frame:
        if not self.frames:
            raise RuntimeError("IRBuilder: no open function")
        return self.frames[-1]

    def emit(self, stmt: _S) -> _S:
        if stmt.span is None and self.spans:
            stmt = stmt.with_span(self.spans[-1])
        self.frame.stmts.append(stmt)
        return stmt

    def _body(self, fr: _Frame) -> Stmt:
        return seq(fr.stmts) if fr.stmts else SeqStmt(())

    @contextlib.contextmanager
    def _frame(self, kind: str, payload: Any = None) -> Iterator[_Frame]:
        fr = _Frame(kind, payload)
        self.frames.append(fr)
        try:
            yield fr
        finally:
            popped = self.frames.pop()
            assert popped is fr

    @contextlib.contextmanager
    def module(self, name: str = "Module", attrs: Any = None) -> Iterator[None]:
        self.module_funcs = []
        self.module_checked = set()
        self.module_attrs = dict(attrs) if attrs is not None else {}
        yield
        attrs = Attrs(self.module_attrs) if self.module_attrs else EMPTY_ATTRS
        mod = Module(tuple(self.module_funcs), attrs, name=name)
        self.module_funcs = self.module_attrs = None
        if self.module_checked:
            self.verify(mod, self.module_checked)
        self.result = mod

    def verify(self, ir: Function | Module, functions: set[str] | None = None) -> None:
        """Raise a located ``DiagnosticError`` if ``ir`` is not well-formed.

        ``functions`` limits the report to those functions of a module (the others
        opted out with ``check_well_formed=False``); calls between functions are checked
        against the whole module. A call naming no function of the module is left to the
        front ends, which resolve callee names themselves and locate the error at the name
        (the Python frontend when ``Module.f`` is read, the text loader when the module
        ends). A device-only op in host code is left to compilation: TIRx builds and
        loads such a function (its compile refuses it), so the front ends do too; so is a
        var defined nowhere in a module's function (a module-level ``T.dynamic``), which
        TIRx's module check accepts (a standalone function's refuses it, as here).
        """
        from tirx.ir.verify import raise_errors, verify_well_formed

        errors = [e for e in verify_well_formed(ir) if e.check != "device_only"]
        if functions is not None:
            errors = [
                e
                for e in errors
                if (e.function is None or e.function in functions) and e.check not in ("callee", "free_var")
            ]
        if errors:
            raise_errors(errors, None, self.source_text, self.source_name)

    @contextlib.contextmanager
    def function(
        self,
        name: str,
        private: bool = False,
        attrs: Any = None,
        check_well_formed: bool | None = None,
        persistent: bool = False,
    ) -> Iterator[_Frame]:
        """A function frame. ``check_well_formed`` (default: the builder's setting) verifies
        the finished function (inside a module: at the module's end, with its callees);
        ``persistent``: TIRx's persistent-kernel mark, the attribute ``PERSISTENT_KERNEL``."""
        check = self.check_well_formed if check_well_formed is None else check_well_formed
        span = self.span
        # name and private stay open until the frame ends (TIRx's builder API names it inside)
        payload = {"params": [], "buffer_map": [], "ret_ty": None, "attrs": attrs}
        payload.update(name=name, private=private)
        with self._frame("function", payload) as fr:
            yield fr
        attrs, name = payload["attrs"], payload["name"]
        if persistent:
            attrs = Attrs({**(attrs or {}), PERSISTENT_KERNEL: True})
        if self.module_funcs is None and not payload["private"] and attrs:
            sym = attrs.get("global_symbol") if hasattr(attrs, "get") else None
            if isinstance(sym, str) and sym != name and is_printable_name(sym):
                # a standalone public function is named by its symbol, as in TIRx
                # (a symbol that is no printable name stays an attribute: the text prints again)
                # (``T.func_attr({"global_symbol": "func"})`` in ``def func1``: ``def func``)
                name = sym
                rest = {k: v for k, v in attrs.items() if k != "global_symbol"}
                attrs = Attrs(rest) if rest else None
        f = Function(
            name,
            tuple(payload["params"]),
            self._body(fr),
            tuple(payload["buffer_map"]),
            payload["ret_ty"],
            attrs if attrs is not None else EMPTY_ATTRS,
            payload["private"],
            span=span,
        )
        if self.module_funcs is not None:
            self.module_funcs.append(f)
            if check:
                self.module_checked.add(name)
        else:
            if check:
                self.verify(f)
            self.result = f

    def _function_frame(self) -> _Frame:
        for fr in reversed(self.frames):
            if fr.kind == "function":
                return fr
        raise RuntimeError("IRBuilder: no open function")

    @overload
    def param(self, name: str, ty: TensorType) -> Buffer: ...
    @overload
    def param(self, name: str, ty: Var | PrimType | PointerType | str) -> Var: ...
    @overload
    def param(self, name: str, ty: Any) -> Var | Buffer: ...
    def param(self, name: str, ty: Any) -> Var | Buffer:
        """Add a parameter. A TensorType gives a pointer param and its Buffer (returned)."""
        fr = self._function_frame()
        if isinstance(ty, Var):  # an existing variable becomes the parameter itself
            fr.payload["params"].append(ty)
            self.define(name, ty)
            return ty
        if isinstance(ty, TensorType):
            data = Var(name, PointerType(ty.dtype, ty.scope), span=self.span)
            buf = self.make_buffer(name, ty, data)
            fr.payload["params"].append(data)
            fr.payload["buffer_map"].append((data, buf))
            self.define(name, buf)
            return buf
        v = Var(name, as_type(ty, f"parameter {name}"), span=self.span)
        fr.payload["params"].append(v)
        self.define(name, v)
        return v

    def func_attr(self, attrs: Any) -> None:
        """Add to the enclosing function's attrs (``T.func_attr({...})``; several calls merge, as
        TIRx's do, and a key given twice is an error, as in TIRx)."""
        payload = self._function_frame().payload
        new = Attrs(attrs) if not isinstance(attrs, Attrs) else attrs
        if payload.get("func_attr"):
            old = payload["attrs"]
            for k, v in new.items():
                if k in old:
                    raise ValueError(f"T.func_attr gives the key {k!r} twice (first {old[k]!r}, then {v!r})")
            new = Attrs({**dict(old.items()), **dict(new.items())})
        payload["attrs"] = new
        payload["func_attr"] = True

    def set_module_attrs(self, attrs: Any) -> None:
        """The open module's attributes (``T.module_attrs({...})`` in its class body, once)."""
        if self.module_funcs is None:
            raise ValueError("T.module_attrs belongs in the class body of a @T.ir_module")
        if self.module_attrs:
            raise ValueError(
                "the module's attrs are given twice (T.module_attrs and @T.ir_module(attrs=...))"
            )
        self.module_attrs = dict(attrs.items() if isinstance(attrs, Attrs) else attrs)

    def set_ret_type(self, ty: Any) -> None:
        self._function_frame().payload["ret_ty"] = None if ty is None else as_type(ty, "return type")

    def make_buffer(self, name: str, ty: TensorType, data: Var | None = None) -> Buffer:
        dtype = as_prim(ty.dtype, f"tensor {name} dtype")
        if data is None:
            data = Var(name, PointerType(dtype, ty.scope), span=self.span)
        off = ty.elem_offset
        return Buffer(
            name,
            data,
            dtype,
            tuple([_dim(s) for s in ty.shape]),
            tuple([_dim(s) for s in ty.strides]),
            None if off is None else convert(off),
            int(ty.align or 0),
            ty.layout,
            span=self.span,
        )

    # -- statements ----------------------------------------------------------------
    def bind(self, name: str, value: Any, ty: Any = None) -> Var:
        value = convert(value)
        t = value.ty if ty is None else as_type(ty, f"binding {name}")
        if t != value.ty and isinstance(value, Call) and getattr(value.op, "typed_by_binding", False):
            value = Call(value.op, value.args, t, span=value.span)  # TIRx's T.undef() under a let
        if t != value.ty:
            if isinstance(t, PrimType) and isinstance(value.ty, PrimType):
                raise TypeError(f"binding {name}: value has dtype {value.ty}, annotation says {t}")
            raise TypeError(f"binding {name}: value has type {value.ty}, annotation says {t}")
        v = Var(name, t, span=self.span)
        self.emit(Bind(v, value, span=self.span))
        return v

    def alloc(self, name: str, ty: TensorType, annotations: Any = None) -> Buffer:
        buf = self.make_buffer(name, ty)
        self.emit(AllocBuffer(buf, annotations if annotations is not None else EMPTY_ATTRS, span=self.span))
        return buf

    def decl(
        self,
        name: str,
        ty: TensorType,
        data: Any,
        declared_scope: str = "global",
        data_of: Buffer | None = None,
    ) -> Buffer:
        """``name = T.decl_tensor(data, ty_args=[ty])``: the storage is ``data``'s;
        ``declared_scope`` the scope the declaration's ``T.Tensor`` names (TIRx keeps it). A
        pointer expression (TIRx's ``T.decl_tensor(T.address_of(A[3, 0]), ...)``) is bound first
        to ``<name>.data``, a variable no script can name (the printer writes the pair back as
        the one declaration: ``view_data_binding``). ``data_of`` is the tensor the pointer was
        named through (a view's source; else the last ``X.data`` the script named, when it is
        this pointer)."""
        if data_of is None and self.data_named is not None and self.data_named.data is data:
            data_of = self.data_named
        self.data_named = None
        if isinstance(data, PrimExpr) and not isinstance(data, Var) and isinstance(data.ty, PointerType):
            data = self.bind(f"{name}.data", data)
        if not isinstance(data, Var) or not isinstance(data.ty, PointerType):
            raise TypeError(f"decl_buffer {name}: data= must be a pointer variable, got {data!r}")
        buf = self.make_buffer(name, ty, data)
        self.emit(DeclBuffer(buf, declared_scope, data_of=data_of, span=self.span))
        return buf

    def store(self, buf: Buffer, indices: tuple, value: Any) -> None:
        if len(indices) != len(buf.shape):
            raise IndexError(f"buffer {buf.name} has rank {len(buf.shape)}, got {len(indices)} indices")
        value = convert(value, _Like(buf.dtype))
        vt, dt = value.ty, buf.dtype
        if vt == void and isinstance(value, Call) and getattr(value.op, "typed_by_binding", False):
            # TIRx's ``b[i] = T.cuda.func_call(...)`` (printed without ty=): the tensor types it
            value = Call(value.op, value.args, dt, span=value.span)
            vt = dt
        if vt != dt and isinstance(vt, PrimType) and vt.lanes == 1:
            if not (_numeric(vt) and isinstance(dt, PrimType) and dt.lanes == 1 and _numeric(dt)):
                raise TypeError(f"store to {buf.name}: value dtype {vt} differs from buffer dtype {dt}")
            # TIRx casts a stored scalar to the tensor's dtype (a constant folds: tirx/ir/fold.py)
            value = fold_cast(Cast(dt, value, span=value.span))
        self.emit(BufferStore(buf, value, tuple(convert(i) for i in indices), span=self.span))

    def evaluate(self, value: Any) -> None:
        self.emit(Evaluate(convert(value), span=self.span))

    def break_(self) -> None:
        self.emit(Break(span=self.span))

    def continue_(self) -> None:
        self.emit(Continue(span=self.span))

    def return_(self, value: Any = None) -> None:
        self.emit(Return(None if value is None else convert(value), span=self.span))

    def assert_(self, cond: Any, kind: str = "RuntimeError", message: Any = ()) -> None:
        if isinstance(message, str):
            message = (message,)
        self.emit(Assert(convert(cond), kind, tuple(message), span=self.span))

    # -- scoped statements ---------------------------------------------------------
    @contextlib.contextmanager
    def for_(
        self,
        var: str | Var,
        start: Any,
        extent: Any,
        kind: ForKind = ForKind.SERIAL,
        step: Any = None,
        annotations: Any = None,
        thread: str | None = None,
        dtype: Any = None,
    ) -> Iterator[Var]:
        span = self.span
        start = convert(start)
        extent = convert(extent)
        if dtype is None:
            dtype = start.ty if start.ty == extent.ty else _wider(start.ty, extent.ty)
        dtype = as_type(dtype)
        if start.ty != dtype:
            start = _cast_int(start, dtype)
        if extent.ty != dtype:
            extent = _cast_int(extent, dtype)
        if step is not None:
            step = convert(step, start)
        v = var if isinstance(var, Var) else Var(var, dtype, span=span)
        with self._frame("for") as fr:
            yield v
        self.emit(
            For(v, start, extent, kind, self._body(fr), step, thread, annotations or EMPTY_ATTRS, span=span)
        )

    @contextlib.contextmanager
    def while_(self, cond: Any) -> Iterator[None]:
        span = self.span
        cond = convert(cond)
        with self._frame("while") as fr:
            yield
        self.emit(While(cond, self._body(fr), span=span))

    @contextlib.contextmanager
    def if_(self, cond: Any) -> Iterator[None]:
        span = self.span
        cond = convert(cond)
        with self._frame("if") as fr:
            yield
        self.emit(IfThenElse(cond, self._body(fr), None, span=span))

    @contextlib.contextmanager
    def else_(self) -> Iterator[None]:
        parent = self.frame
        if not parent.stmts or not isinstance(parent.stmts[-1], IfThenElse) or parent.stmts[-1].else_case:
            raise RuntimeError("IRBuilder: else_ without a preceding if_")
        with self._frame("else") as fr:
            yield
        last = parent.stmts[-1]
        parent.stmts[-1] = last.replace(else_case=self._body(fr))

    @contextlib.contextmanager
    def device_entry(self, args: tuple, attrs: Any) -> Iterator[None]:
        span = self.span
        with self._frame("device_entry", {}) as fr:
            yield
        if fr.payload:  # attributes set from inside (set_entry_attr), keys sorted as TIRx prints them
            attrs = Attrs(dict(sorted({**dict(attrs or {}), **fr.payload}.items())))
        self.emit(DeviceEntry(tuple(args), attrs, self._body(fr), span=span))

    def set_entry_attr(self, key: str, value: Any) -> None:
        """Set the attribute ``key`` of the innermost open device entry (TIRx's kernel
        resource requirements, e.g. ``"cuda.smem_required"`` from ``SMEMPool.commit()``); a
        later call for the same key replaces the value. A ValueError outside a device entry."""
        for fr in reversed(self.frames):
            if fr.kind == "device_entry":
                fr.payload[key] = value
                return
        raise ValueError(f"{key!r} is an attribute of a device entry: no T.device_entry encloses it")

    @contextlib.contextmanager
    def attr(self, key: str, value: Any) -> Iterator[None]:
        span = self.span
        with self._frame("attr") as fr:
            yield
        self.emit(AttrStmt(key, convert(value), self._body(fr), span=span))

    @contextlib.contextmanager
    def region(self, kind: str, args: tuple, var: str | Var | None = None) -> Iterator[Var | None]:
        """TIRx's region statements (``with T.launch_thread(tag, n) as v:``, ``T.compute_scope``,
        ``T.device_context``, ``T.parallel_launch``): a RegionStmt. A kind that binds a
        variable (``tirx.ir.stmt.REGION_KINDS``) gets one named ``var``, typed as it requires."""
        from tirx.ir.stmt import REGION_KINDS, RegionStmt

        span = self.span
        args = tuple(args)
        params: tuple = ()
        if REGION_KINDS.get(kind, ("", False))[1]:
            v = var if isinstance(var, Var) else Var(var or "v", args[1].ty, span=span)
            params = (v,)
        with self._frame("region") as fr:
            yield params[0] if params else None
        self.emit(RegionStmt(kind, args, params, self._body(fr), span=span))

    @contextlib.contextmanager
    def block(self) -> Iterator[_Frame]:
        """A detached frame: statements emitted inside are returned, not emitted."""
        with self._frame("block") as fr:
            yield fr

    def get(self) -> Function | Module:
        if self.result is None:
            raise RuntimeError("IRBuilder: nothing was built")
        return self.result


class _Like:
    """A dtype carrier so literals converted for a store take the buffer dtype."""

    __slots__ = ("ty",)

    def __init__(self, ty: Type):
        self.ty = ty


def range_extent(start: PrimExpr, stop: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    """``(start, extent)`` of ``range(start, stop)``: the one rule, ``tirx.surface.forms.range_extent``
    (both front ends build loops through the loop forms there; the printer inverts it)."""
    from tirx.surface.forms import range_extent as rule

    return rule(start, stop)


def _wider(a: Type, b: Type) -> Type:
    if isinstance(a, PrimType) and isinstance(b, PrimType) and a.is_int and b.is_int:
        return a if a.bits >= b.bits else b
    raise TypeError(f"loop bounds must be integers of one dtype, got {a} and {b}")


def _cast_int(e: PrimExpr, t: Type) -> PrimExpr:
    from tirx.ir import Cast, IntImm

    if isinstance(e, IntImm):
        # IntImm's validator rejects a dtype that is not an integer PrimType
        return IntImm(e.value, cast(PrimType, t), span=e.span)
    return Cast(t, e)


def _numeric(t: PrimType) -> bool:
    return t.is_int or t.is_float or t.is_bool


def _store(buf: Buffer, indices: tuple, value: Any) -> None:
    IRBuilder.current().store(buf, indices, value)


register_store(_store)  # ``buf[i] = v`` (tirx/ir/buffer.py) emits through the active builder


class GlobalRef:
    """``Module.f`` / ``cls.f`` while the module is parsed: calling it builds a Call."""

    __slots__ = ("name", "params", "ret")

    def __init__(self, name: str, params: list, ret: Any):
        self.name = name
        self.params = params
        self.ret = ret

    def __call__(self, *args: Any) -> Call:
        conv = []
        tensors = []  # written with a tensor: its pointer, the spelling kept (Call.tensor_args)
        for i, a in enumerate(args):
            pt = self.params[i] if i < len(self.params) else None
            if isinstance(a, Buffer):
                tensors.append(i)  # op.call's rule
                a = a.data
            conv.append(convert(a, _Like(pt)) if isinstance(pt, PrimType) else convert(a))
        rt = self.ret if self.ret is not None else void
        return Call(GlobalVar(self.name), tuple(conv), rt, tuple(tensors))
