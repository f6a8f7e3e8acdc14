"""TIRx's host-runtime ops: stack scratch (``stack_alloca``, ``stack_make_shape``,
``stack_make_dltensor``), device workspace (``alloc_workspace``, ``free_workspace``), fields
of runtime ABI structs (``abi_field_get``/``abi_field_set``), ``throw_last_error`` and the
CPU worker barrier ``cpu_parallel_barrier``.

They run in TVM's host code, which tirx does not generate: they resolve, build, print and
round-trip, and CUDA codegen gives a located "not supported by the CUDA backend" error naming
them."""

from __future__ import annotations

from typing import Any

from ..ir.expr import StringImm
from ..ir.op import NoInterp, declare
from ..ir.types import PointerType, int32, int64, tensormap_ptr, void
from .gpu_generic import HANDLE, not_on_cuda

__all__: list[str] = []

_HOST = not_on_cuda("a host-runtime op; tirx generates device code only")
_NO = NoInterp("a host-runtime op")


def _alloca_type(args: tuple) -> Any:
    """TVM's stack arrays: ``shape`` holds int64s, ``arg_tcode`` int32 type codes, ``tensormap``
    is a TMA descriptor (TIRx's ``T.Ptr(T.TensorMap())``), the others (``array``,
    ``arg_value``, a dtype name) are untyped."""
    k = args[0].value if isinstance(args[0], StringImm) else ""
    return _ALLOCA_TYPES.get(k, HANDLE)


_ALLOCA_TYPES = {
    "shape": PointerType(int64),
    "arg_tcode": PointerType(int32),
    "tensormap": tensormap_ptr,
}


def _alloca_host(call: Any, a: list) -> str:
    """A TMA descriptor's storage on the host (``tirx.runtime.tma.new_descriptor``): the one
    kind tirx's host code has (TIRx's host-encoded ``__grid_constant__`` tensor maps)."""
    kind, num = call.args
    if isinstance(kind, StringImm) and kind.value == "tensormap" and getattr(num, "value", None) == 1:
        return "_tmap_alloc()"
    what = kind.value if isinstance(kind, StringImm) else "?"
    raise ValueError(
        f"T.stack_alloca({what!r}, ...) cannot run in tirx's host code: the host holds only TMA "
        f"descriptors there (T.stack_alloca(\"tensormap\", 1)); TVM's runtime arrays are TIRx's host ABI"
    )


declare(
    "stack_alloca", "s i", _alloca_type, pure=False, params="dtype_str num",
    doc="a stack array of num entries of a runtime kind (shape, array, arg_value, arg_tcode, tensormap)",
    cuda=_HOST, interp=_NO, host=_alloca_host,
)  # fmt: skip
declare(
    "stack_make_shape", "*i", PointerType(int64), pure=False,
    doc="a shape tuple (int64s) on the stack", cuda=_HOST, interp=_NO,
)  # fmt: skip
declare(
    "stack_make_dltensor", "p x x i x i", HANDLE, pure=False, own_literals=True,
    params="data shape strides ndim arr_dtype elem_offset",
    doc="a DLTensor on the stack (strides 0 when compact; arr_dtype a value of the element dtype)",
    cuda=_HOST, interp=_NO,
)  # fmt: skip
declare(
    "alloc_workspace", "i i i i i", HANDLE, pure=False,
    params="device_type device_id nbytes dtype_code_hint dtype_bits_hint",
    doc="allocate temporary device workspace (TVM's backend allocator)", cuda=_HOST, interp=_NO,
)  # fmt: skip
declare(
    "free_workspace", "i i p", int32, pure=False, params="device_type device_id ptr",
    doc="free workspace from alloc_workspace (0 on success)", cuda=_HOST, interp=_NO,
)  # fmt: skip
declare(
    "abi_field_get", "p i i", "ty", params="arr index field",
    doc="a field of the index-th runtime ABI struct of an array (ty= its type)", cuda=_HOST, interp=_NO,
)  # fmt: skip
declare(
    "abi_field_set", "p i i x", int32, pure=False, params="arr index field value",
    doc="set a field of the index-th runtime ABI struct of an array", cuda=_HOST, interp=_NO,
)  # fmt: skip
declare(
    "throw_last_error", "", void, pure=False, doc="raise the runtime's last error (TVMGetLastError)",
    cuda=_HOST, interp=_NO,
)  # fmt: skip
declare(
    "cpu_parallel_barrier", "", void, pure=False,
    doc="a barrier of all CPU workers of a parallel launch", cuda=not_on_cuda("a CPU worker barrier"),
    interp=NoInterp("CPU parallel launches are not modelled"),
)  # fmt: skip
