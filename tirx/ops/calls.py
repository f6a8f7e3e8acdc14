"""TIRx's calls of functions outside the kernel language: TVM packed functions
(``call_packed``, ``call_cpacked`` and their lowered forms), LLVM intrinsics
(``call_llvm_intrin``, ``call_llvm_pure_intrin``) and SPIR-V GLSL.std.450 instructions
(``call_spirv_pure_glsl450``).

They belong to TVM's host runtime and its LLVM/SPIR-V backends: here they resolve, build,
print and round-trip, and CUDA codegen gives a located "not supported by the CUDA backend"
error naming them (``T.call_extern`` is the CUDA way to call a C function)."""

from __future__ import annotations

from ..ir.op import NoInterp, declare
from ..ir.types import int32
from .gpu_generic import not_on_cuda

__all__: list[str] = []

_PACKED = "a TVM packed-function call of the host runtime; use T.call_extern for a CUDA function"
_NO = NoInterp("it calls code outside the kernel")

for _n, _d in (
    ("call_packed", "call a TVM packed function by name (arguments packed; result int32 unless ty=)"),
    ("call_cpacked", "call a C packed function by name; the last argument is the resource handle"),
    ("call_packed_lowered", "call_packed after TVM's lowering (arguments on the stack)"),
    ("call_cpacked_lowered", "call_cpacked after TVM's lowering (arguments on the stack)"),
):
    declare(
        _n, "s *x?", lambda a: int32, pure=False, own_literals=True, typed_by_binding=True, doc=_d,
        cuda=not_on_cuda(_PACKED), interp=_NO,
    )  # fmt: skip

declare(
    "call_llvm_intrin", "s *x?", "ty", pure=False, own_literals=True,
    doc="call an LLVM intrinsic by name (llvm.sqrt, ...)",
    cuda=not_on_cuda("an LLVM intrinsic"), interp=_NO,
)  # fmt: skip
declare(
    "call_llvm_pure_intrin", "s *x?", "ty", own_literals=True,
    doc="call a side-effect-free LLVM intrinsic by name",
    cuda=not_on_cuda("an LLVM intrinsic"), interp=_NO,
)  # fmt: skip
declare(
    "call_spirv_pure_glsl450", "n *x?", "ty", own_literals=True,
    doc="a SPIR-V GLSL.std.450 extended instruction by number (31 is Sqrt)",
    cuda=not_on_cuda("a SPIR-V instruction"), interp=_NO,
)  # fmt: skip
