"""NVSHMEM kernels: building them (NVRTC + nvJitLink against ``libnvshmem_device.a``) and
the host side (bootstrap, symmetric memory, module registration) over ``libnvshmem_host.so``.

Build: a kernel that uses ``T.nvshmem.*`` (codegen feature ``nvshmem``) is compiled by NVRTC
as relocatable device code (``-rdc=true``) with NVSHMEM's and CCCL's headers, then linked by
nvJitLink with NVSHMEM's static device library into one loadable cubin. No GPU is needed.
One wrinkle: under NVRTC ``uint64_t`` is ``unsigned long long``, while the library was built
by nvcc where it is ``unsigned long``, so the device library's ``put_signal`` templates carry
another mangled name than the kernel asks for; a small shim (``_SHIM``, compiled once) gives
the kernel's names and forwards to the library's.

Run: ``init()`` bootstraps NVSHMEM with a unique id (one process per GPU: a single process
is PE 0 of 1; under ``torchrun`` rank 0's id is broadcast through ``torch.distributed``),
``empty()``/``zeros()`` allocate symmetric tensors (``nvshmem_malloc``), and every module that
holds NVSHMEM kernels is registered with ``nvshmemx_cumodule_init`` when it is loaded (the
runtime does that; loading before ``init()`` is an error). Kernels that call
an all-PE barrier need all their blocks resident at once: keep the grid within one wave.

Packages (``pip install 'tirx-toolkit[nvshmem]'``): nvidia-nvshmem-cu13 (headers, device and
host libraries), nvidia-cuda-cccl (``cuda/std`` headers NVSHMEM's device headers include),
nvidia-nvjitlink (the device linker). ``NVSHMEM_HOME`` points at another NVSHMEM install.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from pathlib import Path
from typing import Any

__all__ = [
    "SymmetricTensor",
    "available",
    "barrier",
    "compile_options",
    "compile_source",
    "empty",
    "finalize",
    "init",
    "initialized",
    "link",
    "num_pes",
    "paths",
    "this_pe",
    "unique_id",
    "zeros",
]

_INSTALL = "pip install 'tirx-toolkit[nvshmem]'"


# ----------------------------------------------------------------------------- finding it
@functools.lru_cache(maxsize=1)
def paths() -> dict[str, str]:
    """NVSHMEM's ``include`` and ``lib`` directories and CCCL's include directory;
    RuntimeError naming the package when one is missing."""
    inc = lib = None
    home = os.environ.get("NVSHMEM_HOME")
    if home:
        inc, lib = os.path.join(home, "include"), os.path.join(home, "lib")
    else:
        try:
            import cuda.pathfinder as pf

            d = pf.find_nvidia_header_directory("nvshmem")
            if d:
                inc = str(d)
                lib = str(Path(d).parent / "lib")
        except Exception:  # an old pathfinder without nvshmem: look for the wheel's package
            pass
        if inc is None:
            try:
                import nvidia.nvshmem as pkg

                base = Path(next(iter(pkg.__path__)))
                inc, lib = str(base / "include"), str(base / "lib")
            except (ImportError, StopIteration):
                pass
    if not inc or not os.path.exists(os.path.join(inc, "nvshmem.h")):
        raise RuntimeError(f"tirx: NVSHMEM kernels need the NVSHMEM headers and libraries ({_INSTALL})")
    assert lib is not None  # always set together with inc
    cccl = None
    try:
        import cuda.pathfinder as pf

        d = pf.find_nvidia_header_directory("cccl")
        cccl = str(d) if d else None
    except Exception:
        pass
    if cccl is None:  # the nvidia-cuda-cccl wheel's directory
        try:
            import nvidia

            for base in nvidia.__path__:
                d = os.path.join(base, "cu13", "include", "cccl")
                if os.path.exists(os.path.join(d, "cuda", "std", "cstdint")):
                    cccl = d
                    break
        except ImportError:
            pass
    if cccl is None:
        for h in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
            if h and os.path.exists(os.path.join(h, "include", "cccl", "cuda", "std", "cstdint")):
                cccl = os.path.join(h, "include", "cccl")
                break
    if cccl is None:
        raise RuntimeError(f"tirx: NVSHMEM's device headers need CCCL's cuda/std headers ({_INSTALL})")
    return {"include": inc, "lib": lib, "cccl": cccl}


def _version() -> str:
    p = os.path.join(paths()["include"], "non_abi", "nvshmem_version.h")
    vals = {}
    try:
        for line in Path(p).read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == "#define" and parts[1].startswith("NVSHMEM_VENDOR_"):
                vals[parts[1]] = parts[2]
    except OSError:
        return "unknown"
    return ".".join(vals.get(f"NVSHMEM_VENDOR_{k}_VERSION", "?") for k in ("MAJOR", "MINOR", "PATCH"))


def _nvjitlink():
    try:
        from cuda.bindings import nvjitlink

        nvjitlink.version()
    except Exception as e:
        raise RuntimeError(
            f"tirx: linking NVSHMEM kernels needs nvJitLink (nvidia-nvjitlink; {_INSTALL}): {e}"
        ) from e
    return nvjitlink


def available() -> tuple[bool, str]:
    """Whether NVSHMEM kernels can be built here (headers, device library, nvJitLink)."""
    try:
        p = paths()
        if not os.path.exists(os.path.join(p["lib"], "libnvshmem_device.a")):
            return False, f"no libnvshmem_device.a in {p['lib']}"
        _nvjitlink()
    except RuntimeError as e:
        return False, str(e)
    return True, ""


# ----------------------------------------------------------------------------- building
def compile_options() -> tuple[str, ...]:
    """NVRTC options of an NVSHMEM kernel (part of the compile cache key, with the version)."""
    p = paths()
    return ("-rdc=true", f"-I{p['include']}", f"-I{p['cccl']}", f"-DTIRX_NVSHMEM_VERSION={_version()}")


# the kernel's (NVRTC: uint64_t = unsigned long long) put_signal names, forwarding to the
# device library's (nvcc on Linux: uint64_t = unsigned long); the enums only name the types
_SHIM = """\
typedef enum { NVSHMEMI_THREADGROUP_THREAD = 0, NVSHMEMI_THREADGROUP_WARP = 1,
               NVSHMEMI_THREADGROUP_WARPGROUP = 2, NVSHMEMI_THREADGROUP_BLOCK = 3 } threadgroup_t;
