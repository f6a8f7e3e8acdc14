"""The CUDA driver through ``cuda.bindings.driver``.

``probe()`` calls ``cuInit`` once and remembers the answer; nothing else here touches the
driver before it succeeded (and no ``cuda.core`` object is ever created: without a driver,
touching one was seen to leave later driver calls hanging).
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["CudaUnavailable", "check", "device_arch", "driver", "load_function", "probe"]


class CudaUnavailable(RuntimeError):
    """No usable CUDA driver or device (launching needs one; compiling does not)."""


_probe: tuple[bool, str] | None = None
_lock = threading.Lock()
_ctx: dict[int, Any] = {}


def driver():
    from cuda.bindings import driver as d

    return d


def probe() -> tuple[bool, str]:
    """(ok, reason): whether ``cuInit`` succeeds and a device exists."""
    global _probe
    if _probe is not None:
        return _probe
    with _lock:
        if _probe is not None:
            return _probe
        try:
            d = driver()
        except ImportError as e:
            _probe = (False, f"cuda-bindings is not installed ({e})")
            return _probe
        try:
            (err,) = d.cuInit(0)
        except Exception as e:  # no libcuda: a RuntimeError subclass
            _probe = (False, f"cuInit failed: {e}")
            return _probe
        if int(err) != 0:
            _probe = (False, f"cuInit failed: {_name(err)}")
            return _probe
        err, n = d.cuDeviceGetCount()
        if int(err) != 0 or n == 0:
            _probe = (False, "no CUDA device")
            return _probe
        _probe = (True, "")
        return _probe


def require() -> None:
    ok, why = probe()
    if not ok:
        raise CudaUnavailable(f"tirx: cannot launch CUDA kernels here: {why}")


def _name(err: Any) -> str:
    try:
        d = driver()
        _e, s = d.cuGetErrorName(err)
        return s.decode() if isinstance(s, bytes) else str(s)
    except Exception:
        return str(err)


def check(res: Any, what: str) -> Any:
    """Unpack a cuda-bindings result tuple; raise on a non-success code."""
    if isinstance(res, tuple):
        err, rest = res[0], res[1:]
    else:
        err, rest = res, ()
    if int(err) != 0:
        raise RuntimeError(f"{what} failed: {_name(err)}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


def device_arch(index: int = 0) -> str:
    """``sm_XY`` of device ``index`` (``sm_90a`` on Hopper: wgmma/setmaxnreg need the a-variant)."""
    require()
    d = driver()
    dev = check(d.cuDeviceGet(index), "cuDeviceGet")
    A = d.CUdevice_attribute
    major = check(
        d.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute"
    )
    minor = check(
        d.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute"
    )
    suffix = "a" if (major, minor) in ((9, 0), (10, 0), (10, 1), (12, 0)) else ""
    return f"sm_{major}{minor}{suffix}"


def current_device_index() -> int:
    import sys

    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                return int(torch.cuda.current_device())
        except Exception:
            pass
    return 0


def context(index: int) -> Any:
    """The primary context of device ``index`` (the one torch and CuPy use), made current."""
    ctx = _ctx.get(index)
    d = driver()
    if ctx is None:
        require()
        dev = check(d.cuDeviceGet(index), "cuDeviceGet")
        ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        _ctx[index] = ctx
    check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx


def load_function(cubin: bytes, name: str, index: int) -> tuple[Any, Any]:
    """Load ``cubin`` in device ``index``'s primary context; return (module, function)."""
    d = driver()
    context(index)
    mod = check(d.cuModuleLoadData(cubin), "cuModuleLoadData")
    fn = check(d.cuModuleGetFunction(mod, name.encode()), f"cuModuleGetFunction({name})")
    return mod, fn


def func_attribute(fn: Any, attr: str) -> int:
    d = driver()
    return int(check(d.cuFuncGetAttribute(getattr(d.CUfunction_attribute, attr), fn), "cuFuncGetAttribute"))


def set_max_dynamic_smem(fn: Any, nbytes: int) -> None:
    d = driver()
    A = d.CUfunction_attribute
    check(
        d.cuFuncSetAttribute(fn, A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(nbytes)),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
    )
