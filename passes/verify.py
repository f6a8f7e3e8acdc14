"""``tirx.passes.verify``: the well-formedness checker under its pass-side name. The checker
itself lives in the IR layer (tirx/ir/verify.py: the IRBuilder below the passes runs it);
the pass and the instrument (``VerifyWellFormed``, ``VerifyAfterEach``) are in passes/infra.py."""

from __future__ import annotations

from tirx.ir.verify import WellFormedError, raise_errors, verify_well_formed

__all__ = ["WellFormedError", "raise_errors", "verify_well_formed"]