typedef enum { NVSHMEMI_AMO_SHIM_ = 0 } nvshmemi_amo_t;
template <threadgroup_t S> __device__ void nvshmemi_transfer_put_signal(
    void *, void *, unsigned long, void *, unsigned long, nvshmemi_amo_t, int, bool);
template <threadgroup_t S> __device__ void nvshmemi_transfer_put_signal(
    void *r, void *l, unsigned long n, void *s, unsigned long long v, nvshmemi_amo_t op, int pe, bool nbi) {
  nvshmemi_transfer_put_signal<S>(r, l, n, s, (unsigned long)v, op, pe, nbi);
}
#define TIRX_SHIM(S) template __device__ void nvshmemi_transfer_put_signal<S>( \\
    void *, void *, unsigned long, void *, unsigned long long, nvshmemi_amo_t, int, bool);
TIRX_SHIM(NVSHMEMI_THREADGROUP_THREAD)
TIRX_SHIM(NVSHMEMI_THREADGROUP_WARP)
TIRX_SHIM(NVSHMEMI_THREADGROUP_BLOCK)
"""


@functools.lru_cache(maxsize=8)
def _shim_cubin(arch: str) -> bytes:
    from . import nvrtc

    return nvrtc.compile_source(_SHIM, arch, name="tirx_nvshmem_shim.cu", options=("-rdc=true",)).cubin


def link(cubin: bytes, arch: str) -> bytes:
    """Link a relocatable cubin with NVSHMEM's device library into a loadable cubin."""
    nvj = _nvjitlink()
    lib = os.path.join(paths()["lib"], "libnvshmem_device.a")
    if not os.path.exists(lib):
        raise RuntimeError(f"tirx: NVSHMEM's device library is missing: {lib} ({_INSTALL})")
    h = nvj.create(1, [f"-arch={arch}"])
    try:
        try:
            nvj.add_data(h, nvj.InputType.CUBIN, cubin, len(cubin), "tirx_kernel.cubin")
            shim = _shim_cubin(arch)
            nvj.add_data(h, nvj.InputType.CUBIN, shim, len(shim), "tirx_nvshmem_shim.cubin")
            nvj.add_file(h, nvj.InputType.LIBRARY, lib)
            nvj.complete(h)
        except Exception as e:
            n = nvj.get_error_log_size(h)
            buf = bytearray(n)
            if n:
                nvj.get_error_log(h, buf)
            log = bytes(buf).rstrip(b"\0").decode(errors="replace").strip()
            raise RuntimeError(
                f"tirx: nvJitLink failed to link the NVSHMEM kernel for {arch}: {e}\n{log}"
            ) from None
        n = nvj.get_linked_cubin_size(h)
        out = bytearray(n)
        nvj.get_linked_cubin(h, out)
        return bytes(out)
    finally:
        nvj.destroy(h)


