"""Function and Module."""

from __future__ import annotations

import keyword
from typing import Any

from attrs import evolve, field

from .buffer import Buffer
from .expr import DEF, NODE, VALUE, Var
from .node import BUFMAP, EMPTY_ATTRS, FUNCS, PARAMS, Attrs, Node, as_attrs, child
from .node import frozen_node as _frozen  # attrs.define(frozen, slots, eq=False, repr=False)
from .stmt import ATTRS, Stmt, as_body
from .types import Type, as_type

#: the function attribute of TIRx's persistent kernels (``@T.function(persistent=True)``)
PERSISTENT_KERNEL = "tirx.persistent_kernel"

__all__ = ["Function", "Module"]


@_frozen
class Function(Node):
    """A kernel or helper function.

    ``params`` are Vars (tensor parameters are pointer Vars); ``buffer_map`` pairs a
    pointer param with the Buffer the body indexes. Dynamic shape vars are the vars that
    first appear in buffer_map shapes. ``private`` functions have no global symbol.
    """

    name: str
    params: tuple = child(PARAMS)
    body: Stmt = child(NODE, body=True, converter=as_body)
    buffer_map: tuple = child(BUFMAP, default=())
    ret_ty: Type | None = child(VALUE, after_defs=True, default=None)  # may name params' vars
    attrs: Attrs = child(ATTRS, default=EMPTY_ATTRS)
    private: bool = child(VALUE, default=False)

    # TIRx's Function API for attributes (a new Function each time: functions are immutable)
    def with_attr(self, key: str, value: Any) -> Function:
        """This function with attribute ``key`` set to ``value``."""
        return self.with_attrs({key: value})

    def with_attrs(self, attrs: Any) -> Function:
        """This function with ``attrs`` (a mapping) merged into its attributes.

        A private function given a ``global_symbol`` (TIRx's ``tirx.Function(params, body)``
        builds one, ``.with_attr("global_symbol", "f")`` names it) becomes the public function
        of that name, as TIRx's has that symbol and prints under it."""
        new = dict(attrs)
        sym = new.get("global_symbol")
        sym = getattr(sym, "value", sym)  # a StringImm, as TIRx may keep it
        if self.private and isinstance(sym, str) and sym.isidentifier() and not keyword.iskeyword(sym):
            del new["global_symbol"]
            return self.replace(name=sym, private=False, attrs=Attrs({**self.attrs, **new}))
        return self.replace(attrs=Attrs({**self.attrs, **new}))

    @property
    def ret_type(self) -> Type | None:
        """TIRx's name of ``ret_ty`` (``None`` where the function returns nothing: TIRx's is
        an empty tuple type there)."""
        return self.ret_ty

    def without_attr(self, key: str) -> Function:
        """This function without attribute ``key`` (unchanged when it has none)."""
        return self.replace(attrs=Attrs({k: v for k, v in self.attrs.items() if k != key}))

    def __attrs_post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"Function.name must be a str, got {type(self.name).__name__}")
        if not self.name.isidentifier() or keyword.iskeyword(self.name):
            # the name is a global symbol in text and in generated code
            raise ValueError(
                f"Function.name must be an identifier and not a Python keyword, got {self.name!r}"
            )
        if type(self.params) is not tuple:
            object.__setattr__(self, "params", tuple(self.params))
        for i, p in enumerate(self.params):
            if not isinstance(p, Var):
                raise TypeError(f"Function.params[{i}] must be a Var, got {type(p).__name__}")
        if not isinstance(self.body, Stmt):
            raise TypeError(f"Function.body must be a Stmt, got {type(self.body).__name__}")
        bm = self.buffer_map
        if isinstance(bm, dict):
            bm = tuple(bm.items())
        elif type(bm) is not tuple:
            bm = tuple(bm)
        for i, pair in enumerate(bm):
            if not (
                isinstance(pair, tuple)
                and len(pair) == 2
                and isinstance(pair[0], Var)
                and isinstance(pair[1], Buffer)
            ):
                raise TypeError(f"Function.buffer_map[{i}] must be a (Var, Buffer) pair")
        object.__setattr__(self, "buffer_map", bm)
        if not isinstance(self.attrs, Attrs):
            object.__setattr__(self, "attrs", as_attrs(self.attrs, "Function.attrs"))
        if self.attrs.get("global_symbol") == self.name:
            # a symbol that is the function's own name says nothing more (TIRx prints none):
            # one IR for both spellings, so text without it round-trips
            rest = {k: v for k, v in self.attrs.items() if k != "global_symbol"}
            object.__setattr__(self, "attrs", as_attrs(rest, "Function.attrs"))
        if self.ret_ty is not None and not isinstance(self.ret_ty, Type):
            object.__setattr__(self, "ret_ty", as_type(self.ret_ty, "Function.ret_ty"))
        if not isinstance(self.private, bool):
            raise TypeError(f"Function.private must be a bool, got {type(self.private).__name__}")

    @property
    def persistent(self) -> bool:
        """Marked a persistent kernel (``@T.function(persistent=True)``; metadata)."""
        return self.attrs.get(PERSISTENT_KERNEL) is True

    def bind_args(self, args: tuple, kwargs: dict) -> list:
        """Positional and keyword arguments as one value per parameter, in order.

        Python's rules, shared by every way of running a function (CUDA kernels, the
        interpreter, direct calls): a parameter gets exactly one value; an unknown name, a
        repeated one or a missing one is a ``TypeError`` naming it.
        """
        params = self.params
        names = [p.name for p in params]
        if len(args) > len(params) or (not kwargs and len(args) != len(params)):
            raise TypeError(
                f"{self.name}() takes {len(params)} argument(s) ({', '.join(names)}), got {len(args)}"
            )
        missing = object()
        vals: list = list(args) + [missing] * (len(params) - len(args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(
                    f"{self.name}() got an unexpected keyword argument {k!r} (parameters: {', '.join(names)})"
                )
            i = names.index(k)
            if vals[i] is not missing:
                raise TypeError(f"{self.name}() got multiple values for parameter {k!r}")
            vals[i] = v
        absent = [n for n, v in zip(names, vals) if v is missing]
        if absent:
            raise TypeError(f"{self.name}() missing a value for parameter(s) {', '.join(absent)}")
        return vals

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the function on arrays: CUDA when they live on a GPU, the interpreter when they
        live in host memory (or with ``TIRX_INTERPRET=1``); see ``tirx.runtime.direct``."""
        return _CALLER[0](self, args, kwargs)

    def buffer_of(self, param: Var) -> Buffer | None:
        for v, b in self.buffer_map:
            if v is param:
                return b
        return None

    def dyn_vars(self) -> list[Var]:
        """Dynamic shape vars, in order of first appearance in the buffer map."""
        from .visitor import collect_vars

        params = set(self.params)
        seen: dict[Var, None] = {}
        for _, b in self.buffer_map:
            for e in signature_parts(b):
                for v in collect_vars(e):
                    if v not in params and v not in seen:
                        seen[v] = None
        return list(seen)

    def with_body(self, body: Stmt | list | tuple | None = None, loc: Any = None, *, new_body: Any = None) -> Function:
        """This function with another body (TIRx's ``with_body(new_body, loc=...)`` too: a list
        is its statements, ``loc`` the span of the new function)."""
        if new_body is not None:
            body = new_body
        if body is None:
            raise TypeError("Function.with_body: the new body is missing")
        if loc is None:
            return evolve(self, body=body)  # type: ignore[misc]  # attrs class via frozen_node (ir/node.py)
        return evolve(self, body=body, span=loc)  # type: ignore[misc]


def signature_parts(b: Buffer, layout: bool = True) -> tuple:
    """What of a parameter tensor's type may name the signature's dynamic variables: its
    shape, strides, element offset and (``layout=True``) layout (a stride ``ld`` in
    ``T.Iter(m, ld, "m")``)."""
    return (
        *b.shape,
        *b.strides,
        *(() if b.elem_offset is None else (b.elem_offset,)),
        *(() if b.layout is None or not layout else (b.layout,)),
    )


def _no_caller(f: Function, args: tuple, kwargs: dict) -> Any:
    raise TypeError(f"{f.name}(): calling a Function needs the tirx runtime (import tirx)")


# ``Function.__call__`` runs through this (the IR does not import the runtime; ``import tirx``
# registers ``tirx.runtime.direct.call``, as it registers the printer for ``Node.script()``)
_CALLER: list = [_no_caller]


def register_caller(fn: Any) -> None:
    """Set what ``Function.__call__`` does: ``fn(function, args, kwargs)``."""
    _CALLER[0] = fn


def _no_autotuner(fn: Any, options: dict) -> Any:
    raise TypeError("@T.autotune needs the tirx runtime (import tirx)")


# ``@T.autotune`` (``tirx.script``) builds its tuner through this: tuning compiles, times and
# caches on disk, which neither the IR nor the front end may import (``import tirx`` registers
# ``tirx.runtime.autotune.Autotuner``, as it registers the direct caller above)
_AUTOTUNER: list = [_no_autotuner]


def register_autotuner(factory: Any) -> None:
    """Set what ``@T.autotune`` builds: ``factory(jit_function, options) -> tuner``."""
    _AUTOTUNER[0] = factory


class Functions(tuple):
    """``Module.functions``: tirx's tuple of the functions (iterating gives them, ``[i]``
    indexes), read as TIRx's map as well: ``items()`` / ``keys()`` / ``values()`` with a
    GlobalVar for each function, in name order, and ``[gv]`` / ``[name]`` / ``get(...)`` look
    one up (passes written for TIRx walk ``mod.functions.items()``)."""

    __slots__ = ()

    def _by_name(self) -> list:
        return sorted(self, key=lambda f: f.name)

    def items(self) -> list:
        from .expr import GlobalVar

        return [(GlobalVar(f.name), f) for f in self._by_name()]

    def keys(self) -> list:
        from .expr import GlobalVar

        return [GlobalVar(f.name) for f in self._by_name()]

    def values(self) -> list:
        return self._by_name()

    def get(self, key: Any, default: Any = None) -> Any:
        name = getattr(key, "name", key)
        return next((f for f in self if f.name == name), default)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, (int, slice)):
            return tuple.__getitem__(self, key)
        f = self.get(key)
        if f is None:
            raise KeyError(f"module has no function {getattr(key, 'name', key)!r}")
        return f


@_frozen
class Module(Node):
    """Named functions; calls between them go through GlobalVar."""

    functions: tuple = child(FUNCS)
    attrs: Attrs = child(ATTRS, default=EMPTY_ATTRS)
    name: str = "Module"
    _index: Any = field(default=None, init=False, repr=False)

    def __attrs_post_init__(self):
        fs = self.functions
        if isinstance(fs, dict):  # by name, or by GlobalVar (TIRx's ``IRModule({gv: f})``)
            fs = tuple(
                f if f.name == n else evolve(f, name=n)
                for n, f in ((getattr(k, "name", k), f) for k, f in fs.items())
            )
        if type(fs) is not Functions:
            fs = Functions(fs)
        index: dict[str, Function] = {}
        for i, f in enumerate(fs):
            if not isinstance(f, Function):
                raise TypeError(f"Module.functions[{i}] must be a Function, got {type(f).__name__}")
            if f.name in index:
                raise ValueError(f"Module: duplicate function name {f.name!r}")
            index[f.name] = f
        object.__setattr__(self, "functions", fs)
        object.__setattr__(self, "_index", index)
        if not isinstance(self.attrs, Attrs):
            object.__setattr__(self, "attrs", as_attrs(self.attrs, "Module.attrs"))

    def __getitem__(self, name: str) -> Function:
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"module has no function {name!r}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._index

    def __iter__(self):
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    def __getattr__(self, name: str):
        # module.f -> GlobalVar for use in scripts (M.f(...)); only for known names
        if name.startswith("_"):
            raise AttributeError(name)
        index = object.__getattribute__(self, "_index")
        if index is not None and name in index:
            from .expr import GlobalVar

            return _FuncRef(GlobalVar(name), index[name])
        raise AttributeError(name)

    def get_global_var(self, name: str) -> Any:
        """TIRx's ``IRModule.get_global_var``: the GlobalVar that calls function ``name``."""
        if name not in self._index:
            raise ValueError(
                f"module has no function {name!r} (functions: {', '.join(self._index) or 'none'})"
            )
        from .expr import GlobalVar

        return GlobalVar(name)

    def get_global_vars(self) -> list:
        """TIRx's ``IRModule.get_global_vars``: a GlobalVar for each function, in name order."""
        from .expr import GlobalVar

        return [GlobalVar(n) for n in sorted(self._index)]

    def functions_items(self) -> list:
        """TIRx's ``IRModule.functions_items``: ``(GlobalVar, Function)`` pairs in name order. (A
        module is immutable: ``with_function`` and ``Module(...)`` build new ones where TVM's
        ``mod[name] = f`` / ``update`` / ``del`` change it in place.)"""
        from .expr import GlobalVar

        return [(GlobalVar(n), self._index[n]) for n in sorted(self._index)]

    def with_attr(self, key: str, value: Any) -> Module:
        """TIRx's ``IRModule.with_attr``: this module with attribute ``key`` set to ``value``."""
        if not isinstance(key, str):
            raise TypeError(f"Module.with_attr: key must be a str, got {type(key).__name__}")
        return evolve(self, attrs={**dict(self.attrs.items()), key: value})  # type: ignore[misc]  # attrs class via frozen_node

    def get_attr(self, key: str, default: Any = None) -> Any:
        """TIRx's ``IRModule.get_attr``: attribute ``key``, or ``default``."""
        return self.attrs.get(key, default)

    def with_function(self, f: Function) -> Module:
        fs = [g if g.name != f.name else f for g in self.functions]
        if f.name not in self._index:
            fs.append(f)
        return Module(tuple(fs), self.attrs, self.name, span=self.span)


class _FuncRef:
    """``Module.f`` inside a script: calling it builds a Call of a GlobalVar."""

    __slots__ = ("func", "gvar")

    def __init__(self, gvar, func):
        self.gvar = gvar
        self.func = func

    def __call__(self, *args):
        from .expr import Call, convert

        ty = self.func.ret_ty
        if ty is None:
            from .types import void

            ty = void
        return Call(self.gvar, tuple(convert(a) for a in args), ty)


_ = (DEF, VALUE)


class _IRModuleType(type):
    """``isinstance(m, tvm.ir.IRModule)`` in code written for TIRx: true of a tirx Module."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Module)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, Module)


class IRModule(metaclass=_IRModuleType):
    """TIRx's ``tvm.IRModule({"main": f, ...})``: builds a Module of those functions, each
    named by its key (a dict), or in order (a sequence); ``isinstance(m, IRModule)`` is true of
    every Module (tirx's modules are ``tirx.Module``)."""

    def __new__(cls, functions: Any = None, attrs: Any = None) -> Module:  # type: ignore[misc]
        return _ir_module(functions, attrs)


def tirx_function(
    params: Any, body: Any, ret_type: Any = None, attrs: Any = None, span: Any = None
) -> Function:
    """TIRx's ``tirx.Function(params, body, ret_type=None, attrs=None)`` as tirx's Function.

    A tensor parameter, TIRx's ``Var("A", TensorType(...))`` (or a Buffer), is tirx's pointer
    parameter with its Buffer in the buffer map (``buffer.tensor_buffer``: the same Buffer the
    body's ``TensorLoad`` / ``TensorStore`` of that Var use); ``body`` may be a list. Without a
    ``global_symbol`` attribute the function is private and named ``main``, as TIRx prints it;
    with one it is the public function of that name."""
    from .buffer import is_tensor_var, tensor_buffer
    from .stmt import seq

    if isinstance(params, (str, bytes)) or not isinstance(params, (list, tuple)):
        raise TypeError(f"Function: params must be a list of Vars, got {type(params).__name__}")
    ps: list = []
    bmap: list = []
    for i, p in enumerate(params):
        if is_tensor_var(p):
            buf = tensor_buffer(p, f"Function.params[{i}]")
            ps.append(buf.data)
            bmap.append((buf.data, buf))
        elif isinstance(p, Var):
            ps.append(p)
        else:
            raise TypeError(f"Function.params[{i}] must be a Var, got {type(p).__name__}")
    if body is None or isinstance(body, (list, tuple)):
        body = seq(list(body or ()))
    if attrs is not None and not isinstance(attrs, (dict, Attrs)):
        raise TypeError(f"Function: attrs must be a dict, got {type(attrs).__name__}")
    f = Function("main", tuple(ps), body, tuple(bmap), ret_type, EMPTY_ATTRS, True, span=span)
    return f.with_attrs(attrs) if attrs else f


def _ir_module(functions: Any = None, attrs: Any = None) -> Module:
    if functions is None:
        functions = ()
    if not isinstance(functions, dict) and not isinstance(functions, (list, tuple)):
        raise TypeError(
            f"IRModule: functions must be a dict of name -> Function, got {type(functions).__name__}"
        )
    # a dict names each function by its key (a name or a GlobalVar): Module's own rule
    return Module(functions if isinstance(functions, dict) else tuple(functions), attrs if attrs is not None else {})  # type: ignore[arg-type]  # a dict too (post-init)
