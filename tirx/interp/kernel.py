"""``tirx.interp.compile``: the kernel object and its argument checks."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tirx.ops.semantics import dtypes as D
from tirx.ops.semantics.errors import InterpError
from tirx.ops.semantics.memory import GLOBAL, Mem, PtrVal

from ..ir import collect_vars, deep
from ..ir import expr as E
from ..ir.affine import affine_in, affine_text
from ..ir.function import Function, Module
from ..ir.types import PointerType, PrimType
from ..runtime.named import ByOwnName
from .engine import Ctx, Program

__all__ = ["Kernel", "ModuleKernel", "build", "check_options", "compile"]

_OPTIONS = {"check_races", "check_bounds", "max_alloc_bytes", "max_lanes", "max_loop_iters", "max_steps"}


def compile(f: Function | Module, **options: Any):
    """Compile a Function (or Module) for the CPU interpreter.

    Options: ``check_races`` (default True) reports shared-memory races and reads of
    unwritten shared memory; ``check_bounds`` (default True) reports out-of-bounds accesses;
    ``max_lanes`` (default 2**15) is how many threads run at once (the grid runs in chunks of
    whole blocks); ``max_loop_iters`` (default 10**7) bounds each loop and ``max_steps``
    (default 2**31 thread-steps) the work of one call (``LimitError`` instead of a hang);
    ``max_alloc_bytes`` (default 2**32) bounds one allocation inside the kernel (all its
    per-block or per-thread copies together; ``LimitError`` naming the buffer and line).
    Returns a ``Kernel`` (or a ``ModuleKernel`` for a Module) called like the CUDA one:
    ``kernel(*arrays_and_scalars)``.
    """
    check_options(options)
    from tirx.passes.lowering import prepare

    return build(prepare(f)[0], options)  # tirx/pipeline.py's INTERP_STAGES, as tirx.compile runs them


def check_options(options: dict) -> None:
    """``TypeError`` for an option the interpreter does not know."""
    for k in options:
        if k not in _OPTIONS:
            raise TypeError(
                f"tirx.interp.compile: unknown option {k!r} (known: {', '.join(sorted(_OPTIONS))})"
            )


def build(f: Function | Module, options: dict) -> Any:
    """The pipeline's ``interp`` stage: the kernel for ``f`` as the IR stages left it (no
    tensor with a layout, TIRx's ``launch_thread`` nests as device entries)."""
    if isinstance(f, Module):
        return ModuleKernel(f, options)
    if not isinstance(f, Function):
        raise TypeError(f"tirx.interp.compile: f must be a Function or Module, got {type(f).__name__}")
    prog = Program(f, **options)
    return Kernel(prog, f.name)


