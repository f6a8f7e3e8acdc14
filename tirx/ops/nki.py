"""TIRx's AWS Neuron (NKI, Trainium) instructions, ``T.nki.*``: names only.

TIRx prints these in kernels written for its Trainium backend, and its namespace round-trip
tests mix them with CUDA ops. tirx has no Trainium backend: the calls load, build, print and
round-trip as TIRx writes them (so such text is never refused), and the CUDA target and the
interpreter refuse them by name. Every instruction is a statement (no result); literal
arguments keep their own dtype, as TIRx's builder gives them (``T.float32(0.0)`` bias,
``T.bool(True)`` accumulate), and opcodes are string literals.
"""

from __future__ import annotations

from ..ir.op import NoInterp, declare
from ..ir.types import void

__all__: list[str] = []

_NO = NoInterp("an NKI (Trainium) instruction: tirx has no Trainium backend")

#: name -> (argument kinds, parameter names, defaults by index): TIRx's signatures
_NKI: dict[str, tuple[str, str, dict]] = {
    "identity": ("x x", "result size", {}),
    "memset": ("x x", "result value", {}),
    "load": ("x x", "res data", {}),
    "store": ("x x", "res data", {}),
    "tensor_copy": ("x x", "res data", {}),
    "reciprocal": ("x x", "result data", {}),
    "affine_select": ("x x x x", "result pred true_value false_value", {}),
    "matmul": ("x x x x?", "res lhs rhs accum", {3: True}),
    "activation": ("x x s x? x?", "result data opcode bias scale", {3: 0.0, 4: 1.0}),
    "activation_reduce": (
        "x x x s s x? x?",
        "reduce_res act_res data opcode reduce_opcode bias scale",
        {5: 0.0, 6: 1.0},
    ),
    "tensortensor": ("x x x s", "result operand0 operand1 opcode", {}),
    "tensorscalar": ("x x x s x?", "result operand0 operand1 opcode reverse", {4: False}),
    "tensorscalar_reduce": (
        "x x x x s s x?",
        "reduce_res tensorscalar_res operand0 operand1 opcode reduce_opcode reverse",
        {6: False},
    ),
    "scalar_tensor_scalar": (
        "x x x x s s x? x?",
        "result data operand0 operand1 opcode0 opcode1 reverse0 reverse1",
        {6: False, 7: False},
    ),
    "scalar_tensor_tensor": (
        "x x x x s s x? x?",
        "result data operand0 operand1 opcode0 opcode1 reverse0 reverse1",
        {6: False, 7: False},
    ),
    "tensorreduce": ("x x s x *x", "result data opcode negate axes", {}),
}

for _name, (_args, _params, _defaults) in _NKI.items():
    declare(
        f"nki.{_name}", _args, void, pure=False, params=_params, defaults=_defaults, own_literals=True,
        interp=_NO, doc=f"TIRx's NKI (Trainium) instruction nki.{_name}: loads, prints and round-trips; not compiled",
    )  # fmt: skip
