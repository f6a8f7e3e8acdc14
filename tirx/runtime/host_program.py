"""A function whose host code has control flow around its device entries (``HostProgram``).

TIRx compiles a kernel function's host code to host C: ``for it in range(n): with
T.device_entry(...)`` launches the entry ``n`` times, an entry under ``if flag:`` only when
the flag is set, and host scalars (``m: T.int32 = n * 2``; ``m = m + 1``) change between
launches. tirx runs that host code in Python, generated from the IR (never from user text)
as the launch configuration is (``hostexpr``): the function's statements with each device
entry a launch of its kernel, given the host values the entry reads (``KernelInfo.outer``:
loop variables, bindings, elements of host-allocated tensors; tirx.codegen.host_split).
Each launch checks the arguments as a call of the kernel does. Straight-line host code keeps
the faster per-kernel path (``host_function.HostFunction``, ``kernel.Kernel``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..codegen.host_split import HOST_REGIONS
from ..ir import (
    AllocBuffer,
    Assert,
    Bind,
    BufferStore,
    DeclBuffer,
    DeviceEntry,
    Evaluate,
    For,
    IfThenElse,
    PointerType,
    PrimType,
    Return,
    SeqStmt,
    While,
)
from ..ir.stmt import Break, Continue, flat_stmts
from ..ir.types import tensormap_ptr
from .host_function import HostFunction, PreparedSequence
from .hostexpr import HOST_GLOBALS, HostExprError, element_offset, to_python
from .kernel_args import _as_view, _scalar

__all__ = ["HostProgram"]


def _store(buf: list, i: int, value: Any, name: str) -> None:
    if not 0 <= i < len(buf):
        raise ValueError(f"host code writes {name}[{i}], outside its {len(buf)} element(s)")
    buf[i] = value


def _check_aligned(ptr: int, n: int, name: str, op: str) -> None:
    if ptr % n:
        raise ValueError(f"T.{op}: {name} ({ptr:#x}) is not {n}-byte aligned")


class _DeviceIO:
    """Host code's element reads and writes of tensors in device memory: each waits for the
    launches before it (the call's stream), then copies the element (``cuMemcpyDtoH`` /
    ``cuMemcpyHtoD``). One per call."""

    def __init__(self, device: int | None, stream: Any):
        self.device = device
        self.stream = stream
        self.used = False

    def on_device(self, kind: int, dev: int) -> None:
        """``T.device_context(kind, dev)``: its launches run on CUDA device ``dev``, where the
        tensors are (tirx launches on the tensors' device)."""
        if kind != 2:
            raise ValueError(f"T.device_context({kind}, {dev}): device type {kind} is not CUDA (2)")
        if self.device is not None and dev != self.device:
            raise ValueError(
                f"T.device_context({kind}, {dev}): the tensors are on cuda:{self.device}, not cuda:{dev}"
            )

    def _sync(self) -> Any:
        from . import driver as _drv
        from .kernel_launch import _stream_handle

        dev = _drv.current_device_index() if self.device is None else self.device
        _drv.context(dev)
        d = _drv.driver()
        _drv.check(d.cuStreamSynchronize(d.CUstream(_stream_handle(self.stream, dev))), "cuStreamSynchronize")
        return d

    def load(self, ptr: int, off: int, dtype: str, name: str) -> Any:
        from . import driver as _drv

        if self.stream == "prepare":
            raise ValueError(
                f"prepare: host code reads {name} from device memory between launches; call the function instead"
            )
        nd = _NP[dtype]
        d = self._sync()
        out = np.zeros(1, nd)
        _drv.check(
            d.cuMemcpyDtoH(out, ptr + off * nd.itemsize, nd.itemsize), f"reading {name}[{off}] on the host"
        )
        v = out[0].item()
        return _bool(v) if dtype == "bool" else v

    def store(self, ptr: int, off: int, value: Any, dtype: str, name: str) -> None:
        from . import driver as _drv

        if self.stream == "prepare":
            raise ValueError(
                f"prepare: host code writes {name} in device memory between launches; call the function instead"
            )
        nd = _NP[dtype]
        d = self._sync()
        buf = np.array([value], nd)
        _drv.check(
            d.cuMemcpyHtoD(ptr + off * nd.itemsize, buf, nd.itemsize), f"writing {name}[{off}] on the host"
        )


def _bool(v: Any) -> bool:
    return bool(v)


#: the dtypes host code reads and writes in device memory, as numpy holds them
_NP = {
    n: np.dtype(n)
    for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
              "float32", "float64")
}  # fmt: skip