def compile_source(text: str, arch: str, name: str = "tirx_kernel.cu", options: tuple = (),
                   line_spans: dict | None = None) -> Any:  # fmt: skip
    """``tirx.runtime.nvrtc.compile_source`` for an NVSHMEM kernel: relocatable NVRTC output
    linked with the device library (``options`` must hold ``compile_options()``)."""
    from . import nvrtc

    opts = tuple(options)
    if "-rdc=true" not in opts:
        opts += compile_options()
    res = nvrtc.compile_source(text, arch, name=name, options=opts, line_spans=line_spans)
    return nvrtc.CompileResult(res.ptx, link(res.cubin, arch), res.log, res.options)


# ----------------------------------------------------------------------------- host library
class _UniqueId(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("internal", ctypes.c_char * 124)]


class _UidArgs(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("id", ctypes.POINTER(_UniqueId)), ("myrank", ctypes.c_int),
                ("nranks", ctypes.c_int)]  # fmt: skip


class _InitArgs(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("uid_args", _UidArgs), ("content", ctypes.c_char * 96)]


class _InitAttr(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("mpi_comm", ctypes.c_void_p), ("args", _InitArgs)]


assert ctypes.sizeof(_UniqueId) == 128 and ctypes.sizeof(_UidArgs) == 24  # nvshmem_uniqueid.h
assert ctypes.sizeof(_InitArgs) == 128 and ctypes.sizeof(_InitAttr) == 144  # nvshmem_types.h

_INIT_WITH_UNIQUEID = 1 << 3  # NVSHMEMX_INIT_WITH_UNIQUEID
_STATUS_IS_INITIALIZED = 2  # NVSHMEM_STATUS_IS_INITIALIZED
_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}

_SIGS = {
    "nvshmemx_get_uniqueid": (ctypes.c_int, [ctypes.c_void_p]),
    "nvshmemx_set_attr_uniqueid_args": (
        ctypes.c_int,
        [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p],
    ),
    "nvshmemx_hostlib_init_attr": (ctypes.c_int, [ctypes.c_uint, ctypes.c_void_p]),
    "nvshmemx_hostlib_finalize": (None, []),
    "nvshmemx_init_status": (ctypes.c_int, []),
    "nvshmem_my_pe": (ctypes.c_int, []),
    "nvshmem_n_pes": (ctypes.c_int, []),
    "nvshmem_malloc": (ctypes.c_void_p, [ctypes.c_size_t]),
    "nvshmem_free": (None, [ctypes.c_void_p]),
    "nvshmem_ptr": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int]),
    "nvshmem_barrier_all": (None, []),
    "nvshmemx_barrier_all_on_stream": (None, [ctypes.c_void_p]),
    "nvshmemx_cumodule_init": (ctypes.c_int, [ctypes.c_void_p]),
    "nvshmemx_cumodule_finalize": (ctypes.c_int, [ctypes.c_void_p]),
}


def _host() -> ctypes.CDLL:
    lib = _STATE.get("lib")
    if lib is not None:
        return lib
    d = paths()["lib"]
    so = os.path.join(d, "libnvshmem_host.so.3")
    if not os.path.exists(so):
        so = os.path.join(d, "libnvshmem_host.so")
    # the bootstrap plugin lies next to the host library
    plugin = os.path.join(d, "nvshmem_bootstrap_uid.so.3")
    if os.path.exists(plugin):
        os.environ.setdefault("NVSHMEM_BOOTSTRAP_UID_PLUGIN", plugin)
    try:
        lib = ctypes.CDLL(so, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise RuntimeError(f"tirx: cannot load NVSHMEM's host library {so}: {e} ({_INSTALL})") from e
    for fn, (res, args) in _SIGS.items():
        f = getattr(lib, fn)
        f.restype, f.argtypes = res, args
    _STATE["lib"] = lib
    return lib


def unique_id() -> bytes:
    """A fresh NVSHMEM unique id (128 bytes) for the PE 0 of a job to hand to the others."""
    uid = _UniqueId()
    uid.version = (1 << 16) + ctypes.sizeof(_UniqueId)
    _check(_host().nvshmemx_get_uniqueid(ctypes.byref(uid)), "nvshmemx_get_uniqueid")
    return ctypes.string_at(ctypes.addressof(uid), ctypes.sizeof(uid))


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"tirx: {what} failed (NVSHMEM status {rc})")


