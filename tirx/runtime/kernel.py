"""Compiled kernels: argument checks, launch configuration and launch.

A :class:`Kernel` is called with the function's arguments in order: tensors (torch,
CuPy, anything with ``__cuda_array_interface__`` or ``__dlpack__``) for tensor
parameters, Python numbers for scalar parameters. Before every launch it checks each
argument (dtype, rank, shape, device, contiguity, alignment, count, aliasing of
``__restrict__`` pointers) and raises ``TypeError``/``ValueError`` naming the parameter;
dynamic dims are read from the shapes and must agree across arguments; the grid comes
from the launch configuration evaluated on those values.

Two paths compute the same thing: a fast path, Python source generated per kernel
signature for all-torch arguments (a handful of attribute reads, one ``struct.pack_into``
and ``cuLaunchKernel``), and a general path that handles every argument kind and
produces the error messages. Any check that fails on the fast path hands the call to the
general path, which raises the precise error.

``Kernel`` holds the signature plan (``_plan``) and the calls; the rest is split by what it
holds (issue #30): ``kernel_args.py`` (reading and checking the arguments: the general path),
``kernel_fast.py`` (the generated fast path), ``kernel_launch.py`` (functions, buffers,
streams, the launch), ``kernel_image.py`` (an NVRTC build, loaded per device) and
``host_function.py`` (a function launching several kernels). Their names stay importable
from here.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
from typing import Any

from ..ir import PointerType, PrimType, Var, collect_vars
from ..ir.affine import affine_in
from ..ir.function import signature_parts
from .host_function import HostFunction, PreparedSequence
from .hostexpr import HOST_GLOBALS, HostExprError, to_python
from .kernel_args import ArgsMixin
from .kernel_args import _contig as _contig  # re-exported: tests and tools import them from here
from .kernel_args import _is_contig as _is_contig
from .kernel_args import _tensormap_bytes as _tensormap_bytes
from .kernel_fast import FastPathMixin
from .kernel_fast import _int_literal as _int_literal
from .kernel_image import CompiledImage
from .kernel_launch import LaunchMixin, _ctypes_launch_ex, _stream_handle
from .kernel_launch import _ctypes_launch as _ctypes_launch
from .named import ByOwnName
from .prepared import PreparedLaunch

__all__ = ["CompiledImage", "CompiledModule", "HostFunction", "Kernel", "PreparedSequence"]

_PACK = {
    "bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
    "int64": "q", "uint64": "Q", "float16": "e", "float32": "f", "float64": "d", "bfloat16": "H",
}  # fmt: skip


# Cluster launches on the fast path: libcuda's cuLaunchKernelEx through ctypes, the cluster
# attribute in the same per-thread buffer as the config and the parameters (under either
# launcher). TIRX_FAST_CLUSTER=0 sends cluster kernels to the general path instead (~150 us of
# host time a call on the H200 host, docs/benchmarks.md). Read here, with _ctypes_launch_ex, each
# time a kernel switches to its fast path (kernel_fast.py is handed both; tests replace them here).
_FAST_CLUSTER = os.environ.get("TIRX_FAST_CLUSTER", "1") != "0"


class RuntimeModuleView:
    """What code ported from TIRx reads of a compiled function's runtime module: its one
    import, the device module, whose ``inspect_source("cuda")`` is the CUDA source."""

    def __init__(self, source: str):
        self.imports = [_DeviceModuleView(source)]


class _DeviceModuleView:
    def __init__(self, source: str):
        self._source = source

    def inspect_source(self, fmt: str = "") -> str:
        if fmt not in ("", "cuda", "cu"):
            raise ValueError(f"inspect_source: fmt must be 'cuda' (or empty), got {fmt!r}")
        return self._source


class Kernel(ArgsMixin, LaunchMixin, FastPathMixin, ByOwnName):
    """One ``__global__`` kernel: inspect ``source``/``ptx``/``cubin``; call it to launch."""

    def __init__(self, info: Any, module: CompiledModule, image: CompiledImage | None = None):
        self.info = info
        self.module = module
        self.image = module if image is None else image  # the NVRTC build holding its code
        self.name = info.name
        self.func = info.func
        self._init_launch_state()
        self._plan()

    # -- inspection ---------------------------------------------------------------
    @property
    def source(self) -> str:
        return self.image.source

    @property
    def mod(self) -> RuntimeModuleView:
        """TIRx's ``compile(f).mod``: ``.mod.imports[0].inspect_source()`` is ``source``."""
        return RuntimeModuleView(self.source)

    @property
    def ptx(self) -> str:
        return self.image.ptx

    def __repr__(self) -> str:
        ps = ", ".join(p.name for p in self.func.params)
        return f"<tirx.Kernel {self.name}({ps}) for {self.arch}>"

    # -- planning -------------------------------------------------------------------
    def _plan(self) -> None:
        info = self.info
        f = info.func
        self.kname = f"{f.name}()"
        self.params = list(f.params)
        bufs = dict(f.buffer_map)
        self.pnames = [bufs[p].name if p in bufs else p.name for p in self.params]
        names: dict[Var, str] = {}
        for i, p in enumerate(self.params):
            if p in bufs or (isinstance(p.ty, PointerType) and p.ty.scope != "tensormap"):
                # a tensor's or handle's address (host bindings may view it as another pointer)
                names[p] = f"_p{i}"
            else:
                names[p] = f"_a{i}"
        dyn = info.dyn_vars
        for j, v in enumerate(dyn):
            names[v] = f"_d{j}"
        for j, (v, _src) in enumerate(info.outer):  # values the host program passes (host_program.py)
            names[v] = f"_o{j}"
        # where each dyn var is first read: (param index, "shape"|"stride", dim)
        self.dyn_src: dict[Var, tuple] = {}
        for i, p in enumerate(self.params):
            b = bufs.get(p)
            if b is None:
                continue
            for k, s in enumerate(b.shape):
                if isinstance(s, Var) and s not in self.dyn_src and s in names:
                    self.dyn_src[s] = (i, "shape", k)
            for k, s in enumerate(b.strides):
                if isinstance(s, Var) and s not in self.dyn_src and s in names:
                    self.dyn_src[s] = (i, "stride", k)
        # a dimension only ever written ``a * n + c`` (``n * 2``, ``batch + 1``): n solved from
        # it, (param index, dim, a, c); the dimension is then checked as any other expression
        self.dyn_affine: dict[Var, tuple] = {}
        for v in dyn:
            if v in self.dyn_src:
                continue
            for i, p in enumerate(self.params):
                b = bufs.get(p)
                for k, s in enumerate(() if b is None else b.shape):
                    ac = affine_in(s, v)
                    if ac is not None and v not in self.dyn_affine:
                        self.dyn_affine[v] = (i, k, *ac)
        # a variable only in a parameter's layout (a leading dimension ``T.Iter(m, ld, "m")``):
        # the kernel compiles (TIRx's does), but no call can bind it yet: each call says so
        self.unreadable: str | None = None
        in_shapes = {
            x for _p, b in f.buffer_map for e in signature_parts(b, layout=False) for x in collect_vars(e)
        }
        layout_only = [
            v for v in dyn if v not in self.dyn_src and v not in self.dyn_affine and v not in in_shapes
        ]
        if layout_only:
            self.unreadable = (
                f"{self.kname}: the dynamic variable {layout_only[0].name} appears only in a tensor "
                f"parameter's layout; launching such a kernel is not supported (its value cannot be "
                f"read from the arguments yet)"
            )
        for v in dyn:
            if v not in self.dyn_src and v not in self.dyn_affine and v not in layout_only:
                raise ValueError(
                    f"{self.kname}: the dynamic dimension {v.name} is never a whole dimension of a tensor "
                    f"parameter (nor a * {v.name} + c), so it cannot be read from the arguments"
                )
        host_names = dict(names)
        self.host_binds: list[tuple[str, str, Any]] = []
        self.host_asserts: list[tuple[str, str]] = []
        self.return_code: str | None = None  # the host's `return <value>` after the launch
        for k, s in enumerate(info.host_stmts):
            from ..ir import Assert, Bind, Return

            if isinstance(s, Return):
                self.return_code = self._py(s.value, host_names, "the returned value")
            elif isinstance(s, Bind):
                code = self._py(s.value, host_names, "a host binding")
                host_names[s.var] = f"_h{k}"
                self.host_binds.append((f"_h{k}", code, s.var))
            elif isinstance(s, Assert):
                msg = " ".join(s.message) or "assertion failed"
                self.host_asserts.append((self._py(s.cond, host_names, "an assert"), f"{s.kind}: {msg}"))
        self.host_names = host_names
        e = info.entry
        self.grid_code = [self._py(x, host_names, "the grid") for x in e.grid]
        self.block_code = [self._py(x, host_names, "the block") for x in e.block]
        self.cluster_code = (
            None if e.cluster is None else [self._py(x, host_names, "the cluster") for x in e.cluster]
        )
        if "dynamic_smem_bytes" in e.attrs["cuda.launch_fields"]:
            self.smem_code = self._py(e.dynamic_smem_bytes, host_names, "dynamic_smem_bytes")
        elif info.dyn_smem is None:
            raise ValueError(
                f"{self.kname}: a shared.dyn allocation's size is not constant, so the dynamic shared "
                "memory cannot be inferred: give the launch dynamic_smem_bytes"
            )
        else:  # as TIRx: the launch needs what the shared.dyn allocations take (tirx.ir.dyn_smem)
            self.smem_code = str(info.dyn_smem)
        # TIRx's other launch options (priority, access_policy_window, cooperative, ...: launch
        # values beyond the shape) and grid_sync's cooperative launch go through
        # tirx.runtime.cooperative on the general path
        self.option_codes = [
            (fld, self._py(a, host_names, fld))
            for fld, a in zip(e.attrs["cuda.launch_fields"], e.args)
            if fld.split(".")[0] not in ("grid", "block", "cluster", "dynamic_smem_bytes")
        ]
        self.cooperative = "cooperative" in self.image.features
        # C parameter packing
        fmt = "="
        offs = []
        size = 0
        self.pack_exprs: list[str] = []
        for kp in info.params:
            if kp.kind == "tensormap":  # a 128-byte CUtensorMap by value, 64-byte aligned
                pad = (-size) % 64
                if pad:
                    fmt += f"{pad}x"
                    size += pad
                fmt += "128s"
                offs.append(size)
                size += 128
                # a parameter, or a descriptor the host encoded (a host program's value)
                self.pack_exprs.append(
                    f"_p{self.params.index(kp.var)}" if kp.var in self.params else host_names[kp.var]
                )
                continue
            if kp.kind in ("buffer", "handle") or isinstance(kp.ty, PointerType):
                code, nb = "Q", 8
            else:
                t = kp.ty
                if not isinstance(t, PrimType) or t.base not in _PACK:
                    raise TypeError(
                        f"{self.kname}: parameter {kp.name}: type {t} cannot be passed to a kernel"
                    )
                code = _PACK[t.base]
                nb = struct.calcsize("=" + code)
            pad = (-size) % nb
            if pad:
                fmt += f"{pad}x"
                size += pad
            fmt += code
            offs.append(size)
            size += nb
            if kp.kind == "buffer" or kp.kind == "handle":
                self.pack_exprs.append(f"_p{self.params.index(kp.var)}")
            elif kp.kind == "scalar":
                self.pack_exprs.append(f"_a{self.params.index(kp.var)}")
            else:
                self.pack_exprs.append(host_names[kp.var])
        self.fmt = fmt
        self.tensor_dtypes = [(i, bufs[p].dtype.name) for i, p in enumerate(self.params) if p in bufs]
        self.launcher = self.module.launcher
        self.param_offsets = offs
        self.param_size = max(size, 8)
        ns = dict(HOST_GLOBALS)
        self._eval_ns = ns
        self._fast = None if self.unreadable else self._build_fast()

    def _py(self, e: Any, names: dict, what: str) -> str:
        try:
            return to_python(e, names)
        except HostExprError as err:
            raise ValueError(f"{self.kname}: {what} cannot be computed on the host: {err}") from None

    # -- calls ----------------------------------------------------------------------------
    def _check_and_launch(self, args: tuple, stream: Any, outer: tuple | None = None) -> Any:
        ret, plan = self._check(args, stream, outer)  # the stream a DLPack / CAI v3 producer syncs to
        if plan is not None:
            device, grid, block, cluster, smem, values, opts = plan
            self._launch(device, grid, block, cluster, smem, values, stream, opts)
        return ret

    def _general(self, args: tuple, stream: Any) -> Any:
        return self._check_and_launch(args, stream)

    def _bind_kw(self, args: tuple, kwargs: dict) -> tuple:
        """Arguments given by parameter name, bound to positions (the fast path's keywords)."""
        return tuple(self.func.bind_args(args, kwargs))

    def prepare(self, *args: Any, **kwargs: Any) -> PreparedLaunch:
        """Check the arguments once and return a launch that reuses them (``launch()``).

        The checks are those of a call; the returned :class:`PreparedLaunch` launches with
        only the stream query and ``cuLaunchKernel`` left per call (see
        ``tirx.runtime.prepared`` for its contract).
        """
        if kwargs:
            args = tuple(self.func.bind_args(args, kwargs))
        ret, plan = self._check(args)
        return PreparedLaunch(self, args, ret, plan)

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        if kwargs:  # by parameter name: bound to positions once, then the same launch
            args = tuple(self.func.bind_args(args, kwargs))
        ret = self._check_and_launch(args, stream)
        if self._fast and self._fns and "torch" in sys.modules:
            # first launch done: switch this object to the generated fast __call__
            fast = self._bind_fast(_FAST_CLUSTER, _ctypes_launch_ex)
            if fast is None:
                self._fast = None
                return ret
            self._block()
            if stream is None or isinstance(stream, int):
                for dev in list(self._fns):
                    with contextlib.suppress(Exception):
                        self._stream_obj(_stream_handle(stream, dev))
            self._fast_fn = fast
            self.__class__ = type(f"Kernel_{self.name}", (Kernel,), {"__call__": fast, "__slots__": ()})
        return ret


