"""Script-only TIRx spellings that build IR of other names (they are not ops: the IR, and
so the printed text, holds what they build):

- ``T.tensor_data_ptr(A)``: the buffer's data pointer, ``A.data`` (TIRx prints it so);
- ``T.call_intrin("tirx.undef", *args, ty=...)``: a call of the op named by a string;
- ``T.llvm_lookup_intrinsic_id(name)``: needs LLVM's intrinsic table; refused by name.
"""

from __future__ import annotations

from typing import Any

from ..ir import op as _op

__all__ = ["call_intrin", "llvm_lookup_intrinsic_id", "tensor_data_ptr"]


def _e(x: Any) -> Any:
    conv = getattr(x, "__tirx_expr__", None)
    return conv() if conv is not None else x


def tensor_data_ptr(tensor: Any, *, ty: Any = None) -> Any:
    """The data pointer of a buffer (``tensor.data``)."""
    data = getattr(tensor, "data", None)
    if data is None or not hasattr(tensor, "shape"):
        raise TypeError(f"T.tensor_data_ptr: tensor must be a buffer, got {tensor!r}")
    if ty is not None:
        return _op.call("reinterpret", data, ty=ty)
    return data


def call_intrin(func_name: str, *args: Any, ty: Any = None, span: Any = None) -> Any:
    """A call of the op ``func_name`` (TIRx's registry names ``"tirx.<op>"`` and
    ``"prim.<op>"``, or the script name ``"<op>"``) with an explicit result type."""
    if not isinstance(func_name, str):
        raise TypeError(f"T.call_intrin: func_name must be a string, got {func_name!r}")
    name = func_name.removeprefix("tirx.")
    if _op.lookup(name) is None and name.startswith("prim."):
        name = name.removeprefix("prim.")  # TIRx's math ops: prim.exp, prim.sqrt, ...
    if _op.lookup(name) is None:
        raise ValueError(f"T.call_intrin: no op named {func_name!r}")
    return _op.call(name, *(_e(a) for a in args), ty=ty, span=span)


def llvm_lookup_intrinsic_id(name: str) -> Any:
    """LLVM's number of an intrinsic: tirx has no LLVM backend, so none is known."""
    raise NotImplementedError(
        f"T.llvm_lookup_intrinsic_id({name!r}) needs LLVM's intrinsic table, which tirx does not have "
        "(tirx targets CUDA); call the intrinsic by name: T.call_llvm_pure_intrin(name, ..., ty=...)"
    )