def _dload(io: _DeviceIO, ptr: int, off: int, dtype: str, name: str) -> Any:
    return io.load(ptr, off, dtype, name)


def _dstore(io: _DeviceIO, ptr: int, off: int, value: Any, dtype: str, name: str) -> None:
    io.store(ptr, off, value, dtype, name)


def _f16(v: float) -> float:
    return float(np.float16(v))


def _f32(v: float) -> float:
    return float(np.float32(v))


_GLOBALS = {
    **HOST_GLOBALS, "_store": _store, "_aligned": _check_aligned, "_f16": _f16, "_f32": _f32,
    "_dload": _dload, "_dstore": _dstore,
}  # fmt: skip


class _Gen:
    """Python source of a function's host program."""

    def __init__(self, func: Any, names: dict, entries: dict) -> None:
        self.func = func
        self.names = names
        self.entries = entries  # id(DeviceEntry) -> (launch index, outer)
        self.lines: list[str] = []
        self.n = 0

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def py(self, e: Any, what: str) -> str:
        try:
            return to_python(e, self.names)
        except HostExprError as err:
            raise ValueError(f"{self.func.name}(): {what} cannot be computed on the host: {err}") from None

    def convert(self, code: str, t: Any) -> str:
        if t == tensormap_ptr:  # a TMA descriptor's 128 bytes (passed to a kernel by value)
            return code
        if isinstance(t, PointerType):
            return f"int({code})"
        if not isinstance(t, PrimType) or t.lanes != 1:
            raise ValueError(f"{self.func.name}(): host code cannot hold a value of type {t}")
        if t.is_bool:
            return f"bool({code})"
        if t.is_int:
            return f"_wrap(int({code}), {t.bits}, {t.kind == 'int'})"
        if t.is_float and t.bits in (16, 32, 64) and t.kind == "float":
            return {16: f"_f16({code})", 32: f"_f32({code})", 64: f"float({code})"}[t.bits]
        raise ValueError(f"{self.func.name}(): host code cannot hold a value of type {t}")

    def emit(self, s: Any, ind: int) -> None:
        pad = "    " * ind
        start = len(self.lines)
        for st in flat_stmts(s):
            if isinstance(st, DeviceEntry):
                k, outer = self.entries[id(st)]
                vals = []
                for _v, src in outer:
                    if isinstance(src, tuple):
                        buf, i = src
                        vals.append(f"_hload({self.names[('buffer', buf.data)]}, {i}, {buf.name!r})")
                    else:
                        vals.append(self.names[src])
                self.lines.append(f"{pad}_launch({k}, ({''.join(v + ', ' for v in vals)}))")
            elif isinstance(st, Bind):
                code = self.convert(self.py(st.value, f"binding {st.var.name}"), st.var.ty)
                name = self.names[st.var] = self.fresh("_v")
                self.lines.append(f"{pad}{name} = {code}")
            elif isinstance(st, Assert):
                msg = f"{self.func.name}(): {st.kind}: {' '.join(st.message) or 'assertion failed'}"
                self.lines.append(f"{pad}if not ({self.py(st.cond, 'an assert')}):")
                self.lines.append(f"{pad}    raise ValueError({msg!r})")
            elif isinstance(st, AllocBuffer):
                b = st.buffer
                n = 1
                for x in b.shape:
                    n *= x.value
                zero = self.convert("0", b.dtype)
                name = self.names[("buffer", b.data)] = self.fresh("_b")
                self.lines.append(f"{pad}{name} = [{zero}] * {n}")
            elif isinstance(st, BufferStore):
                b = st.buffer
                val = self.convert(self.py(st.value, f"the value stored to {b.name}"), b.dtype)
                if ("buffer", b.data) in self.names:
                    idx = self.py(element_offset(b, st.indices), f"an index of {b.name}")
                    self.lines.append(
                        f"{pad}_store({self.names[('buffer', b.data)]}, {idx}, {val}, {b.name!r})"
                    )
                else:  # an element of a tensor in device memory (host_split allowed a parameter's)
                    if b.dtype.name not in _NP or b.dtype.lanes != 1:
                        raise ValueError(
                            f"{self.func.name}(): host code cannot write {b.dtype} elements of {b.name}"
                        )
                    off = self.py(element_offset(b, st.indices), f"an index of {b.name}")
                    ptr = self.names[("device", b.data)]
                    self.lines.append(f"{pad}_dstore(_io, {ptr}, {off}, {val}, {b.dtype.name!r}, {b.name!r})")
            elif isinstance(st, Evaluate):  # a call host_split.is_host_call allows
                c: Any = st.value
                if c.op.traits.alignment_fact:
                    what = getattr(c.args[0], "name", "the pointer")
                    ptr = self.py(c.args[0], f"T.{c.op.name}")
                    self.lines.append(f"{pad}_aligned({ptr}, {c.args[1].value}, {what!r}, {c.op.name!r})")
                else:  # its host form (a TMA descriptor's encoding)
                    self.lines.append(f"{pad}{self.py(c, f'T.{c.op.name}')}")
            elif isinstance(st, For):
                v = self.names[st.var] = self.fresh("_v")
                lo = self.py(st.start, "a loop start")
                ext = self.py(st.extent, "a loop extent")
                step = "1" if st.nonunit_step is None else self.py(st.step, "a loop step")
                self.lines.append(f"{pad}for {v} in range({lo}, {lo} + {ext}, {step}):")
                self.emit(st.body, ind + 1)
            elif isinstance(st, While):
                self.lines.append(f"{pad}while {self.py(st.cond, 'a loop condition')}:")
                self.emit(st.body, ind + 1)
            elif isinstance(st, IfThenElse):
                self.lines.append(f"{pad}if {self.py(st.cond, 'a condition')}:")
                self.emit(st.then_case, ind + 1)
                if st.else_case is not None:
                    self.lines.append(f"{pad}else:")
                    self.emit(st.else_case, ind + 1)
            elif isinstance(st, Break):
                self.lines.append(f"{pad}break")
            elif isinstance(st, Continue):
                self.lines.append(f"{pad}continue")
            elif isinstance(st, Return):
                # TIRx's early exit ``return 0`` of a function with no return type returns nothing
                val = (
                    "None"
                    if st.value is None or self.func.ret_ty is None
                    else self.py(st.value, "the returned value")
                )
                self.lines.append(f"{pad}return {val}")
            elif isinstance(st, (DeclBuffer, SeqStmt)):
                pass  # a view: the kernels address it through their parameters
            elif type(st).__name__ == "RegionStmt" and st.kind in HOST_REGIONS:
                if st.kind == "device_context":
                    kind, dev = (self.py(a, "T.device_context") for a in st.args)
                    self.lines.append(f"{pad}_io.on_device({kind}, {dev})")
                self.emit(st.body, ind)
            else:  # host_split refused it when the kernels were generated
                raise ValueError(f"{self.func.name}(): {type(st).__name__} cannot run in host code")
        if len(self.lines) == start:
            self.lines.append(f"{pad}pass")