def initialized() -> bool:
    return "lib" in _STATE and _STATE["lib"].nvshmemx_init_status() >= _STATUS_IS_INITIALIZED


def init(rank: int | None = None, world_size: int | None = None, uid: bytes | None = None,
         device: int | None = None) -> int:  # fmt: skip
    """Bootstrap NVSHMEM for this process (one process per GPU) and return its PE.

    ``rank``/``world_size`` default to ``torch.distributed``'s when it is initialized, else to
    the ``RANK``/``WORLD_SIZE`` variables (torchrun), else 0 and 1. With more than one PE and no
    ``uid``, rank 0's unique id is broadcast through ``torch.distributed``. ``device`` (default
    ``LOCAL_RANK``, else 0) is made current first: NVSHMEM binds the PE to it."""
    with _LOCK:
        if initialized():
            return int(_STATE["lib"].nvshmem_my_pe())
        dist = _torch_dist()
        if rank is None:
            rank = dist.get_rank() if dist is not None else int(os.environ.get("RANK", "0"))
        if world_size is None:
            world_size = dist.get_world_size() if dist is not None else int(os.environ.get("WORLD_SIZE", "1"))
        if not (isinstance(rank, int) and isinstance(world_size, int) and 0 <= rank < world_size):
            raise ValueError(
                f"nvshmem.init: need 0 <= rank < world_size, got rank={rank!r} world_size={world_size!r}"
            )
        if device is None:
            device = int(os.environ.get("LOCAL_RANK", "0"))
        from . import driver as _drv

        _drv.context(device)
        _STATE["device"] = device
        lib = _host()
        if uid is None:
            if world_size == 1:
                uid = unique_id()
            elif dist is None:
                raise ValueError(
                    "nvshmem.init: more than one PE needs the unique id of PE 0 (uid=), or torch.distributed "
                    "initialized to broadcast it"
                )
            else:
                box = [unique_id() if rank == 0 else None]
                dist.broadcast_object_list(box, src=0)
                uid = box[0]
        if not isinstance(uid, (bytes, bytearray)) or len(uid) != ctypes.sizeof(_UniqueId):
            raise ValueError(f"nvshmem.init: uid must be the {ctypes.sizeof(_UniqueId)} bytes of unique_id()")
        uid_s = _UniqueId.from_buffer_copy(bytes(uid))
        attr = _InitAttr()
        attr.version = (1 << 16) + ctypes.sizeof(_InitAttr)
        attr.args.version = (1 << 16) + ctypes.sizeof(_InitArgs)
        attr.args.uid_args.version = (1 << 16) + ctypes.sizeof(_UidArgs)
        _STATE["uid"] = uid_s  # kept alive: attr points at it
        _check(lib.nvshmemx_set_attr_uniqueid_args(rank, world_size, ctypes.byref(uid_s), ctypes.byref(attr)),
               "nvshmemx_set_attr_uniqueid_args")  # fmt: skip
        attr.version = (1 << 16) + ctypes.sizeof(_InitAttr)  # as nvshmemx_init_attr() sets them
        attr.args.version = (1 << 16) + ctypes.sizeof(_InitArgs)
        attr.args.uid_args.version = (1 << 16) + ctypes.sizeof(_UidArgs)
        _check(
            lib.nvshmemx_hostlib_init_attr(_INIT_WITH_UNIQUEID, ctypes.byref(attr)),
            "nvshmemx_hostlib_init_attr",
        )
        return int(lib.nvshmem_my_pe())


def _torch_dist() -> Any:
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    return dist if dist.is_available() and dist.is_initialized() else None


def _need_init(what: str) -> ctypes.CDLL:
    if not initialized():
        raise RuntimeError(f"tirx: {what} needs NVSHMEM initialized: call tirx.runtime.nvshmem.init() first")
    return _STATE["lib"]


