"""Cooperative launches and TIRx's launch options, through ``cuLaunchKernelEx``.

A kernel needs a cooperative launch when it has a grid-wide barrier (its generated source
carries the codegen feature ``"cooperative"``, ``CudaSource.features``) or when its launch says
``cooperative=True``. Such a launch is valid only if every block of the grid can be resident at
once; ``check_grid_fits`` asks the driver's occupancy calculator first, so an oversized grid is
a ValueError naming the numbers instead of ``CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE``.

The other launch options of ``T.cuda.LaunchConfig`` (``priority``, ``access_policy_window``,
``programmatic_event``, ...: device-entry launch values named in ``tirx.ir.launch_fields``)
become ``CUlaunchAttribute``s here (``launch_attributes``). ``launch`` puts it together:

    from tirx.runtime import cooperative
    opts = cooperative.options(entry, values)  # field name -> host value (ints, floats, handles)
    if cooperative.needs_ex(features, opts, cluster):
        cooperative.launch(fn, grid, block, smem, stream, params, opts, cluster,
                           cooperative=cooperative.is_cooperative(features, opts))

This module touches the driver only inside those calls (nothing at import).
"""

from __future__ import annotations

import math
from typing import Any

from ..ir.launch_fields import COMPOSITES, TOP_FIELDS

__all__ = [
    "COOPERATIVE_FEATURE",
    "check_grid_fits",
    "is_cooperative",
    "launch",
    "launch_attributes",
    "needs_ex",
    "options",
]

#: the codegen feature of a kernel with a grid-wide barrier (declared in tirx/ops/cuda_waits.py)
COOPERATIVE_FEATURE = "cooperative"
_SHAPE = ("grid", "block", "dynamic_smem_bytes")


def options(fields: Any, values: Any) -> dict:
    """The launch options of a device entry as host values: ``fields`` its
    ``attrs["cuda.launch_fields"]``, ``values`` the evaluated launch values (Python ints, floats
    and pointer/handle integers). Shape fields are left out; composites become dicts."""
    out: dict = {}
    for f, v in zip(fields, values):
        top, _, member = f.partition(".")
        if top in _SHAPE:
            continue
        if member and top not in ("cluster", "preferred_cluster"):
            out.setdefault(top, {})[member] = v
        elif member:
            out.setdefault(top, [1, 1, 1])["xyz".index(member)] = int(v)
        else:
            out[top] = v
    return out


def is_cooperative(features: Any, opts: dict) -> bool:
    """Whether the launch must be cooperative: the kernel has a grid-wide barrier, or asks for it."""
    return COOPERATIVE_FEATURE in (features or ()) or bool(opts.get("cooperative"))


def needs_ex(features: Any, opts: dict, cluster: Any = None) -> bool:
    """Whether plain ``cuLaunchKernel`` is not enough (any attribute to pass)."""
    return (
        cluster is not None
        or is_cooperative(features, opts)
        or any(k != "stream" and v is not None for k, v in opts.items())
    )


_ENUM_TYPES = {
    "cluster_scheduling_policy": "CUclusterSchedulingPolicy",
    "mem_sync_domain": "CUlaunchMemSyncDomain",
}
_DIRECT = {  # option -> (CU_LAUNCH_ATTRIBUTE_<id>, value member)
    "cluster": ("CLUSTER_DIMENSION", "clusterDim"),
    "preferred_cluster": ("PREFERRED_CLUSTER_DIMENSION", "preferredClusterDim"),
    "cooperative": ("COOPERATIVE", "cooperative"),
    "programmatic_stream_serialization": (
        "PROGRAMMATIC_STREAM_SERIALIZATION",
        "programmaticStreamSerializationAllowed",
    ),
    "cluster_scheduling_policy": (
        "CLUSTER_SCHEDULING_POLICY_PREFERENCE",
        "clusterSchedulingPolicyPreference",
    ),
    "priority": ("PRIORITY", "priority"),
    "mem_sync_domain": ("MEM_SYNC_DOMAIN", "memSyncDomain"),
    "mem_sync_domain_map": ("MEM_SYNC_DOMAIN_MAP", "memSyncDomainMap"),
    "access_policy_window": ("ACCESS_POLICY_WINDOW", "accessPolicyWindow"),
    "preferred_shared_memory_carveout": ("PREFERRED_SHARED_MEMORY_CARVEOUT", "sharedMemCarveout"),
    "nvlink_util_centric_scheduling": ("NVLINK_UTIL_CENTRIC_SCHEDULING", "nvlinkUtilCentricScheduling"),
    "portable_cluster_size_mode": ("PORTABLE_CLUSTER_SIZE_MODE", "portableClusterSizeMode"),
    "shared_memory_mode": ("SHARED_MEMORY_MODE", "sharedMemoryMode"),
    "programmatic_event": ("PROGRAMMATIC_EVENT", "programmaticEvent"),
    "launch_completion_event": ("LAUNCH_COMPLETION_EVENT", "launchCompletionEvent"),
}
#: options newer drivers added (the CUDA driver version each needs, as TIRx's launch table says):
#: an older driver refuses them with a bare CUDA_ERROR_INVALID_VALUE, so the launch says which
_DRIVER_NEEDS = {
    "launch_completion_event": 12040, "preferred_cluster": 12080, "preferred_shared_memory_carveout": 12080,
    "nvlink_util_centric_scheduling": 13020, "portable_cluster_size_mode": 13020, "shared_memory_mode": 13020,
}  # fmt: skip
_DRIVER_VERSION: list = []  # the loaded driver's version, read once (0: unknown)


