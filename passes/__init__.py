"""tirx.passes: pass infrastructure and the built-in passes.

```python
from tirx.passes import ConvertSSA, CommonSubexprElim, Sequential
mod = Sequential([ConvertSSA(), CommonSubexprElim()])(mod)
mod = build_pipeline("convert-ssa,cse,simplify")(mod)   # the same by name (passes/registry.py)
```
"""

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
    VerifyAfterEach,
    VerifyWellFormed,
    function_pass,
    module_pass,
)
from tirx.passes.pointer import InferPointerTypes
from tirx.passes.registry import PassInfo, build_pipeline, parse_pipeline, register_pass, registered_passes
from tirx.passes.sequence import SequenceEffects
from tirx.passes.simplify import Simplify
from tirx.passes.ssa import ConvertSSA
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
    "VectorizeThreads",
    "VerifyAfterEach",
    "VerifyWellFormed",
    "WellFormedError",
    "build_pipeline",
    "function_pass",
    "module_pass",
    "parse_pipeline",
    "register_pass",
    "registered_passes",
    "verify_well_formed",
]
