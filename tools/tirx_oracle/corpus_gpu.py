"""Stage 4 of the corpus check, on a GPU: TIRx's CUDA of each corpus kernel against tirx's kernel.

    python tools/tirx_oracle/corpus_gpu.py ORACLE_DIR RESULTS.json OUT.json

For every kernel whose TIRx text loads in tirx (stage 1 of ``RESULTS.json``, written by
``corpus_check.py``) and that TIRx compiled for an arch this GPU has, this compiles TIRx's
CUDA (from ``ORACLE_DIR/*.jsonl``) with NVRTC, launches it with tirx's launch configuration
beside tirx's own kernel on the same random inputs, and requires every tensor to come out
bit-identical (NaN equal to NaN). Kernels the interpreter finds out of bounds or racing on those
inputs are reported as such, not compared (the GPU keeps whichever store lands last), and so
are kernels the inputs make divide an integer by zero (``div-by-zero``: undefined in CUDA C++). Writes
``{"kernels": {id: {"s4": outcome, "s4_why": ...}}}`` for ``corpus_check.py --gpu``.

A kernel that faults (an illegal instruction, a bad address) leaves its CUDA context unusable,
and one that never finishes blocks its process: every kernel therefore runs in a worker process
that is replaced after a fault or a timeout. When tirx's kernel faults, TIRx's kernel runs alone
in a fresh worker: ``both-fault`` (the kernel is undefined on hardware: TIRx's codegen tests
with uninitialized barriers or random cache policies) is told apart from ``tirx-faults`` (ours
alone: a bug). Several workers share the GPU (``--jobs``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import select
import signal
import subprocess
import sys
import time
import traceback
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))  # the golden GPU test's launch planner and CCCL lookup


def _host(ours: list, torch) -> list:
    """CPU copies of the inputs for the interpreter (torch tensors keep bfloat16)."""
    return [x.cpu().clone() if torch.is_tensor(x) else x for x in ours]


def run_one(rec: dict, torch, theirs_only: bool = False) -> tuple[str, str]:
    from tirx_golden_frontend_plan import launch_tirx_cuda, plan, random_inputs

    import tirx
    from tirx.interp.errors import DivisionByZeroError, OutOfBoundsError, RaceError

    f = tirx.loads(rec["text"])
    if not isinstance(f, tirx.Function):
        why = "a module (the comparison runs one kernel function)"
        return ("no-theirs", why) if theirs_only else against_interpreter(f, torch, why)
    k = tirx.compile(f, target="cuda")
    too_new = _arch_beyond_device(k, torch)
    if too_new:
        return "not-run", too_new
    if _stores_outside_entries(f):  # host code writes the tensors: TIRx's host part is not run here
        why = "stores outside the device entry (host code, which TIRx's CUDA does not hold)"
        return ("no-theirs", why) if theirs_only else against_interpreter(f, torch, why)
    p = plan(f, rec["cuda"], k)
    if isinstance(p, str):
        return ("no-theirs", p) if theirs_only else against_interpreter(f, torch, p)
    ours = random_inputs(f, 7, torch)
    if theirs_only:
        launch_tirx_cuda(p, rec["cuda"], ours, "tirx_corpus.cu")
        torch.cuda.synchronize()
        return "theirs-ran", ""
    note = ""
    host: list | None = _host(ours, torch)
    try:
        tirx.compile(f, target="interp")(*host)
    except OutOfBoundsError as e:
        return "bounds", str(e).splitlines()[0][:200]
    except DivisionByZeroError as e:  # the inputs divide by zero: no value to agree on
        return "div-by-zero", str(e).splitlines()[0][:200]
    except RaceError as e:
        if "the same value" not in str(e):
            return "race", str(e).splitlines()[0][:200]
        # threads storing one value to one element (TIRx's codegen tests do it): a race by the
        # letter, but every order leaves the same bytes, so the GPU comparison still runs
        note = "a same-value race (compared): " + str(e).splitlines()[0][:120]
        host = None
    except Exception:
        host = None  # the interpreter may not model every op: the GPU comparison still runs
    theirs = [x.clone() if torch.is_tensor(x) else x for x in ours]
    try:
        k(*ours)
        torch.cuda.synchronize()
    except Exception as e:
        return "tirx-faults", _why(e)
    try:
        launch_tirx_cuda(p, rec["cuda"], theirs, "tirx_corpus.cu")
        torch.cuda.synchronize()
    except Exception as e:
        return "theirs-faults", _why(e)
    verdict = _compare(ours, theirs, f, torch, "agree", "differs", note)
    # a third vote: tirx's interpreter, on the same inputs. When it gives tirx's kernel's bits,
    # TIRx's CUDA is the odd one out (a literal NVRTC rounds differently from the value TIRx's
    # own IR holds: test_unusual_float_literals' 1e-38)
    if (
        verdict[0] == "differs"
        and host is not None
        and _compare(ours, host, f, torch, "same", "other", "")[0] == "same"
    ):
        return "theirs-differs", f"{verdict[1]}; tirx's kernel gives the interpreter's bits"
    return verdict


#: a float result this many units in the last place from the other side, where the kernel calls
#: a transcendental function (two implementations of ``tanh`` / ``erf`` / ``exp`` in half or
#: float need not round alike), is reported as ``*-ulp``: close, not the same bits
ULPS = 4
_TRANSCENDENTAL = (
    "exp", "log", "tanh", "erf", "sin", "cos", "tan", "sqrt", "rsqrt", "pow", "sigmoid", "fdividef",
    "hypot", "cbrt", "atan2", "lgamma", "tgamma",
)  # fmt: skip


def _calls(f: Any, pred: Any) -> bool:
    """Whether ``f`` (a function, or every function of a module: a kernel's helpers are
    where its ``tanh`` may be) calls an op whose last name part satisfies ``pred``."""
    from tirx.ir.visitor import Visitor

    found = []

    class _Calls(Visitor):
        def visit_Call(self, c: Any) -> None:
            if pred(getattr(c.op, "name", "").rsplit(".", 1)[-1]):
                found.append(c)
            self.generic_visit(c)

    for g in getattr(f, "functions", None) or [f]:
        if hasattr(g, "body"):
            _Calls().visit(g.body)
    return bool(found)


def _transcendental(f: Any) -> bool:
    # exp, exp2, asin, sinh, fdividef...
    return _calls(
        f, lambda name: any(name.startswith(t) or name.startswith("a" + t) for t in _TRANSCENDENTAL)
    )


def _atomic(f: Any) -> bool:
    """Whether the kernel updates memory atomically (``atomic_add``, PTX ``red`` / ``atom``):
    float sums then round in the order the GPU schedules them, and a counter hands out slots
    in that order, so two runs of one CUDA need not give the same bits."""
    return _calls(f, lambda name: "atomic" in name or name.startswith(("red", "atom")))


def _first_difference(a: Any, b: Any, torch: Any) -> str:
    """How two tensors differ (for the report): how many elements, the first, and for floats
    the largest difference and where one side alone is NaN or infinite."""
    from tirx_golden_frontend_plan import bits

    x, y = bits(a, torch), bits(b, torch)
    diff = (x != y).reshape(-1).nonzero()[0]
    idx = int(diff[0]) if len(diff) else 0
    fa, fb = a.reshape(-1)[idx].item(), b.reshape(-1)[idx].item()
    out = f"{len(diff)} of {x.size} elements, the first at flat index {idx}: {fa!r} (tirx) vs {fb!r}"
    if a.dtype.is_floating_point:
        u, v = a.detach().double().cpu().reshape(-1), b.detach().double().cpu().reshape(-1)
        lone = int(((torch.isfinite(u) != torch.isfinite(v)) | (torch.isnan(u) != torch.isnan(v))).sum())
        fin = torch.isfinite(u) & torch.isfinite(v)
        if bool(fin.any()):
            d = (u - v).abs().where(fin, torch.zeros_like(u))
            k = int(d.argmax())
            out += f"; largest {float(d[k]):.3g} at {k} ({u[k].item()!r} vs {v[k].item()!r})"
        if lone:
            out += f"; {lone} NaN / infinity on one side only"
    return out


def _descriptor_dumps(f: Any) -> set[str]:
    """Names of the tensors a kernel copies a TMA descriptor into (``tensormap.cp_fenceproxy``
    to global memory): a descriptor holds its tensor's address, and each kernel of the
    comparison runs over its own copies of the inputs, at other addresses."""
    from tirx.ir.visitor import Visitor

    names: set[str] = set()

    class _Dumps(Visitor):
        def visit_Call(self, c: Any) -> None:
            if getattr(c.op, "name", "").rsplit(".", 1)[-1] == "tensormap_cp_fenceproxy" and c.args:
                names.update(_tensors_in(c.args[0]))
            self.generic_visit(c)

    for g in getattr(f, "functions", None) or [f]:
        if hasattr(g, "body"):
            _Dumps().visit(g.body)
    return names


def _tensors_in(e: Any) -> set[str]:
    from tirx.ir.visitor import Visitor

    found: set[str] = set()

    class _Loads(Visitor):
        def visit_BufferLoad(self, x: Any) -> None:
            found.add(x.buffer.name)
            self.generic_visit(x)

    _Loads().visit(e)
    return found


def _timed(f: Any) -> bool:
    """Whether the kernel reads a clock (``clock64``, ``globaltimer``): its results differ
    from run to run by design."""
    return _calls(f, lambda name: name in ("clock", "clock64", "globaltimer") or "timer" in name)


def _same_multiset(a: Any, b: Any, torch: Any) -> bool:
    """Whether two tensors hold the same values in some order, float sums within a few ulp
    of the largest value (an atomic counter's slots, atomic float sums)."""
    x, y = a.detach().reshape(-1), b.detach().reshape(-1)
    if x.dtype.is_floating_point:
        xs, ys = torch.sort(x.double().cpu()).values, torch.sort(y.double().cpu()).values
        err, scale = _scaled_error(xs.to(a.dtype), ys.to(a.dtype), torch)
        if err <= 64 * ULPS * scale:
            return True
        err, scale = _scaled_error(a, b, torch)  # in place: sums reordered, not moved
        return err <= 64 * ULPS * scale
    return bool((torch.sort(x.cpu()).values == torch.sort(y.cpu()).values).all())


def _ulp_distance(a: Any, b: Any, torch: Any) -> int:
    """The largest distance in units in the last place between two float tensors (NaN equal
    to NaN, -0.0 to 0.0): their bits as ordered integers."""
    import numpy as np
    from tirx_golden_frontend_plan import bits

    x, y = bits(a, torch).astype(np.int64), bits(b, torch).astype(np.int64)
    w = 8 * a.element_size()
    sign = np.int64(1) << (w - 1)
    x = np.where(x < 0, -(x & (sign - 1)), x)  # sign-magnitude to a line of integers
    y = np.where(y < 0, -(y & (sign - 1)), y)
    return int(np.abs(x - y).max()) if x.size else 0


def _scaled_error(a: Any, b: Any, torch: Any) -> tuple[float, float]:
    """The largest absolute difference, and one ulp of the tensor's largest magnitude (at
    least of 1.0). A transcendental's last-place error can grow to many ulp of a result where
    the formula cancels (``0.5 * x * (1 + erf(x))`` for negative ``x``), yet stays within a
    few ulp of the values the kernel computes with."""
    x, y = a.detach().double().cpu(), b.detach().double().cpu()
    finite = torch.isfinite(x) & torch.isfinite(y)
    both_nan = torch.isnan(x) & torch.isnan(y)  # NaN on both sides agrees (NaN != NaN)
    if not bool((torch.isnan(x) == torch.isnan(y)).all()) or not bool(((x == y) | finite | both_nan).all()):
        return float("inf"), 1.0  # NaN or infinity on one side only: a real difference
    if not bool(finite.any()):
        return 0.0, 1.0
    err = float((x[finite] - y[finite]).abs().max())
    top = max(1.0, float(y[finite].abs().max()))
    return err, top * float(torch.finfo(a.dtype).eps)


def _compare(
    ours: list, other: list, f: Any, torch: Any, same: str, differs: str, why: str, scope: Any = None
) -> tuple[str, str]:
    """``same`` when every tensor has the same bits; ``<same>-ulp`` when the only differences
    are float results within ``ULPS`` of each other in a kernel with transcendental calls
    (looked for in ``scope``, the module of a module's kernel); ``<same>-atomic`` when they
    are the same values in another order, or float sums reordered, in a kernel with atomic
    updates."""
    from tirx_golden_frontend_plan import bits

    close = []
    for i, (a, b) in enumerate(zip(ours, other)):
        if not torch.is_tensor(a) or (bits(a, torch) == bits(b, torch)).all():
            continue
        name = f.params[i].name
        if scope is None:
            scope = f
        buf = dict(getattr(f, "buffer_map", {})).get(f.params[i])
        if buf is not None and buf.name in _descriptor_dumps(scope):
            close.append(f"{name} holds a TMA descriptor (each side's own tensor addresses)")
            continue
        if _atomic(scope) and _same_multiset(a, b, torch):
            close.append(f"{name} the same up to the order of atomic updates")
            continue
        if a.dtype.is_floating_point and _transcendental(scope):
            d = _ulp_distance(a, b, torch)
            if d <= ULPS:
                close.append(f"{name} within {d} ulp")
                continue
            err, scale = _scaled_error(a, b, torch)
            if err <= ULPS * scale:
                close.append(f"{name} within {err / scale:.1f} ulp of its largest value")
                continue
        sep = "; " if why else ""
        what = f"{why}{sep}{f.name}: parameter {i} ({name}) differs, {_first_difference(a, b, torch)}"
        if _timed(scope):  # clock readings: different on every run, of either CUDA
            return "timed", what
        if _atomic(scope):  # values handed out in the order the atomics ran (atom's old values)
            return "atomic-order", what
        return differs, what
    if close:
        kind = (
            "atomic"
            if all("atomic" in c for c in close)
            else "address"
            if all("descriptor" in c for c in close)
            else "ulp"
        )
        return f"{same}-{kind}", (why + "; " if why else "") + ", ".join(close)
    return same, why


def _stores_outside_entries(f: Any) -> bool:
    """Whether ``f`` stores to memory in host code (outside its device entries): the harness
    launches TIRx's kernel only, so such a function is compared with the interpreter."""
    from tirx.ir import BufferStore, DeviceEntry
    from tirx.ir.visitor import Visitor

    class Find(Visitor):
        found = False

        def visit_DeviceEntry(self, s: DeviceEntry) -> None:
            pass

        def visit_BufferStore(self, s: BufferStore) -> None:
            self.found = True

    v = Find()
    v.visit(f.body)
    return v.found


def against_interpreter(f: Any, torch: Any, why: str) -> tuple[str, str]:
    """Where TIRx's CUDA cannot be launched as tirx's kernel is (a module, a launch that depends
    on the arguments, clusters and launch options, a kernel split differently), tirx's CUDA is
    compared with tirx's interpreter instead, bit for bit: ``interp-agree`` / ``interp-differs``
    (``why`` keeps the reason TIRx's kernel did not run). ``not-run`` where the interpreter
    cannot run the kernel or no inputs can be drawn (symbolic shapes, vector elements)."""
    from tirx_golden_frontend_plan import random_inputs

    import tirx
    from tirx.interp.errors import DivisionByZeroError, OutOfBoundsError, RaceError

    funcs = (
        [(g.name, g) for g in f.functions if _has_entry(g)]
        if not isinstance(f, tirx.Function)
        else [(None, f)]
    )
    if not funcs:
        return "not-run", f"{why}; no function with a device entry"
    try:
        # exact float arithmetic, as the interpreter's (no a * b + c contracted to one fma)
        kc = tirx.compile(f, target="cuda", options=("--fmad=false",))
        ki = tirx.compile(f, target="interp")
    except Exception as e:
        return "not-run", f"{why}; {_why(e)}"
    too_new = _arch_beyond_device(kc, torch)
    if too_new:
        return "not-run", f"{why}; {too_new}"
    for name, g in funcs:
        try:
            ours = random_inputs(g, 7, torch)
        except Exception as e:
            return "not-run", f"{why}; inputs not drawn ({_why(e)})"
        host = _host(ours, torch)
        try:
            (ki if name is None else ki[name])(*host)
        except OutOfBoundsError as e:
            return "bounds", str(e).splitlines()[0][:200]
        except DivisionByZeroError as e:
            return "div-by-zero", str(e).splitlines()[0][:200]
        except RaceError as e:
            return "race", str(e).splitlines()[0][:200]
        except Exception as e:
            return "not-run", f"{why}; the interpreter: {_why(e)}"
        try:
            (kc if name is None else kc[name])(*ours)
            torch.cuda.synchronize()
        except Exception as e:
            return "tirx-faults", _why(e)
        r = _compare(ours, host, g, torch, "interp-agree", "interp-differs", why, scope=f)
        if r[0] != "interp-agree":
            return r
    return "interp-agree", why


def _arch_beyond_device(k: Any, torch: Any) -> str:
    """Why a compiled kernel cannot load on this GPU (an entry's ``backend_config`` asked for
    a newer arch, e.g. ``sm_100a`` on a Hopper), or ``""``."""
    arches = getattr(k, "arches", None) or [getattr(k, "arch", "")]
    major, minor = torch.cuda.get_device_capability()
    for a in arches:
        digits = "".join(ch for ch in str(a) if ch.isdigit())
        if digits and int(digits) > major * 10 + minor:
            return f"tirx compiled it for sm_{digits} (its backend_config), not this GPU"
    return ""


def _has_entry(g: Any) -> bool:
    from tirx.codegen.host_split import contains_entry

    return hasattr(g, "body") and contains_entry(g.body)


def _why(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e) else ''}"