def _driver_version(d: Any) -> int:
    if not _DRIVER_VERSION:
        try:
            err, v = d.cuDriverGetVersion()
            _DRIVER_VERSION.append(int(v) if int(err) == 0 else 0)
        except Exception:  # no driver: the launch itself reports it
            _DRIVER_VERSION.append(0)
    return _DRIVER_VERSION[0]


def _version(v: int) -> str:
    return f"{v // 1000}.{v % 1000 // 10}"


#: composite member -> the driver struct's member name
_MEMBERS = {
    "default": "default_", "remote": "remote", "base_ptr": "base_ptr", "num_bytes": "num_bytes",
    "hit_ratio": "hitRatio", "hit_prop": "hitProp", "miss_prop": "missProp", "event": "event",
    "flags": "flags", "trigger_at_block_start": "triggerAtBlockStart",
}  # fmt: skip
_ACCESS = ("CU_ACCESS_PROPERTY_NORMAL", "CU_ACCESS_PROPERTY_STREAMING", "CU_ACCESS_PROPERTY_PERSISTING")


def _handle(d: Any, kind: str, v: Any) -> Any:
    """A handle value (an int address or a driver object) as the driver struct member wants it:
    events as ``CUevent``, the window's base pointer as an address."""
    if kind == "event" and isinstance(v, int):
        return d.CUevent(v)
    return v


def launch_attributes(d: Any, opts: dict, cluster: Any = None, cooperative: bool = False) -> list:
    """``CUlaunchAttribute``s (``d``: ``cuda.bindings.driver``) for the launch options; an option
    this driver binding has no attribute for is a ValueError naming it (no silent drop)."""
    attrs = []
    todo = dict(opts)
    todo.pop("stream", None)
    if cluster is not None:
        todo["cluster"] = list(cluster)
    if cooperative:
        todo["cooperative"] = 1
    order = [n for n, _k in TOP_FIELDS]
    for name in sorted(todo, key=order.index):
        v = todo[name]
        if v is None or name not in _DIRECT:
            continue
        ident, member = _DIRECT[name]
        need = _DRIVER_NEEDS.get(name)
        if need is not None and 0 < (have := _driver_version(d)) < need:
            raise ValueError(
                f"launch option {name}: needs a CUDA {_version(need)} driver; this one is "
                f"{_version(have)} (it would refuse the launch as an invalid value)"
            )
        aid = getattr(d.CUlaunchAttributeID, f"CU_LAUNCH_ATTRIBUTE_{ident}", None)
        if aid is None:
            raise ValueError(
                f"launch option {name}: this CUDA driver binding has no CU_LAUNCH_ATTRIBUTE_{ident} "
                "(a newer CUDA is needed)"
            )
        a = d.CUlaunchAttribute()
        a.id = aid
        slot = getattr(a.value, member)
        kind = dict(TOP_FIELDS)[name]
        if kind == "dim3":
            slot.x, slot.y, slot.z = (int(x) for x in v)
        elif kind in COMPOSITES:
            for m, mk, default, _e in COMPOSITES[kind]:
                x = v.get(m, default)
                if mk == "handle":
                    x = _handle(d, m, x)
                elif mk == "float":
                    x = float(x)
                elif m in ("hit_prop", "miss_prop"):
                    x = getattr(d.CUaccessProperty, _ACCESS[int(x)])
                else:
                    x = int(x)
                setattr(slot, _MEMBERS[m], x)
        elif name in _ENUM_TYPES:
            setattr(a.value, member, getattr(d, _ENUM_TYPES[name])(int(v)))
        else:
            setattr(a.value, member, int(v))
        attrs.append(a)
    return attrs


def check_grid_fits(d: Any, fn: Any, grid: Any, block: Any, smem: int, device: int) -> None:
    """ValueError unless the whole grid can be resident at once (a cooperative launch's rule):
    blocks per SM (the occupancy calculator, for this block size and shared memory) times SMs."""
    threads = math.prod(block)
    r = d.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, threads, smem)
    if int(r[0]) != 0:
        raise RuntimeError(f"cuOccupancyMaxActiveBlocksPerMultiprocessor failed: {r[0]}")
    per_sm = int(r[1])
    r = d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device)
    if int(r[0]) != 0:
        raise RuntimeError(f"cuDeviceGetAttribute(MULTIPROCESSOR_COUNT) failed: {r[0]}")
    sms = int(r[1])
    r = d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, device)
    if int(r[0]) == 0 and not int(r[1]):
        raise ValueError(f"device {device} does not support cooperative launches (grid-wide barriers)")
    blocks = math.prod(grid)
    if blocks > per_sm * sms:
        raise ValueError(
            f"a cooperative launch (a grid-wide barrier) needs every block resident at once: grid {list(grid)} has "
            f"{blocks} blocks, but at most {per_sm} blocks of {threads} threads"
            f"{f' and {smem} bytes of dynamic shared memory' if smem else ''} fit per SM x {sms} SMs = {per_sm * sms}"
        )


def launch(d: Any, fn: Any, grid: Any, block: Any, smem: int, stream: Any, params: Any, opts: dict,
           cluster: Any = None, cooperative: bool = False, device: int = 0) -> Any:  # fmt: skip
    """``cuLaunchKernelEx`` with the launch's attributes (after the residency check when
    cooperative); returns the driver's result tuple, as ``cuLaunchKernel`` does."""
    if cooperative:
        check_grid_fits(d, fn, grid, block, smem, device)
    cfg = d.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = (int(x) for x in grid)
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = (int(x) for x in block)
    cfg.sharedMemBytes = int(smem)
    cfg.hStream = stream
    attrs = launch_attributes(d, opts, cluster, cooperative)
    cfg.attrs = attrs
    cfg.numAttrs = len(attrs)
    return d.cuLaunchKernelEx(cfg, fn, params, 0)
