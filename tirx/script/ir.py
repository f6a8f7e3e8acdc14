"""The ``I`` namespace: ``from tirx.script import ir as I`` (``@I.ir_module``), as TIRx spells it.

Besides ``I.ir_module``, TIRx's ``I`` carries the module-level names it shares with ``T``
(``I.dynamic``, ``I.module_attrs``, ``I.StringImm``, ``I.StringType``, ...): here they are
``T``'s own objects (``I.dynamic is T.dynamic``), resolved on first use.
"""

from __future__ import annotations

from typing import Any

from .decorators import ir_module

#: TIRx's ``I`` members that are ``T``'s (tvm_tirx.script.ir, 0.1.0a4)
_FROM_T = frozenset({
    "AlreadyEmitted", "Any", "Bind", "Call", "DataTypeImm", "Func", "FuncType", "GenericConst", "IRBuilder",
    "IRModuleFrame", "Lambda", "MISSING", "Missing", "MissingType", "NoneType", "Op", "Opaque", "Prim",
    "PrimType", "Ptr", "Range", "String", "StringImm", "StringType", "TensorRegion", "TensorRegionType", "Tuple",
    "Type", "Var", "at_", "constexpr", "decl_function", "dtype", "dynamic", "make_node", "meta_var",
    "module_attrs", "module_get_attr", "module_global_infos", "module_member_", "module_set_attr", "pyfunc",
    "resolve_global_info_", "resolve_global_info_args", "with_at_group_",
})  # fmt: skip

__all__ = ["ir_module", *sorted(_FROM_T)]


def __getattr__(name: str) -> Any:
    if name in _FROM_T:
        from . import tirx as _T

        v = getattr(_T, name)
        globals()[name] = v
        return v
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return list(__all__)