class CompiledModule(CompiledImage):
    """The result of ``tirx.compile``: one cubin with one or more kernels.

    A module with one kernel is callable directly; otherwise pick a kernel with
    ``mod["name"]`` or ``mod.name``. ``kernels`` maps each function to its :class:`Kernel`, or
    to a :class:`HostFunction` when its host code launches several. Device entries with their
    own compile settings (``backend_config``) are built apart: ``images`` lists every build
    (the module itself is the first; ``source``/``ptx``/``cubin`` are its).
    """

    def __init__(self, ir: Any, source: str, ptx: str, cubin: bytes, arch: str, infos: list, restrict: bool,
                 log: str = "", options: tuple = (), cache_key: str = "", cache_hit: str = "",
                 launcher: str = "bindings", features: frozenset = frozenset(), config: dict | None = None,
                 image_format: str = "cubin", groups: tuple = ()):  # fmt: skip
        super().__init__(source, ptx, cubin, arch, log, options, cache_key, cache_hit, features, config,
                         image_format)  # fmt: skip
        self.ir = ir
        self.restrict = restrict
        self.launcher = launcher
        #: every build: this module's, then those of the other backend_config groups
        self.images: list[CompiledImage] = [self, *(img for img, _infos in groups)]
        built = [Kernel(i, self) for i in infos]
        for img, more in groups:
            built += [Kernel(i, self, img) for i in more]
        fns = ir.functions if hasattr(ir, "functions") else (ir,)
        order = {f.name: n for n, f in enumerate(fns)}
        built.sort(key=lambda k: (order.get(k.func.name, len(order)), k.info.index))
        by_func: dict[str, list] = {}
        for k in built:
            by_func.setdefault(k.func.name, []).append(k)
        self.kernels: dict[str, Any] = {name: _function(name, ks, self) for name, ks in by_func.items()}

    @property
    def mod(self) -> RuntimeModuleView:
        """TIRx's ``compile(mod).mod``: ``.mod.imports[0].inspect_source()`` is ``source``."""
        return RuntimeModuleView(self.source)

    def __getitem__(self, name: str) -> Any:
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(
                f"compiled module has no kernel {name!r} (kernels: {', '.join(self.kernels)})"
            ) from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "kernels":
            raise AttributeError(name)
        ks = self.__dict__.get("kernels") or {}
        if name in ks:
            return ks[name]
        raise AttributeError(name)

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        if len(self.kernels) != 1:
            raise TypeError(
                f"this module has {len(self.kernels)} kernels ({', '.join(self.kernels)}); call one of them, "
                f"e.g. mod[{next(iter(self.kernels))!r}](...)"
            )
        return next(iter(self.kernels.values()))(*args, stream=stream, **kwargs)

    def prepare(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`Kernel.prepare` of the module's only kernel."""
        if len(self.kernels) != 1:
            raise TypeError(
                f"this module has {len(self.kernels)} kernels ({', '.join(self.kernels)}); prepare one of "
                f"them, e.g. mod[{next(iter(self.kernels))!r}].prepare(...)"
            )
        return next(iter(self.kernels.values())).prepare(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<tirx.CompiledModule {', '.join(self.kernels)} for {self.arch}>"


def _function(name: str, ks: list, module: CompiledModule) -> Any:
    """What a function of the module is when called: its host program (control flow around
    its device entries), the sequence of its kernels, or its one kernel."""
    if ks[0].info.structured:
        from .host_program import HostProgram

        return HostProgram(name, ks, module)
    return ks[0] if len(ks) == 1 else HostFunction(name, ks, module)