def this_pe() -> int:
    """This process's PE (``nvshmem_my_pe`` on the host)."""
    return int(_need_init("this_pe()").nvshmem_my_pe())


def num_pes() -> int:
    """The number of PEs (``nvshmem_n_pes`` on the host)."""
    return int(_need_init("num_pes()").nvshmem_n_pes())


def barrier(stream: Any = None) -> None:
    """All-PE barrier from the host (on ``stream`` when given: an int handle or a torch stream)."""
    lib = _need_init("barrier()")
    if stream is None:
        lib.nvshmem_barrier_all()
    else:
        h = getattr(stream, "cuda_stream", stream)
        lib.nvshmemx_barrier_all_on_stream(ctypes.c_void_p(int(h)))


def module_loaded(module: Any) -> None:
    """Register a just-loaded CUmodule holding NVSHMEM kernels (its device state)."""
    lib = _need_init("launching an NVSHMEM kernel")
    _check(lib.nvshmemx_cumodule_init(ctypes.c_void_p(int(module))), "nvshmemx_cumodule_init")


def finalize() -> None:
    """Free nothing that is still referenced; shut NVSHMEM down for this process."""
    with _LOCK:
        if initialized():
            _STATE["lib"].nvshmemx_hostlib_finalize()


# ----------------------------------------------------------------------------- symmetric memory
_DTYPES = {
    "float32": "<f4", "float16": "<f2", "float64": "<f8", "bfloat16": "<V2", "int8": "|i1", "uint8": "|u1",
    "int16": "<i2", "uint16": "<u2", "int32": "<i4", "uint32": "<u4", "int64": "<i8", "uint64": "<u8",
}  # fmt: skip
_SIZES = {"1": 1, "2": 2, "4": 4, "8": 8}


class SymmetricTensor:
    """A contiguous array in NVSHMEM's symmetric heap (``nvshmem_malloc``): the same offset on
    every PE. It is a ``__cuda_array_interface__`` array: tirx kernels take it as it is, and
    ``torch.as_tensor(t, device="cuda")`` views it without a copy."""

    def __init__(self, ptr: int, shape: tuple, dtype: str):
        self.ptr = ptr
        self.shape = shape
        self.dtype = dtype
        self.device = _STATE.get("device", 0)

    @property
    def nbytes(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n * _SIZES[_DTYPES[self.dtype][-1]]

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": _DTYPES[self.dtype], "data": (self.ptr, False), "version": 3,
                "strides": None}  # fmt: skip

    def torch(self) -> Any:
        """A torch tensor viewing this memory."""
        import torch

        t = torch.as_tensor(self, device=f"cuda:{self.device}")
        return t.view(torch.bfloat16) if self.dtype == "bfloat16" else t

    def peer_ptr(self, pe: int) -> int:
        """The address of PE ``pe``'s copy, loadable from this GPU (0 when not reachable by load/store)."""
        return int(_need_init("peer_ptr()").nvshmem_ptr(ctypes.c_void_p(self.ptr), pe) or 0)

    def free(self) -> None:
        """``nvshmem_free`` (collective: every PE frees its copy)."""
        if self.ptr:
            _need_init("free()").nvshmem_free(ctypes.c_void_p(self.ptr))
            self.ptr = 0

    def __repr__(self) -> str:
        return f"<SymmetricTensor {self.dtype}{list(self.shape)} at {self.ptr:#x}>"


def empty(shape: Any, dtype: str = "float32") -> SymmetricTensor:
    """A symmetric array (collective: every PE allocates the same shape, in the same order)."""
    lib = _need_init("empty()")
    if dtype not in _DTYPES:
        raise ValueError(f"nvshmem.empty: dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    t = SymmetricTensor(0, shape, dtype)
    n = max(t.nbytes, 1)
    p = lib.nvshmem_malloc(n)
    if not p:
        raise MemoryError(f"nvshmem_malloc({n}) failed (raise NVSHMEM_SYMMETRIC_SIZE)")
    t.ptr = int(p)
    return t


def zeros(shape: Any, dtype: str = "float32") -> SymmetricTensor:
    t = empty(shape, dtype)
    from . import driver as _drv

    d = _drv.driver()
    _drv.check(d.cuMemsetD8(t.ptr, 0, t.nbytes), "cuMemsetD8")
    return t
