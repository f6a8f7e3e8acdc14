"""tirx.passes: pass infrastructure and the built-in passes.

```python
from tirx.passes import ConvertSSA, CommonSubexprElim, Sequential
mod = Sequential([ConvertSSA(), CommonSubexprElim()])(mod)
mod = build_pipeline("convert-ssa,cse,simplify")(mod)   # the same by name (passes/registry.py)
```

TIRx's pass API runs on the same infrastructure: ``ir_transform`` serves ``tvm.transform`` /
``tvm.ir.transform``, ``tirx_transform`` ``tvm.tirx.transform`` and ``instrument``
``tvm.instrument`` for code written ``import tirx as tvm``.
"""

from __future__ import annotations

from tirx.passes._scoped import ScopedRewriter
from tirx.passes.cse import CommonSubexprElim
from tirx.passes.infra import (
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInstrument,
    PassTiming,
    PrintIR,
    Sequential,
    TIRxPassInstrument,
    VerifyAfterEach,
    VerifyWellFormed,
    function_pass,
    module_pass,
    pass_instrument,
    set_required_lookup,
)
from tirx.passes.pointer import InferPointerTypes
from tirx.passes.registry import PassInfo, build_pipeline, parse_pipeline, register_pass, registered_passes
from tirx.passes.sequence import SequenceEffects
from tirx.passes.simplify import Simplify
from tirx.passes.ssa import ConvertSSA
from tirx.passes.unroll import UnrollLoop
from tirx.passes.vectorize_threads import VectorizeThreads
from tirx.passes.verify import WellFormedError, verify_well_formed

__all__ = [
    "CommonSubexprElim",
    "ConvertSSA",
    "FunctionPass",
    "InferPointerTypes",
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "PassTiming",
    "PrintIR",
    "ScopedRewriter",
    "SequenceEffects",
    "Sequential",
    "Simplify",
    "TIRxPassInstrument",
    "UnrollLoop",
    "VectorizeThreads",
    "VerifyAfterEach",
    "VerifyWellFormed",
    "WellFormedError",
    "build_pipeline",
    "function_pass",
    "module_pass",
    "parse_pipeline",
    "pass_instrument",
    "register_pass",
    "registered_passes",
    "verify_well_formed",
]


def _required(name: str) -> Pass | None:
    """A pass named in a ``required=[...]``: a registered pass (``"convert-ssa"``) or one of
    the TIRx pass names tirx serves (``"tirx.ConvertSSA"``)."""
    info = registered_passes().get(name)
    if info is not None:
        return info.make()
    from tirx.passes.tirx_transform import BY_TIRX_NAME

    make = BY_TIRX_NAME.get(name)
    return make() if make is not None else None


set_required_lookup(_required)