class HostProgram(HostFunction):
    """A function whose host code has loops, conditions or host scalars around its device
    entries: a call runs that host code and launches each kernel where it reaches its entry
    (``kernels`` maps each kernel's C name to its :class:`Kernel`), and returns the host's
    ``return`` value."""

    def __init__(self, name: str, kernels: list, module: Any):
        super().__init__(name, kernels, module)
        self._by_index = {k.info.index: k for k in kernels}
        k0 = kernels[0]
        f = self.func
        bufs = dict(f.buffer_map)
        names: dict = {}
        # the names of the kernels' launch plans (kernel.py): tensors and pointers _p, scalars
        # _a, dynamic dimensions _d
        for i, p in enumerate(f.params):
            b = bufs.get(p)
            if b is not None or (isinstance(p.ty, PointerType) and p.ty.scope != "tensormap"):
                names[p] = f"_p{i}"
                names[("device", p)] = f"_p{i}"
                if b is not None:
                    names[b.data] = f"_p{i}"
                    names[("device", b.data)] = f"_p{i}"
            else:
                names[p] = f"_a{i}"
        for j, v in enumerate(k0.info.dyn_vars):
            names[v] = f"_d{j}"
        self._base = dict(names)
        entries = {}
        from ..codegen.host_split import host_program

        for k, hl in enumerate(host_program(f)):  # the entries in the order codegen numbered them
            entries[id(hl.source)] = (k, hl.outer)
        g = _Gen(f, names, entries)
        g.emit(f.body, 1)
        head = [f"    {n} = _env[{n!r}]" for n in dict.fromkeys(self._base.values())] + [
            "    _io = _env['_io']"
        ]
        src = "\n".join(["def _host(_launch, _env):", *head, *g.lines, "    return None"])
        ns: dict[str, Any] = dict(_GLOBALS)
        exec(compile(src, f"<tirx host program of {f.name}>", "exec"), ns)  # IR-generated code
        self._run: Callable[..., Any] = ns["_host"]
        self.host_source = src  # the generated host code (for reading; tirx never loads it back)

    def __repr__(self) -> str:
        ps = ", ".join(p.name for p in self.func.params)
        return (
            f"<tirx.HostProgram {self.name}({ps}): host code launching {', '.join(self.kernels)} "
            f"for {self.arch}>"
        )

    def _env(self, args: tuple, stream: Any, prepare: bool = False) -> dict:
        f = self.func
        k0 = self._seq[0]
        kname = f"{f.name}()"
        if len(args) != len(f.params):
            raise TypeError(
                f"{kname} takes {len(f.params)} argument(s) ({', '.join(k0.pnames)}), got {len(args)}"
            )
        bufs = dict(f.buffer_map)
        env: dict = {}
        shapes: dict = {}
        device = None
        for i, (p, a) in enumerate(zip(f.params, args)):
            pname = k0.pnames[i]
            if p in bufs or (isinstance(p.ty, PointerType) and p.ty.scope != "tensormap"):
                if isinstance(a, int) and not isinstance(a, bool):
                    env[f"_p{i}"] = a
                else:
                    v = _as_view(a, pname, kname, stream)
                    env[f"_p{i}"] = v.ptr
                    shapes[i] = (tuple(v.shape), v.strides)
                    if device is None:
                        device = v.device
            elif isinstance(p.ty, PrimType):
                env[f"_a{i}"] = _scalar(a, p.ty, pname, kname)
            else:
                env[f"_a{i}"] = a
        for j, v in enumerate(k0.info.dyn_vars):
            if v in k0.dyn_affine:  # a dimension a * n + c
                i, dim, a, c = k0.dyn_affine[v]
                shape = shapes.get(i, ((), None))[0]
                env[f"_d{j}"] = (int(shape[dim]) - c) // a if dim < len(shape) else 0
                continue
            i, kind, dim = k0.dyn_src[v]
            shape, strides = shapes.get(i, ((), None))
            seq = shape if kind == "shape" else strides
            env[f"_d{j}"] = int(seq[dim]) if seq is not None and dim < len(seq) else 0
        env["_io"] = _DeviceIO(device, "prepare" if prepare else stream)
        return env

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        if kwargs:
            args = tuple(self.func.bind_args(args, kwargs))
        by = self._by_index

        def launch(k: int, outer: tuple) -> None:
            by[k]._check_and_launch(args, stream, outer)

        return self._run(launch, self._env(args, stream))

    def host_values(self, *args: Any, **kwargs: Any) -> list[tuple[str, dict]]:
        """The launches a call with these arguments makes, without making them: per launch, the
        kernel's C name and the host values passed to it by name (loop variables, host bindings,
        a TMA descriptor the host encoded as its 128 bytes). For reading what the host code
        computes, and for launching another build of the kernels with the same values."""
        if kwargs:
            args = tuple(self.func.bind_args(args, kwargs))
        by = self._by_index
        out: list = []

        def launch(k: int, outer: tuple) -> None:
            kern = by[k]
            out.append((kern.name, {v.name: val for (v, _s), val in zip(kern.info.outer, outer)}))

        self._run(launch, self._env(args, None))
        return out

    def prepare(self, *args: Any, **kwargs: Any) -> PreparedSequence:
        """The host code run once, each launch it makes prepared (:meth:`Kernel.prepare`);
        calling the result launches them in that order (the host code reads only the
        arguments, so a later call makes the same launches)."""
        from .prepared import PreparedLaunch

        if kwargs:
            args = tuple(self.func.bind_args(args, kwargs))
        by = self._by_index
        out: list = []

        def launch(k: int, outer: tuple) -> None:
            ret, plan = by[k]._check(args, None, outer)
            out.append(PreparedLaunch(by[k], args, ret, plan))

        ret = self._run(launch, self._env(args, None, prepare=True))
        return PreparedSequence(self, out, ret)
