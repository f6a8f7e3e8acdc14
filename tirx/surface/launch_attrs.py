"""TIRx's CUDA launch attributes: ``T.cuda.AccessPolicyWindow``, ``T.cuda.ProgrammaticEvent``,
``T.cuda.LaunchCompletionEvent``, ``T.cuda.MemSyncDomainMap`` and the launch options of
``T.cuda.LaunchConfig`` beyond the shape (``cooperative=``, ``priority=``, ``stream=``, ...).

They are launch values of the device entry, packed as TIRx packs them (one value per leaf, in
the order of ``tirx.ir.launch_fields``): ``LaunchConfig(grid=4, block=32, cooperative=True)``
prints as ``T.device_entry(4, 1, 1, 32, 1, 1, 1, attrs={"cuda.launch_fields": [..., "cooperative"]})``.
Booleans and enum names become integers, ratios float32, pointers/events/streams stay handles.
The runtime turns them into ``cuLaunchKernelEx`` attributes (``tirx.runtime.launch_attrs``).
"""

from __future__ import annotations

import math
from typing import Any

from ..ir import IntImm, PrimExpr, convert
from ..ir.launch_fields import COMPOSITES, ENUMS, TOP_FIELDS
from ..ir.node import Attrs
from ..ir.types import PointerType, PrimType

__all__ = [
    "EXTRA_FIELDS",
    "AccessPolicyWindow",
    "LaunchCompletionEvent",
    "MemSyncDomainMap",
    "ProgrammaticEvent",
    "pack_launch",
]

_TOP = dict(TOP_FIELDS)
#: the LaunchConfig keywords beyond grid, block, cluster and dynamic_smem_bytes
EXTRA_FIELDS = tuple(n for n, _k in TOP_FIELDS if n not in ("grid", "block", "cluster", "dynamic_smem_bytes"))
_ENUM_OF = {"cluster_scheduling_policy": "cluster_scheduling_policy", "mem_sync_domain": "mem_sync_domain",
            "portable_cluster_size_mode": "portable_cluster_size_mode", "shared_memory_mode": "shared_memory_mode"}  # fmt: skip
_RANGES = {
    "MemSyncDomainMap": (("default", 0, 255), ("remote", 0, 255)),
    "AccessPolicyWindow": (("num_bytes", 0, 2**63 - 1),),
    "ProgrammaticEvent": (("flags", 0, 0),),
    "LaunchCompletionEvent": (("flags", 0, 0),),
}


def _const(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, IntImm):
        return v.value
    return None


def _scalar(value: Any, kind: str, enum: str | None, name: str) -> PrimExpr:
    """One launch value as the IR holds it (TIRx's normalization)."""
    conv = getattr(value, "__tirx_expr__", None)
    if conv is not None:
        value = conv()
    if kind == "enum" and isinstance(value, str):
        assert enum is not None  # every enum field names its enum
        table = dict(ENUMS[enum])
        if value not in table:
            raise ValueError(f"{name}: expected one of {tuple(table)}, got {value!r}")
        return convert(table[value])
    if kind == "handle":
        data = getattr(value, "data", None)
        if not isinstance(value, PrimExpr) and isinstance(data, PrimExpr):
            value = data  # a buffer: its data pointer
        if not (isinstance(value, PrimExpr) and isinstance(value.ty, PointerType)):
            raise TypeError(f"{name} must be a pointer or handle expression, got {value!r}")
        return value
    if kind == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise ValueError(f"{name} must be finite")
            return convert(float(value))
        if isinstance(value, PrimExpr) and isinstance(value.ty, PrimType) and value.ty.is_float:
            return value
        raise TypeError(f"{name} must be a float, got {value!r}")
    if isinstance(value, bool) and kind != "bool":
        raise TypeError(f"{name} expects {kind}, not bool")
    c = _const(value)
    if c is not None:
        if kind == "bool" and c not in (0, 1):
            raise ValueError(f"{name} must be a boolean")
        if kind == "enum":
            assert enum is not None  # every enum field names its enum
            if c not in dict(ENUMS[enum]).values():
                raise ValueError(f"{name}: invalid enum value {c}")
        return convert(c)
    t = value.ty if isinstance(value, PrimExpr) else None
    if isinstance(t, PrimType) and t.lanes == 1 and (t.is_int or (kind == "bool" and t.is_bool)):
        return value
    raise TypeError(f"{name} must be a scalar {kind} value, got {value!r}")


