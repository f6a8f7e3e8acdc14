"""tirx.passes: pass infrastructure and the built-in passes.

```python
from tirx.passes import ConvertSSA, CommonSubexprElim, Sequential
mod = Sequential([ConvertSSA(), CommonSubexprElim()])(mod)
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
    "function_pass",
    "module_pass",
    "verify_well_formed",
]
