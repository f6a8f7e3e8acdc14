"""``T.cuda.LaunchConfig`` / ``T.cuda.KernelAttributes`` and the keywords of ``T.device_entry``
that spell a launch (``launch=``, ``grid=``, ``block=``, ``cluster=``, ``dynamic_smem_bytes=``,
``kernel_attrs=``, ``backend_config=``). Both front ends normalize them here into the form's
launch values and ``attrs=`` (the one spelling the IR and the printed text have), so a kernel
written in the frontend's syntax loads as text to the same IR."""

from __future__ import annotations

import builtins as _builtins
from typing import Any

from ..ir import IntImm as _IntImm
from ..ir.node import Attrs as _Attrs
from .builder import launch_args as _launch_args

__all__ = ["LAUNCH_CLASSES", "KernelAttributes", "LaunchConfig", "entry_launch"]

#: the keywords of ``T.device_entry`` that spell a launch (beside the form's own ``attrs=``)
LAUNCH_KEYWORDS = (
    "launch",
    "grid",
    "block",
    "cluster",
    "dynamic_smem_bytes",
    "kernel_attrs",
    "backend_config",
)


class LaunchConfig:
    """``T.cuda.LaunchConfig(grid=, block=, cluster=, dynamic_smem_bytes=, **launch options)``; the
    options TIRx has beyond the shape (``cooperative=``, ``priority=``, ``access_policy_window=``,
    ...) are checked and packed by ``tirx.surface.launch_attrs``."""

    __slots__ = ("block", "cluster", "dynamic_smem_bytes", "extra", "grid")

    def __init__(self, grid: Any, block: Any, cluster: Any = None, dynamic_smem_bytes: Any = None,
                 **options: Any):  # fmt: skip
        # (grid and block are required, as TIRx requires them)
        from .launch_attrs import check_extra

        _check_shape(grid, block, cluster, dynamic_smem_bytes, options.get("preferred_cluster"))
        self.grid = grid
        self.block = block
        self.cluster = cluster
        self.dynamic_smem_bytes = dynamic_smem_bytes
        self.extra = check_extra(options)


def _consts(v: Any) -> list[int | None]:
    """The constant entries of a launch value (one value, or a tuple / list of up to three);
    symbolic entries are checked by the launch."""
    out: list[int | None] = []
    for x in v if isinstance(v, (tuple, list)) else (v,):
        if isinstance(x, _IntImm):
            x = x.value
        if type(x) is _builtins.int:
            out.append(x)
        else:
            out.append(None)
    return out


def _check_shape(grid: Any, block: Any, cluster: Any, smem: Any, preferred: Any = None) -> None:
    """What TIRx's ``LaunchConfig`` refuses when it is constructed, where the values are
    constants: a grid, block or cluster of other than one to three dimensions, an extent below
    1 or past uint32, a block of more than 1024 threads, a grid not divisible by the cluster (or
    the preferred cluster, which needs a cluster) in every dimension, dynamic shared memory
    outside uint32."""
    for name, v in (("grid", grid), ("block", block), ("cluster", cluster), ("preferred_cluster", preferred)):
        if isinstance(v, (tuple, list)) and not 1 <= len(v) <= 3:
            raise ValueError(f"T.cuda.LaunchConfig: {name} expects one to three dimensions, got {len(v)}")
    if preferred is not None and cluster is None:
        raise ValueError("T.cuda.LaunchConfig: preferred_cluster requires an explicit cluster")
    g, b = _consts(grid), _consts(block)
    for name, dims in (("grid", g), ("block", b)):
        if any(d is not None and not 1 <= d < 1 << 32 for d in dims):
            raise ValueError(
                f"T.cuda.LaunchConfig: {name} dimensions must be positive uint32 values, got {dims}"
            )
    if all(d is not None for d in b):
        n = 1
        for d in b:
            n *= d or 1
        if n > 1024:
            raise ValueError(f"T.cuda.LaunchConfig: a block holds at most 1024 threads, got {b} ({n})")
    for name, v in (("cluster", cluster), ("preferred_cluster", preferred)):
        if v is None:
            continue
        c = _consts(v)
        if any(d is not None and not 1 <= d < 1 << 32 for d in c):
            raise ValueError(
                f"T.cuda.LaunchConfig: {name} dimensions must be positive uint32 values, got {c}"
            )
        for i, d in enumerate(c):
            gi = g[i] if i < len(g) else 1
            if d is not None and gi is not None and gi % d:
                raise ValueError(
                    f"T.cuda.LaunchConfig: the grid must be divisible by {name} in every dimension, "
                    f"got grid {g} and {name} {c}"
                )
    s = _consts(smem)[0] if smem is not None else None
    if s is not None and not 0 <= s < 1 << 32:
        raise ValueError(f"T.cuda.LaunchConfig: dynamic_smem_bytes must be between 0 and 4294967295, got {s}")


