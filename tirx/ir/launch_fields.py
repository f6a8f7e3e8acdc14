"""The launch fields a device entry may carry, in TIRx's order: one table for the IR check
(``DeviceEntry``), the script's ``T.cuda.LaunchConfig`` packing (tirx/surface/launch_attrs.py) and
the runtime's ``cuLaunchKernelEx`` attributes (tirx/runtime/launch_attrs.py).

A device entry's values are named by ``attrs["cuda.launch_fields"]``: ``grid.x`` ...,
``cooperative``, ``access_policy_window.hit_ratio`` .... Each leaf has a kind: ``int`` (an
integer expression; ``bool`` and ``enum`` values are integers too), ``float`` (a float
expression) or ``handle`` (a host pointer: a device pointer, a stream, an event).
"""

from __future__ import annotations

__all__ = ["COMPOSITES", "ENUMS", "FIELD_KINDS", "LAUNCH_FIELDS", "TOP_FIELDS"]

#: enum choices (name -> CUDA value), as TIRx takes them by name
ENUMS = {
    "cluster_scheduling_policy": (("default", 0), ("spread", 1), ("load_balancing", 2)),
    "mem_sync_domain": (("default", 0), ("remote", 1)),
    "access_property": (("normal", 0), ("streaming", 1), ("persisting", 2)),
    "portable_cluster_size_mode": (("default", 0), ("require_portable", 1), ("allow_non_portable", 2)),
    "shared_memory_mode": (("default", 0), ("require_portable", 1), ("allow_non_portable", 2),
                           ("allow_oversized", 3), ("prefer_oversized", 4)),
}  # fmt: skip

#: the composite launch values: (member, kind, default, enum table or None); "required" defaults
COMPOSITES = {
    "MemSyncDomainMap": (("default", "int", 0, None), ("remote", "int", 1, None)),
    "AccessPolicyWindow": (
        ("base_ptr", "handle", "required", None),
        ("num_bytes", "int", "required", None),
        ("hit_ratio", "float", 1.0, None),
        ("hit_prop", "enum", "persisting", "access_property"),
        ("miss_prop", "enum", "normal", "access_property"),
    ),
    "ProgrammaticEvent": (
        ("event", "handle", "required", None),
        ("flags", "int", 0, None),
        ("trigger_at_block_start", "bool", False, None),
    ),
    "LaunchCompletionEvent": (("event", "handle", "required", None), ("flags", "int", 0, None)),
}

#: ``T.cuda.LaunchConfig`` fields in order: (name, kind) where kind is "dim3", "int", "bool",
#: "enum", "handle" or a composite's class name
TOP_FIELDS = (
    ("grid", "dim3"), ("block", "dim3"), ("cluster", "dim3"), ("preferred_cluster", "dim3"),
    ("dynamic_smem_bytes", "int"), ("stream", "handle"), ("cooperative", "bool"),
    ("programmatic_stream_serialization", "bool"), ("cluster_scheduling_policy", "enum"),
    ("priority", "int"), ("mem_sync_domain", "enum"), ("mem_sync_domain_map", "MemSyncDomainMap"),
    ("access_policy_window", "AccessPolicyWindow"), ("preferred_shared_memory_carveout", "int"),
    ("nvlink_util_centric_scheduling", "bool"), ("portable_cluster_size_mode", "enum"),
    ("shared_memory_mode", "enum"), ("programmatic_event", "ProgrammaticEvent"),
    ("launch_completion_event", "LaunchCompletionEvent"),
)  # fmt: skip


def _leaves() -> dict:
    out: dict = {}
    for name, kind in TOP_FIELDS:
        if kind == "dim3":
            for ax in "xyz":
                out[f"{name}.{ax}"] = "int"
        elif kind in COMPOSITES:
            for m, k, _d, _e in COMPOSITES[kind]:
                out[f"{name}.{m}"] = "float" if k == "float" else ("handle" if k == "handle" else "int")
        else:
            out[name] = "handle" if kind == "handle" else "int"
    return out


#: every leaf field name -> "int" | "float" | "handle"
FIELD_KINDS: dict = _leaves()
#: every leaf field name, in TIRx's packing order
LAUNCH_FIELDS: tuple = tuple(FIELD_KINDS)
