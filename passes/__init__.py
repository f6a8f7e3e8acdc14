"""tirx.passes: pass infrastructure and the built-in passes.

```python
from tirx.passes import ConvertSSA, CommonSubexprElim, Sequential
mod = Sequential([ConvertSSA(), CommonSubexprElim()])(mod)
mod = build_pipeline("convert-ssa,cse,simplify")(mod)   # the same by name (passes/registry.py)
```
"""

from ._scoped import ScopedRewriter
from .cse import CommonSubexprElim
from .infra import (
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
from .pointer import InferPointerTypes
from .registry import PassInfo, build_pipeline, parse_pipeline, register_pass, registered_passes
from .simplify import Simplify
from .ssa import ConvertSSA
from .vectorize_threads import VectorizeThreads
from .verify import WellFormedError, verify_well_formed

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