class KernelAttributes:
    """``T.cuda.KernelAttributes(min_blocks_per_sm=, max_blocks_per_cluster=,
    max_registers_per_thread=, required_block_size=)``: compile-time attributes of a kernel,
    given as ``T.device_entry(..., kernel_attrs=...)``. They become the device entry's
    ``attrs["cuda.kernel_attrs"]``, spelled as TIRx prints them (``required_block_size=True``
    adds the block and cluster shape as ``required_block_x``, ...)."""

    __slots__ = (
        "max_blocks_per_cluster",
        "max_registers_per_thread",
        "min_blocks_per_sm",
        "required_block_size",
    )

    def __init__(self, *, min_blocks_per_sm: Any = None, max_blocks_per_cluster: Any = None,
                 max_registers_per_thread: Any = None, required_block_size: Any = False):  # fmt: skip
        # a kernel body hands literals over as IR constants: take their values
        min_blocks_per_sm, max_blocks_per_cluster, max_registers_per_thread, required_block_size = (
            v.value if isinstance(v, _IntImm) else v
            for v in (
                min_blocks_per_sm,
                max_blocks_per_cluster,
                max_registers_per_thread,
                required_block_size,
            )
        )
        if type(required_block_size) is _builtins.int and required_block_size in (0, 1):
            required_block_size = _builtins.bool(required_block_size)
        for name, v in (("min_blocks_per_sm", min_blocks_per_sm), ("max_blocks_per_cluster", max_blocks_per_cluster),
                        ("max_registers_per_thread", max_registers_per_thread)):  # fmt: skip
            if v is not None and (type(v) is not _builtins.int or v < 1):
                raise ValueError(f"T.cuda.KernelAttributes: {name} must be a positive int, got {v!r}")
        if type(required_block_size) is not _builtins.bool:
            raise TypeError(
                f"T.cuda.KernelAttributes: required_block_size must be a bool, got {required_block_size!r}"
            )
        if max_registers_per_thread is not None and (min_blocks_per_sm is not None or required_block_size):
            raise ValueError(
                "T.cuda.KernelAttributes: max_registers_per_thread conflicts with min_blocks_per_sm and "
                "required_block_size (launch bounds decide the register budget)"
            )
        self.min_blocks_per_sm = min_blocks_per_sm
        self.max_blocks_per_cluster = max_blocks_per_cluster
        self.max_registers_per_thread = max_registers_per_thread
        self.required_block_size = required_block_size

    def to_attrs(self, block: tuple, cluster: tuple) -> dict:
        """The ``cuda.kernel_attrs`` dict (keys sorted, as TIRx prints them)."""
        d: dict = {}
        for k in ("max_blocks_per_cluster", "max_registers_per_thread", "min_blocks_per_sm"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        d["required_block_size"] = int(self.required_block_size)
        if self.required_block_size:
            for ax, b, c in zip("xyz", block, cluster):
                d[f"required_block_{ax}"] = b.value if isinstance(b, _IntImm) else b
                d[f"required_cluster_{ax}"] = c.value if isinstance(c, _IntImm) else c
        return dict(sorted(d.items()))


def entry_launch(values: tuple, kw: dict, *, launch: LaunchConfig | None = None, grid: Any = None,
                 block: Any = None, cluster: Any = None, dynamic_smem_bytes: Any = None,
                 kernel_attrs: KernelAttributes | None = None, backend_config: Any = None) -> tuple[tuple, dict]:  # fmt: skip
    """``(values, kw)`` of the device-entry form for ``T.device_entry(*values, launch=..., ...,
    **kw)``: the launch spelled as positional values and ``attrs["cuda.launch_fields"]``."""
    config = None
    if backend_config is not None:
        from tirx.target_spec import backend_config_json

        if "backend_config" in (kw.get("attrs") or {}):
            raise ValueError("T.device_entry: backend_config cannot duplicate canonical attrs")
        config = backend_config_json(backend_config)
        one_config = len(values) == 1 and isinstance(values[0], LaunchConfig)
        positional = launch is None and grid is None and not one_config
        if positional and values and not kw.get("attrs"):  # TIRx refuses launch values without launch fields
            raise ValueError(
                "T.device_entry: launch values given with backend_config= need their fields: "
                "launch=T.cuda.LaunchConfig(...) or attrs={'cuda.launch_fields': [...]}"
            )
    if launch is not None and not isinstance(launch, LaunchConfig):
        raise TypeError(f"T.device_entry: launch must be a T.cuda.LaunchConfig, got {launch!r}")
    if launch is None and grid is not None:
        launch = LaunchConfig(grid, 1 if block is None else block, cluster, dynamic_smem_bytes)
    if launch is None and len(values) == 1 and isinstance(values[0], LaunchConfig):
        launch, values = values[0], ()
    if launch is not None:
        if values:
            raise TypeError("T.device_entry: give either launch=... or positional launch values")
        if launch.extra:  # TIRx's launch options: packed in its field order (tirx/ir/launch_fields.py)
            from .launch_attrs import pack_launch

            values, at = pack_launch(launch.grid, launch.block, launch.cluster, launch.dynamic_smem_bytes,
                                     launch.extra)  # fmt: skip
        else:
            values, at = _launch_args(launch.grid, launch.block, launch.cluster, launch.dynamic_smem_bytes)
        attrs = kw.get("attrs")
        kw = {**kw, "attrs": _Attrs({**at.to_dict(), **dict(attrs)}) if attrs else at}
    if kernel_attrs is not None:
        if not isinstance(kernel_attrs, KernelAttributes):
            raise TypeError(
                f"T.device_entry: kernel_attrs must be a T.cuda.KernelAttributes, got {kernel_attrs!r}"
            )
        at = dict(kw.get("attrs") or {})
        if "cuda.launch_fields" not in at:
            raise TypeError(
                "T.device_entry: kernel_attrs= needs the launch given as launch=T.cuda.LaunchConfig(...)"
            )
        vals = dict(zip(at["cuda.launch_fields"], values))
        dims = {g: tuple(vals.get(f"{g}.{ax}", 1) for ax in "xyz") for g in ("block", "cluster")}
        at["cuda.kernel_attrs"] = {**dict(at.get("cuda.kernel_attrs") or {}),
                                   **kernel_attrs.to_attrs(dims["block"], dims["cluster"])}  # fmt: skip
        kw = {**kw, "attrs": _Attrs(at)}
    if config is not None:
        at = {**dict(kw.get("attrs") or {}), "backend_config": config}
        kw = {**kw, "attrs": _Attrs(dict(sorted(at.items())))}  # TIRx's attrs print sorted by key
    return values, kw


def _classes() -> dict[str, type]:
    from . import launch_attrs as la

    return {
        "LaunchConfig": LaunchConfig,
        "KernelAttributes": KernelAttributes,
        "AccessPolicyWindow": la.AccessPolicyWindow,
        "LaunchCompletionEvent": la.LaunchCompletionEvent,
        "MemSyncDomainMap": la.MemSyncDomainMap,
        "ProgrammaticEvent": la.ProgrammaticEvent,
    }


#: the ``T.cuda`` classes that spell a launch, by name: members of the frontend's ``T.cuda`` and
#: calls the text parser builds (tirx's own constructors over the parsed values: no user code)
LAUNCH_CLASSES: dict[str, type] = _classes()