#: outcomes after which the worker's CUDA context may be unusable
_STICKY = {"tirx-faults", "theirs-faults", "theirs-ran", "error"}


def worker() -> int:
    """Read one kernel record per stdin line, answer one JSON line per record."""
    import torch

    for line in sys.stdin:
        msg = json.loads(line)
        try:
            s4, why = run_one(msg["rec"], torch, msg.get("theirs_only", False))
        except Exception as e:
            traceback.print_exc()
            s4, why = "error", _why(e)
        sys.stdout.write(json.dumps([s4, why]) + "\n")
        sys.stdout.flush()
        if s4 in _STICKY:
            return 0  # a fault leaves the context unusable: the parent starts a fresh worker
    return 0


class _Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(self, rec: dict, timeout: float, theirs_only: bool = False) -> tuple[str, str]:
        assert self.proc.stdin and self.proc.stdout
        try:
            self.proc.stdin.write(json.dumps({"rec": rec, "theirs_only": theirs_only}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return "error", "the worker exited"
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.proc.kill()
            return "hangs", f"no answer in {timeout:.0f} s"
        line = self.proc.stdout.readline()
        if not line:
            return "error", f"the worker died (exit {self.proc.wait()})"
        s4, why = json.loads(line)
        return s4, why

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.alive():
            self.proc.kill()


def _run_all(
    todo: list[tuple[str, dict]], jobs: int, timeout: float, done: dict[str, dict] | None = None
) -> dict[str, dict]:
    """Run ``todo`` over ``jobs`` worker processes, each kernel isolated from faults; results go
    into ``done`` as they come (a run cut short keeps what it finished)."""
    import threading

    done = {} if done is None else done
    lock = threading.Lock()
    queue = list(todo)

    def one_thread() -> None:
        w: _Worker | None = None
        while True:
            with lock:
                if not queue:
                    break
                kid, rec = queue.pop(0)
            if w is None or not w.alive():
                w = _Worker()
            s4, why = w.ask(rec, timeout)
            if s4 in ("tirx-faults", "hangs"):
                w.close()
                w = _Worker()
                t4, twhy = w.ask(rec, timeout, theirs_only=True)
                if t4 not in ("theirs-ran", "no-theirs"):  # TIRx's kernel alone faults or hangs too
                    s4, why = (
                        f"both-{'fault' if s4 == 'tirx-faults' else 'hang'}",
                        f"tirx: {why}; TIRx: {twhy}",
                    )
                w.close()
                w = None
            elif not w.alive() or s4 in _STICKY:
                w.close()
                w = None
            with lock:
                done[kid] = {"s4": s4, "s4_why": why}
                print(f"{s4:13} {kid} {why}", flush=True)
        if w is not None:
            w.close()

    threads = [threading.Thread(target=one_thread) for _ in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        return worker()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("oracle_dir", type=pathlib.Path)
    ap.add_argument("results", type=pathlib.Path)
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds one kernel may take")
    ap.add_argument(
        "--skip",
        type=pathlib.Path,
        action="append",
        default=[],
        help="an earlier OUT.json whose kernels are not run again (a run cut short, resumed)",
    )
    a = ap.parse_args(argv)
    from tirx.runtime import driver as drv

    rows = {r["id"]: r for r in json.loads(a.results.read_text())["kernels"]}
    earlier = {k for f in a.skip for k in json.loads(f.read_text())["kernels"]}
    have = int("".join(filter(str.isdigit, drv.device_arch(0))))
    done: dict[str, dict] = {}
    todo: list[tuple[str, dict]] = []
    for p in sorted(a.oracle_dir.glob("*.jsonl")):
        for line in p.open():
            rec = json.loads(line)
            kid = (
                f"{rec['file'].removeprefix('tests/python/tirx/')}::{rec['test']}::{rec['name']}#{rec['occ']}"
            )
            row = rows.get(kid)
            if row is None or row["s1"] != "pass" or "cuda" not in rec or kid in earlier:
                continue
            if row.get("s3") == "oracle-not-compiled":
                done[kid] = {"s4": "not-run", "s4_why": "TIRx's CUDA does not compile with NVRTC"}
                continue
            # the arch TIRx's CUDA really compiles for (stage 3 found it; the oracle records
            # sm_90a whenever TIRx's own codegen succeeds, sm_100-only instructions included)
            arch = row.get("arch") or rec["arch"]
            if int("".join(filter(str.isdigit, arch))) > have:
                done[kid] = {"s4": "not-run", "s4_why": f"needs {arch}"}
                continue
            todo.append((kid, rec))
    t0 = time.time()

    def write(*_sig: object) -> None:
        a.out.write_text(json.dumps({"kernels": dict(done)}, indent=1, sort_keys=True) + "\n")
        if _sig:  # SIGTERM (a `timeout` around the run): keep what finished, then stop
            print(f"stage 4: cut short after {len(done)} kernels", flush=True)
            os._exit(124)

    signal.signal(signal.SIGTERM, write)
    _run_all(todo, a.jobs, a.timeout, done)
    write()
    counts: dict[str, int] = {}
    for v in done.values():
        counts[v["s4"]] = counts.get(v["s4"], 0) + 1
    print(f"stage 4: {len(done)} kernels in {time.time() - t0:.0f} s: {counts}", flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main(sys.argv[1:]))
