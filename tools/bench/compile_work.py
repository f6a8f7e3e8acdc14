"""How much work NVRTC does on each attention kernel, counted instead of timed. No GPU needed.

    python tools/bench/compile_work.py --baseline OLD_attention.py [--only best] [--jobs N]

Wall and CPU times of a compile move by 10-40 % from one run to the next on a shared or virtual
machine (docs/benchmarks.md: the device machine's CPU speed changes between leases), which
hides the few per cent a source change saves. Here each kernel's CUDA source (as
``tirx.compile`` makes it) is compiled once by NVRTC for ``sm_90a`` under valgrind's callgrind,
which counts the machine instructions executed inside ``nvrtcCompileProgram`` (front end, NVVM
and ptxas): the same count on every run and machine, whatever else the machine does. Kernels as
in ``sass_diff.py`` (``KERNELS`` and the four ``best_config`` ones), this tree against
``--baseline``. Needs ``valgrind``; about 3 minutes a kernel on one core (``--jobs``: parallel).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import baseline  # noqa: E402
from sass_diff import cases  # noqa: E402

_COLLECTED = re.compile(r"Collected : (\d+)")


def worker(path: str) -> None:
    """Compile the CUDA source in ``path`` once (run under valgrind by ``count``)."""
    from tirx.runtime import nvrtc

    with open(path) as fh:
        text = fh.read()
    nvrtc.compile_source(text, "sm_90a")


def count(path: str) -> int:
    """Instructions executed inside ``nvrtcCompileProgram`` compiling ``path``."""
    r = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--toggle-collect=nvrtcCompileProgram*",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            os.path.abspath(__file__),
            "--worker",
            path,
        ],
        capture_output=True,
        text=True,
    )
    m = _COLLECTED.search(r.stderr)
    if r.returncode or m is None:
        raise RuntimeError(f"compile_work: valgrind on {path} failed: {r.stderr.strip()[-400:]}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", help="an older attention.py (required)")
    ap.add_argument("--only", default="", help="only the kernels whose name contains this text")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="valgrind processes at once")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker)
    if not a.baseline:
        ap.error("--baseline is required")
    if shutil.which("valgrind") is None:
        raise SystemExit("compile_work: needs valgrind (apt install valgrind)")
    os.environ.setdefault("TIRX_CACHE_DIR", tempfile.mkdtemp(prefix="tirx_compile_work_"))
    import tirx
    from tirx.kernels.hopper import attention as new

    old = baseline.load(a.baseline)
    tmp = tempfile.mkdtemp(prefix="tirx_compile_work_src_")
    jobs: list[tuple[str, str, str]] = []
    for name, make_new, make_old in cases(new, old):
        if a.only not in name:
            continue
        for tag, make in (("new", make_new), ("old", make_old)):
            src = tirx.compile(make(), target="cuda -arch=sm_90a", cache=False).module.source
            path = os.path.join(tmp, f"{len(jobs)}.cu")
            with open(path, "w") as fh:
                # a declaration no other compile has: NVRTC 13 answers a text it has seen
                # in the same process from a cache (a fresh process each here, but alike)
                fh.write(src + f"\n__device__ int tirx_compile_work_{time.time_ns()};\n")
            jobs.append((name, tag, path))
    print(f"# NVRTC work, millions of instructions in nvrtcCompileProgram (callgrind), {len(jobs)} compiles")
    with ThreadPoolExecutor(max(1, a.jobs)) as ex:
        counts = list(ex.map(lambda j: count(j[2]), jobs))
    got: dict = {}
    for (name, tag, _p), n in zip(jobs, counts):
        got.setdefault(name, {})[tag] = n
    print("| kernel | new | old | new / old |\n| --- | ---: | ---: | ---: |")
    for name, r in got.items():
        print(f"| {name} | {r['new'] / 1e6:.0f} | {r['old'] / 1e6:.0f} | {r['new'] / r['old']:.3f} |")


if __name__ == "__main__":
    main()
