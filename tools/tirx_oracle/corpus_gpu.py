"""Stage 4 of the corpus check, on a GPU: TIRx's CUDA of each corpus kernel against tirx's kernel.

    python tools/tirx_oracle/corpus_gpu.py ORACLE_DIR RESULTS.json OUT.json

For every kernel whose TIRx text loads in tirx (stage 1 of ``RESULTS.json``, written by
``corpus_check.py``) and that TIRx compiled for an arch this GPU has, this compiles TIRx's
CUDA (from ``ORACLE_DIR/*.jsonl``) with NVRTC, launches it with tirx's launch configuration
beside tirx's own kernel on the same random inputs, and requires every tensor to come out
bit-identical (NaN equal to NaN). Kernels the interpreter finds out of bounds or racing on those
inputs are reported as such, not compared (the GPU keeps whichever store lands last). Writes
``{"kernels": {id: {"s4": outcome, "s4_why": ...}}}`` for ``corpus_check.py --gpu``.
"""

from __future__ import annotations

import json
import pathlib
import sys
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))  # the golden GPU test's launch planner and CCCL lookup


def run_one(rec: dict, torch) -> tuple[str, str]:
    from tirx_golden_frontend_plan import bits, launch_tirx_cuda, plan, random_inputs

    import tirx
    from tirx.interp.errors import OutOfBoundsError, RaceError

    f = tirx.loads(rec["text"])
    if not isinstance(f, tirx.Function):
        return "not-run", "a module (the comparison runs one kernel function)"
    k = tirx.compile(f, target="cuda")
    p = plan(f, rec["cuda"], k)
    if isinstance(p, str):
        return "not-run", p
    ours = random_inputs(f, 7, torch)
    host = [x.cpu().numpy() if torch.is_tensor(x) else x for x in ours]
    try:
        tirx.compile(f, target="interp")(*[x.copy() if hasattr(x, "copy") else x for x in host])
    except OutOfBoundsError as e:
        return "bounds", str(e).splitlines()[0][:200]
    except RaceError as e:
        return "race", str(e).splitlines()[0][:200]
    except Exception:
        pass  # the interpreter may not model every op: the GPU comparison still runs
    theirs = [x.clone() if torch.is_tensor(x) else x for x in ours]
    k(*ours)
    launch_tirx_cuda(p, rec["cuda"], theirs, "tirx_corpus.cu")
    torch.cuda.synchronize()
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if torch.is_tensor(a) and not (bits(a, torch) == bits(b, torch)).all():
            return "differs", f"parameter {i} ({f.params[i].name}) differs"
    return "agree", ""


def main(argv: list[str]) -> int:
    import torch

    from tirx.runtime import driver as drv

    oracle_dir, results, out = pathlib.Path(argv[0]), pathlib.Path(argv[1]), pathlib.Path(argv[2])
    rows = {r["id"]: r for r in json.loads(results.read_text())["kernels"]}
    have = int("".join(filter(str.isdigit, drv.device_arch(0))))
    done: dict[str, dict] = {}
    for p in sorted(oracle_dir.glob("*.jsonl")):
        for line in p.open():
            rec = json.loads(line)
            kid = (
                f"{rec['file'].removeprefix('tests/python/tirx/')}::{rec['test']}::{rec['name']}#{rec['occ']}"
            )
            row = rows.get(kid)
            if row is None or row["s1"] != "pass" or "cuda" not in rec:
                continue
            if int("".join(filter(str.isdigit, rec["arch"]))) > have:
                done[kid] = {"s4": "not-run", "s4_why": f"needs {rec['arch']}"}
                continue
            try:
                s4, why = run_one(rec, torch)
            except Exception as e:
                s4, why = (
                    "error",
                    f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e) else ''}",
                )
                traceback.print_exc()
            done[kid] = {"s4": s4, "s4_why": why}
            print(f"{s4:8} {kid} {why}", flush=True)
    out.write_text(json.dumps({"kernels": done}, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
