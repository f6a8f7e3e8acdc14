"""On a GPU: host programs (host loops, conditions and host scalars around device entries)
compute what the interpreter computes, bit for bit, called and prepared
(tests/test_host_program.py checks their launches without a GPU).

Skipped cleanly without a CUDA driver/device.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

import host_program_cases as C  # noqa: E402
from test_host_launches_gpu import _inputs  # noqa: E402

import tirx  # noqa: E402

pytestmark = pytest.mark.gpu

CASES = [
    ("loop_launch", [((4, 128), "float32"), 2]),
    ("loop_launch", [((4, 128), "float32"), -1]),
    ("host_scalar", [((128,), "int32"), 5]),
    ("if_else_launch", [((128,), "float32"), 1]),
    ("if_else_launch", [((128,), "float32"), 0]),
    ("while_steps", [((256,), "int32"), 100]),
    ("while_steps", [((256,), "int32"), 1000]),
    ("nested_loops", [((3, 4, 32), "int32"), 1]),
    ("host_reads_device", [((32,), "int32"), ((2, 4), "int32")]),
    ("affine_loop", [((9,), "int32")]),
]


@pytest.mark.parametrize("name, spec", CASES)
@pytest.mark.parametrize("prepared", [False, True])
def test_host_program_on_the_gpu_matches_the_interpreter(name, spec, prepared):
    f = getattr(C, name)
    host = _inputs(spec, 7)
    dev = [torch.from_numpy(a.copy()).cuda() if isinstance(a, np.ndarray) else a for a in host]
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in host]
    k = tirx.compile(f, target="cuda")
    if prepared and name == "host_reads_device":  # host reads between launches: no prepared form
        with pytest.raises(ValueError, match="call the function instead"):
            k.prepare(*dev)
        return
    ret = k.prepare(*dev)() if prepared else k(*dev)
    torch.cuda.synchronize()
    want = tirx.compile(f, target="interp")(*ref)
    assert ret == want
    for a, b in zip(dev, ref):
        if isinstance(b, np.ndarray):
            assert a.cpu().numpy().tobytes() == b.tobytes()
