"""Where the TIRx 0.1.0a4 compat sample lives for the tests.

The sample is vendored under ``tests/data/compat-tirx-0.1.0a4`` so the tests run anywhere
(CI, the GPU machine, a user's clone); ``TIRX_COMPAT_DIR`` points them at another copy.
``test_compat_sample_matches_shared`` checks the vendored copy against ``../shared``.
"""

from __future__ import annotations

import os
from pathlib import Path

VENDORED = Path(__file__).resolve().parent / "data" / "compat-tirx-0.1.0a4"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "compat" / "tirx-0.1.0a4"
COMPAT_DIR = Path(os.environ.get("TIRX_COMPAT_DIR") or VENDORED)
COMPAT_TIRX = sorted(str(p) for p in COMPAT_DIR.glob("*.tirx"))
COMPAT_PY = sorted(str(p) for p in COMPAT_DIR.glob("*.py"))
assert COMPAT_TIRX and COMPAT_PY, f"compat sample missing in {COMPAT_DIR}"