class _Composite:
    """A frozen, keyword-only launch value record (TIRx's ``Config`` records)."""

    _members: tuple = ()
    __slots__ = ()

    def __init__(self, **kw: Any):
        cls = type(self).__name__
        names = [m[0] for m in self._members]
        bad = set(kw) - set(names)
        if bad:
            raise TypeError(f"T.cuda.{cls} got unexpected keyword argument(s) {sorted(bad)}")
        for m, kind, default, enum in self._members:
            v = kw.get(m, default)
            if isinstance(v, str) and v == "required" and m not in kw:
                raise ValueError(f"T.cuda.{cls}.{m} is required")
            _scalar(v, kind, enum, f"T.cuda.{cls}.{m}")  # validate now, as TIRx does
            object.__setattr__(self, m, v)
        for m, lo, hi in _RANGES.get(cls, ()):
            c = _const(getattr(self, m))
            if c is not None and not lo <= c <= hi:
                raise ValueError(f"T.cuda.{cls}.{m} must be between {lo} and {hi}")
        hr = getattr(self, "hit_ratio", None)
        if isinstance(hr, (int, float)) and not 0 <= hr <= 1:
            raise ValueError(f"T.cuda.{cls}.hit_ratio must be between 0 and 1")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"T.cuda.{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        inner = ", ".join(f"{m[0]}={getattr(self, m[0])!r}" for m in self._members)
        return f"T.cuda.{type(self).__name__}({inner})"

    def leaves(self, prefix: str) -> list:
        """(field name, IR value) of every member, in order."""
        return [
            (f"{prefix}.{m}", _scalar(getattr(self, m), kind, enum, f"{prefix}.{m}"))
            for m, kind, _d, enum in self._members
        ]


def _composite(name: str, doc: str) -> type:
    members = COMPOSITES[name]
    return type(name, (_Composite,), {"__doc__": doc, "_members": members,
                                      "__slots__": tuple(m[0] for m in members)})  # fmt: skip


MemSyncDomainMap = _composite(
    "MemSyncDomainMap",
    "``T.cuda.MemSyncDomainMap(default=0, remote=1)``: logical to physical memory sync domains.",
)
AccessPolicyWindow = _composite(
    "AccessPolicyWindow",
    "``T.cuda.AccessPolicyWindow(base_ptr=, num_bytes=, hit_ratio=1.0, hit_prop='persisting', "
    "miss_prop='normal')``: a per-launch L2 persistence window.",
)
ProgrammaticEvent = _composite(
    "ProgrammaticEvent",
    "``T.cuda.ProgrammaticEvent(event=, flags=0, trigger_at_block_start=False)``: record a programmatic "
    "dependency event (a caller-owned, timing-disabled CUDA event).",
)
LaunchCompletionEvent = _composite(
    "LaunchCompletionEvent",
    "``T.cuda.LaunchCompletionEvent(event=, flags=0)``: record an event when the launch's blocks have begun.",
)
CLASSES = {
    c.__name__: c for c in (MemSyncDomainMap, AccessPolicyWindow, ProgrammaticEvent, LaunchCompletionEvent)
}


def check_extra(extra: dict) -> dict:
    """Validate ``T.cuda.LaunchConfig``'s extra keywords (the ones TIRx has beyond the shape)."""
    bad = set(extra) - set(EXTRA_FIELDS)
    if bad:
        raise TypeError(f"T.cuda.LaunchConfig got unexpected keyword argument(s) {sorted(bad)}")
    out = {}
    for k, v in extra.items():
        if v is None:
            continue
        kind = _TOP[k]
        if kind in CLASSES and not isinstance(v, CLASSES[kind]):
            raise TypeError(f"T.cuda.LaunchConfig: {k} must be a T.cuda.{kind}, got {v!r}")
        if kind == "dim3":
            v = tuple(v) if isinstance(v, (list, tuple)) else (v,)
            if not 1 <= len(v) <= 3:
                raise ValueError(f"T.cuda.LaunchConfig: {k} takes 1 to 3 dimensions, got {len(v)}")
        elif kind not in CLASSES:
            _scalar(v, kind, _ENUM_OF.get(k), f"T.cuda.LaunchConfig.{k}")  # checked now, as TIRx does
        out[k] = v
    return out


def pack_launch(grid: Any, block: Any, cluster: Any, dynamic_smem_bytes: Any, extra: dict) -> tuple:
    """(values, attrs) of a device entry for a launch with TIRx's extra fields, in TIRx's order."""
    given = {
        "grid": grid,
        "block": block,
        "cluster": cluster,
        "dynamic_smem_bytes": dynamic_smem_bytes,
        **extra,
    }
    fields: list = []  # (a preferred cluster needs a cluster: LaunchConfig checked it)
    values: list = []
    for name, kind in TOP_FIELDS:
        v = given.get(name)
        if v is None:
            continue
        if kind == "dim3":
            dims = list(v) if isinstance(v, (list, tuple)) else [v]
            if not 1 <= len(dims) <= 3:
                raise ValueError(f"LaunchConfig.{name} takes 1 to 3 dimensions, got {len(dims)}")
            for ax, d in zip("xyz", dims + [1] * (3 - len(dims))):
                fields.append(f"{name}.{ax}")
                values.append(_scalar(d, "int", None, f"LaunchConfig.{name}"))
        elif kind in CLASSES:
            for f, e in v.leaves(name):
                fields.append(f)
                values.append(e)
        else:
            fields.append(name)
            values.append(_scalar(v, kind, _ENUM_OF.get(name), f"LaunchConfig.{name}"))
    return tuple(values), Attrs({"cuda.kernel_attrs": {}, "cuda.launch_fields": fields})
