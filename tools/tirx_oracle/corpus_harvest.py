"""Capture every kernel apache-tvm-tirx 0.1.0a4 builds from TIRx's own test files.

    /root/oracle312/bin/python tools/tirx_oracle/corpus_harvest.py SRC OUT [FILE ...]

``SRC`` is a folder holding TIRx's test files at their repository paths
(``SRC/tests/python/tirx/...``: a checkout of apache/tvm, or the copies the corpus cache keeps in
``~/.cache/tirx/corpus/src``). Each ``test_*.py`` under it runs under pytest in its own process
with ``corpus_plugin`` (side ``oracle``): ``import tvm`` is served by ``tvm_tirx``, skip marks are
ignored, and every kernel TIRx parses from Python (``@T.function``, ``@I.ir_module``, ``@T.jit``
specializations) is written to ``OUT/oracle/<file key>.jsonl`` with TIRx's printed text and
TIRx's CUDA (``sm_90a``, else ``sm_100a``) or its compile error. The corpus stays outside this
repository (TIRx's code is not ours to copy); ``corpus_check.py`` reads ``OUT`` with tirx.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
TIMEOUT = int(os.environ.get("CORPUS_TIMEOUT", "900"))


def file_key(rel: str) -> str:
    """``tests/python/tirx/codegen/test_x.py`` -> ``codegen__test_x``."""
    p = rel.removeprefix("tests/python/tirx/").removesuffix(".py")
    return p.replace("/", "__")


def test_files(src: pathlib.Path, names: list[str]) -> list[pathlib.Path]:
    root = src / "tests" / "python" / "tirx"
    files = sorted(root.rglob("test_*.py"))
    if names:
        files = [f for f in files if any(n in str(f) for n in names)]
    return files


def run_file(src: pathlib.Path, f: pathlib.Path, out_dir: pathlib.Path, side: str, extra_env: dict) -> dict:
    rel = str(f.relative_to(src))
    out = out_dir / f"{file_key(rel)}.jsonl"
    if out.exists():
        out.unlink()
    ini = out_dir / "pytest.ini"
    ini.write_text("[pytest]\n")
    env = dict(os.environ)
    env.update(
        {
            "CORPUS_SIDE": side,
            "CORPUS_OUT": str(out),
            "CORPUS_FILE": rel,
            "PYTHONPATH": os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    env.update(extra_env)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        str(ini),
        "--rootdir",
        str(src),
        "-p",
        "corpus_plugin",
        "-p",
        "no:skipping",
        "-p",
        "no:cacheprovider",
        "-q",
        "--tb=no",
        "--no-header",
        str(f),
    ]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT, cwd=str(f.parent))
        tail = (p.stdout + p.stderr).strip().splitlines()
        status = tail[-1] if tail else f"rc={p.returncode}"
    except subprocess.TimeoutExpired:
        status = f"timeout after {TIMEOUT} s"
    n = sum(1 for line in out.open() if '"refused"' not in line) if out.exists() else 0
    return {"file": rel, "kernels": n, "pytest": status, "seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        raise SystemExit(__doc__)
    src, out = pathlib.Path(argv[0]).resolve(), pathlib.Path(argv[1]).resolve()
    (out / "oracle").mkdir(parents=True, exist_ok=True)
    for f in test_files(src, argv[2:]):
        r = run_file(src, f, out / "oracle", "oracle", {})
        print(f"{r['file']}: {r['kernels']} kernels ({r['seconds']} s; pytest: {r['pytest']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