class Kernel(ByOwnName):
    """A function compiled for the interpreter: ``kernel(*args)`` runs it."""

    target = "interp"

    def __init__(self, prog: Program, name: str):
        self.prog = prog
        self.name = name
        self.func: Function = prog.funcs[name]
        self._fc = prog.get(name)
        self._shape_check = None
        #: the target the caller asked for when ``TIRX_INTERPRET=1`` sent it here instead
        self.requested_target: str | None = None

    @property
    def source(self) -> str:
        try:
            from ..printer import dumps

            return dumps(self.func)
        except Exception:  # the printer may be unavailable
            return repr(self.func)

    def __repr__(self) -> str:
        ps = ", ".join(p.name for p in self.func.params)
        via = f", requested {self.requested_target!r} (TIRX_INTERPRET=1)" if self.requested_target else ""
        return f"<tirx.interp.Kernel {self.name}({ps}) for interp{via}>"

    def bind(self, args: tuple, kwargs: dict) -> list:
        """Positional and keyword arguments as one value per parameter (``Function.bind_args``)."""
        return self.func.bind_args(args, kwargs)

    def prepare(self, *args: Any, **kwargs: Any) -> _Prepared:
        """The CUDA kernel's ``prepare`` (tirx.runtime.prepared) on the interpreter: the
        arguments are bound now; each ``launch()`` runs (and so checks) them again."""
        return _Prepared(self, tuple(self.bind(args, kwargs)))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the function on ``args`` (positional, or by parameter name). ``stream=`` is
        accepted for the CUDA kernel's calling convention and ignored (the interpreter is
        synchronous) unless a parameter is named ``stream``."""
        if self.prog.needs_deep and not deep.active():  # IR too deep for this thread's stack
            return deep.run(self.__call__, *args, **kwargs)
        f = self.func
        params = f.params
        if "stream" in kwargs and not any(p.name == "stream" for p in params):
            kwargs.pop("stream")
        args = tuple(self.bind(args, kwargs))
        env: dict = {}
        dyn: dict = {}
        copy_back: list = []
        deferred: list = []
        post: list = []
        for p, a in zip(params, args):
            buf = f.buffer_of(p)
            if buf is not None:
                self._bind_buffer(p, buf, a, env, dyn, copy_back, deferred, post)
            elif isinstance(p.ty, PointerType):
                arr = _as_array(a, p.name, f.name, post)
                if arr is None:
                    raise TypeError(f"{f.name}(): parameter {p.name} takes an array, got {type(a).__name__}")
                raw = np.ascontiguousarray(arr)
                if raw is not arr and raw.base is not arr:
                    copy_back.append((arr, raw, None))
                env[p] = PtrVal(Mem(p.name, raw.reshape(-1).view(np.uint8).reshape(1, -1), GLOBAL), 0)
            else:
                env[p] = _scalar(a, p, f.name)
        # a dynamic var only ever in dimensions ``a * n + c`` (``n * 2``): solved from the first
        for pname, what, e, got in deferred:
            for v in [v for v in collect_vars(e) if v not in env]:  # not bound by an argument yet
                ac = affine_in(e, v) if what.startswith("dimension") else None
                if ac is None:
                    continue
                a, c = ac
                if (got - c) % a:
                    raise ValueError(
                        f"{f.name}(): parameter {pname} {what} is {got}, which is not {affine_text(a, v.name, c)} "
                        f"for any integer {v.name}"
                    )
                _bind_dim(v, (got - c) // a, what, pname, f.name, dyn, env, [])
        # shapes that are expressions of dynamic vars (checked once every var is bound)
        host = Ctx(self.prog, 1, None, env)
        for pname, i, e, got in deferred:
            try:
                want = int(self._fc.expr(e)(host)[0])
            except InterpError:
                raise ValueError(f"{f.name}(): cannot evaluate the shape of parameter {pname}") from None
            if want != got:
                raise ValueError(f"{f.name}(): parameter {pname} dimension {i} is {got}, expected {want}")
        assert self._fc.body is not None  # prog.get compiled it
        with np.errstate(all="ignore"):
            self._fc.body(host)
        for user, work, fix in copy_back:
            res = work if fix is None else fix(work)
            _write_back(user, res)
        for fin in post:  # device tensors back from their host copies; read-only inputs checked
            fin()
        rv = host.ret_val
        if rv is None or f.ret_ty is None or not isinstance(f.ret_ty, PrimType):
            return None
        v = np.asarray(rv).reshape(-1) if f.ret_ty.lanes == 1 else np.asarray(rv)[0]
        return v[0].item() if f.ret_ty.lanes == 1 else v.copy()

    def _bind_buffer(self, p, buf, a, env, dyn, copy_back, deferred, post) -> None:
        fname = self.func.name
        arr = _as_array(a, p.name, fname, post)
        if arr is None:
            raise TypeError(
                f"{fname}(): parameter {p.name} takes an array (numpy, torch, DLPack, the buffer protocol "
                f"or __array_interface__), got {type(a).__name__}"
            )
        t = buf.dtype
        if t.lanes != 1:
            raise InterpError(f"{fname}(): vector-typed tensor parameter {p.name} ({t}) is not supported")
        user = arr
        arr = _dtype_view(arr, t, p.name, fname)
        if arr.ndim != len(buf.shape):
            raise ValueError(
                f"{fname}(): parameter {p.name} must have rank {len(buf.shape)}, got an array of rank {arr.ndim}"
            )
        for i, (s, got) in enumerate(zip(buf.shape, arr.shape)):
            _bind_dim(s, int(got), f"dimension {i}", p.name, fname, dyn, env, deferred)
        itemsize = arr.dtype.itemsize
        if buf.elem_offset is not None and isinstance(buf.elem_offset, E.Var):
            ty = buf.elem_offset.ty
            assert isinstance(ty, PrimType)  # Buffer checks that elem_offset is an integer
            env.setdefault(buf.elem_offset, np.zeros(1, dtype=D.value_np(ty)))
        if buf.strides:
            st = []
            for i, (s, got) in enumerate(zip(buf.strides, arr.strides)):
                if got % itemsize or got < 0:
                    raise ValueError(f"{fname}(): parameter {p.name} has a stride the kernel cannot address")
                _bind_dim(s, got // itemsize, f"stride {i}", p.name, fname, dyn, env, deferred)
                st.append(got // itemsize)
            span = 1 + sum((n - 1) * s for n, s in zip(arr.shape, st)) if arr.size else 0
            flat = np.lib.stride_tricks.as_strided(arr, shape=(span,), strides=(itemsize,))
        else:
            if arr.flags.c_contiguous:
                flat = arr.reshape(-1)
            else:
                flat = np.ascontiguousarray(arr).reshape(-1)
                copy_back.append((user, flat, _reshaper(arr.shape, t, user)))
        if (
            user is not arr
            and not any(u is user for u, _, _ in copy_back)
            and not np.shares_memory(user, arr)
        ):
            copy_back.append((user, flat, _reshaper(arr.shape, t, user)))
        env[p] = PtrVal(Mem(buf.name, flat.reshape(1, -1), GLOBAL), 0)


def _reshaper(shape, t, user):
    def fix(work):
        return work.reshape(shape)

    return fix


def _write_back(user, res) -> None:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(user, torch.Tensor):
        src = torch.from_numpy(np.ascontiguousarray(res))
        if src.dtype != user.dtype:
            src = src.view(user.dtype) if src.element_size() == user.element_size() else src.to(user.dtype)
        user.copy_(src.reshape(user.shape))
        return
    np.copyto(
        user,
        np.asarray(res).reshape(user.shape).view(user.dtype)
        if res.dtype != user.dtype
        else np.asarray(res).reshape(user.shape),
    )


def _bind_dim(s, got: int, what: str, pname: str, fname: str, dyn: dict, env: dict, deferred: list) -> None:
    if isinstance(s, E.IntImm):
        if s.value != got:
            raise ValueError(f"{fname}(): parameter {pname} {what} is {got}, expected {s.value}")
    elif isinstance(s, E.Var):
        if s in dyn:
            prev, prev_p = dyn[s]
            if prev != got:
                raise ValueError(
                    f"{fname}(): parameter {pname} {what} is {got}, but {s.name} = {prev} from parameter {prev_p}"
                )
        else:
            ty = s.ty
            assert isinstance(ty, PrimType)  # Buffer checks that shapes are integers
            dt = D.value_np(ty)
            lo, hi = D.int_bounds(ty)
            if not lo <= got <= hi:
                raise ValueError(f"{fname}(): parameter {pname} {what} ({got}) does not fit {s.name}: {s.ty}")
            dyn[s] = (got, pname)
            env[s] = np.array([got], dtype=dt)
    else:
        deferred.append((pname, what, s, got))


def _as_array(a: Any, pname: str, fname: str, post: list) -> np.ndarray | None:
    """A numpy array over ``a``'s memory (so the kernel's writes land in the caller's object),
    or None when ``a`` is not an array. Torch tensors keep their bfloat16-ness; a torch tensor
    on a GPU is copied to the host and back (``post``); other objects go through DLPack,
    ``__array_interface__``/``__array_struct__``, the buffer protocol or ``__array__``. A
    read-only array is run on a copy, and a write to it is a ValueError naming the parameter."""
    if isinstance(a, np.ndarray):
        arr = a
    elif (torch := sys.modules.get("torch")) is not None and isinstance(a, torch.Tensor):
        return _torch_array(a, torch, post)
    elif isinstance(a, (str, bytes, int, float, complex, bool, list, tuple, dict, set)) or a is None:
        return None
    elif hasattr(a, "__dlpack__") and hasattr(a, "__dlpack_device__"):
        dev = a.__dlpack_device__()
        if int(dev[0]) not in (1, 3):  # kDLCPU, kDLCUDAHost
            raise TypeError(
                f"{fname}(): parameter {pname} is a device array ({type(a).__name__}, DLPack device {tuple(dev)}); "
                "the interpreter runs on the host: pass a host array (torch CUDA tensors are copied)"
            )
        try:
            arr = np.from_dlpack(a)
        except (BufferError, TypeError, RuntimeError) as e:
            try:
                arr = np.asarray(a)
            except Exception:
                raise TypeError(f"{fname}(): parameter {pname}: numpy cannot read this array ({e})") from None
    elif any(hasattr(a, n) for n in ("__array_interface__", "__array_struct__", "__array__")):
        try:
            arr = np.asarray(a)
        except Exception as e:
            raise TypeError(f"{fname}(): parameter {pname}: numpy cannot read this array ({e})") from None
    else:
        try:
            memoryview(a).release()
        except TypeError:
            return None
        arr = np.asarray(a)
    if not arr.flags.writeable:
        return _read_only(arr, pname, fname, post)
    return arr


def _torch_array(a: Any, torch: Any, post: list) -> np.ndarray:
    t = a.detach()
    if t.device.type != "cpu":
        t = t.to("cpu")  # a fresh host copy, written back to the device tensor after the run
        host = t

        def back() -> None:
            with torch.no_grad():
                a.copy_(host)

        post.append(back)
    if t.dtype == torch.bfloat16:
        return _TorchView(t.view(torch.int16).numpy().view(np.uint16), a)
    return _TorchView(t.numpy(), a)


def _read_only(arr: np.ndarray, pname: str, fname: str, post: list) -> np.ndarray:
    work = arr.copy()

    def check() -> None:
        if work.tobytes() != arr.tobytes():
            raise ValueError(
                f"{fname}(): the kernel wrote to parameter {pname}, whose array is read-only; pass a writable array"
            )

    post.append(check)
    return work


class _TorchView(np.ndarray):
    """A numpy view of a CPU torch tensor that remembers it is bfloat16 when it was."""

    def __new__(cls, arr, tensor):
        obj = arr.view(cls)
        obj._tirx_bf16 = "bfloat16" in str(tensor.dtype)
        return obj

    def __array_finalize__(self, obj):
        self._tirx_bf16 = getattr(obj, "_tirx_bf16", False)


def _dtype_view(arr: np.ndarray, t: PrimType, pname: str, fname: str) -> np.ndarray:
    want = D.storage_np(t)
    got = arr.dtype
    if t.base == "bfloat16":
        if got.name == "bfloat16" or getattr(arr, "_tirx_bf16", False):
            return np.asarray(arr).view(np.uint16)
        if got == np.uint16:
            return np.asarray(arr)
        raise TypeError(
            f"{fname}(): parameter {pname} must be bfloat16 (a torch bfloat16 tensor, an ml_dtypes bfloat16 array "
            f"or uint16 bit patterns), got {got}"
        )
    if t.is_minifloat and got.itemsize == 1 and got.name == t.base:  # an ml_dtypes array
        return np.asarray(arr).view(np.uint8)
    if getattr(arr, "_tirx_bf16", False) or got != want:
        raise TypeError(f"{fname}(): parameter {pname} must have dtype {t}, got {got}")
    return np.asarray(arr)


def _scalar(a: Any, p, fname: str) -> np.ndarray:
    t = p.ty
    if not isinstance(t, PrimType) or t.lanes != 1:
        raise TypeError(f"{fname}(): parameter {p.name} of type {t} is not supported by the interpreter")
    if isinstance(a, np.ndarray):
        if a.size != 1:
            raise TypeError(
                f"{fname}(): parameter {p.name} takes a {t} scalar, got an array of shape {a.shape}"
            )
        a = a.reshape(-1)[0]
    if isinstance(a, np.generic):
        a = a.item()
    try:
        import torch  # type: ignore

        if isinstance(a, torch.Tensor) and a.numel() == 1:
            a = a.item()
    except ImportError:
        pass
    if t.is_bool:
        if not isinstance(a, (bool, int)) or a not in (0, 1):
            raise TypeError(f"{fname}(): parameter {p.name} takes a bool, got {a!r}")
        return np.array([bool(a)])
    if t.is_int:
        if isinstance(a, float) or not isinstance(a, int):
            raise TypeError(
                f"{fname}(): parameter {p.name} takes an integer ({t}), got {type(a).__name__} {a!r}"
            )
        lo, hi = D.int_bounds(t)
        if not lo <= a <= hi:
            raise ValueError(f"{fname}(): parameter {p.name} = {a} does not fit in {t}")
        return np.array([a], dtype=D.value_np(t))
    if not isinstance(a, (int, float)) or isinstance(a, bool):
        raise TypeError(f"{fname}(): parameter {p.name} takes a number ({t}), got {type(a).__name__}")
    return D.make_const(float(a), t)


class _Prepared:
    """``Kernel.prepare(*args)`` of the interpreter: ``launch()`` runs the kernel on them."""

    def __init__(self, kernel: Kernel, args: tuple):
        self.kernel = kernel
        self.args = args

    def __repr__(self) -> str:
        return f"<tirx.interp prepared launch of {self.kernel.name}>"

    def __call__(self, stream: Any = None) -> Any:
        """Run the kernel (``stream`` is accepted and ignored: the interpreter is synchronous)."""
        return self.kernel(*self.args)


class ModuleKernel:
    """A compiled Module: ``mk.fname(*args)`` or ``mk["fname"](*args)``; calling ``mk(*args)``
    runs its only public function."""

    target = "interp"

    def __init__(self, mod: Module, options: dict):
        self.module = mod
        self.requested_target: str | None = None
        self.prog = Program(mod, **options)
        self.kernels: dict[str, Any] = {}  # as CompiledModule.kernels: each function's kernel
        for fn in mod.functions:
            self.kernels[fn.name] = Kernel(self.prog, fn.name)

    def __repr__(self) -> str:
        via = f", requested {self.requested_target!r} (TIRX_INTERPRET=1)" if self.requested_target else ""
        return f"<tirx.interp.ModuleKernel {', '.join(self.kernels)} for interp{via}>"

    def __getitem__(self, name: str) -> Kernel:
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(f"module has no function {name!r}") from None

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("_") or name == "kernels":
            raise AttributeError(name)
        k = self.__dict__.get("kernels", {}).get(name)
        if k is None:
            raise AttributeError(f"module has no function {name!r}")
        return k

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        public = [f for f in self.module.functions if not f.private]
        if len(public) != 1:
            names = ", ".join(f.name for f in public)
            raise TypeError(f"the module has {len(public)} public functions ({names}); call one by name")
        return self.kernels[public[0].name](*args, **kwargs)

    @property
    def source(self) -> str:
        try:
            from ..printer import dumps

            return dumps(self.module)
        except Exception:
            return repr(self.module)
