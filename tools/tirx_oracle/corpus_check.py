"""Check tirx against the kernels TIRx builds from its own test files (stages 1-3 of issue #31).

    python tools/tirx_oracle/corpus_check.py SRC OUT [--json RESULTS.json] [--jobs N] [FILE ...]

Reads ``OUT/oracle/*.jsonl`` (written by ``corpus_harvest.py`` under apache-tvm-tirx 0.1.0a4)
and, with tirx only, checks every captured kernel:

1. **text**: TIRx's printed text loads in tirx, prints back to the same text (modulo the import
   comment), and the printed text loads to a structurally equal IR (a fixpoint);
2. **frontend**: the test file itself, run under pytest with ``import tvm`` served by tirx
   (``corpus_plugin``, side ``tirx``), builds the same kernel (same test, name, occurrence) to IR
   structurally equal to (1);
3. **compile**: where TIRx compiled the kernel to CUDA, tirx compiles it (codegen + NVRTC to a
   cubin) for the same arch.

Prints a table per file and the failure clusters (first lines of the errors, grouped). With
``--json`` it writes one record per kernel (ids and outcomes only: no TIRx code), and with
``--markdown`` it rewrites the corpus section of ``docs/tirx_compat.md`` from those records.
``--render JSON --markdown PAGE [--check]`` does the last step alone (no corpus needed; the
docs test uses it to keep the page and the JSON in agreement).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from corpus_harvest import file_key, run_file

_IMPORT = re.compile(r"^# from (tvm_tirx|tirx)\.script import tirx as T$", re.M)


def _first(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    text = next((m for m in msg if "error:" in m), None)  # a diagnostic's message line
    if text is None:
        text = next((m for m in msg if m.strip() and not m.startswith(" ")), msg[0] if msg else "")
    text = text[text.index("error:") :] if "error:" in text else text
    return f"{type(e).__name__}: {text}"[:300]


def _norm(text: str) -> str:
    return _IMPORT.sub("# from tirx.script import tirx as T", text).rstrip() + "\n"


def stage1(text: str) -> tuple[str, str]:
    import tirx

    try:
        f = tirx.loads(text)
    except Exception as e:
        return "load-failed", _first(e)
    try:
        out = tirx.dumps(f)
    except Exception as e:
        return "print-failed", _first(e)
    try:
        g = tirx.loads(out)
        tirx.assert_structural_equal(f, g)
        if tirx.dumps(g) != out:
            return "not-fixpoint", "printing the reloaded IR gives other text"
    except Exception as e:
        return "roundtrip-failed", _first(e)
    if _norm(out) != _norm(text):
        a, b = _norm(out).splitlines(), _norm(text).splitlines()
        i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        got = a[i].strip() if i < len(a) else "<end>"
        want = b[i].strip() if i < len(b) else "<end>"
        return "text-differs", f"line {i + 1}: tirx {got[:120]!r} / TIRx {want[:120]!r}"
    return "pass", ""


def stage3(text: str, arch: str) -> tuple[str, str]:
    import tirx

    try:
        f = tirx.loads(text)
    except Exception as e:
        return "load-failed", _first(e)
    try:
        tirx.compile(f, target=f"cuda -arch={arch}")
    except Exception as e:
        return "compile-failed", _first(e)
    return "pass", ""


def oracle_arch(cuda: str, arch: str) -> str | None:
    """The arch at which TIRx's CUDA compiles with NVRTC: TIRx records ``sm_90a`` when its own
    codegen succeeds (it runs no ptxas), so an sm_100-only instruction is found here; ``None``
    when TIRx's CUDA compiles for neither (then tirx is not asked to either)."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
    from tirx_golden_cuda_util import cccl_include, nvrtc_source  # noqa: I001

    from tirx.runtime.nvrtc import compile_source

    import hashlib

    cache = pathlib.Path(os.environ.get("CORPUS_ARCH_CACHE", "/tmp/tirx_corpus_arch"))
    cuda = nvrtc_source(cuda)  # CUtensorMap declared where TIRx names it
    key = cache / hashlib.sha256(f"{arch}\n{cuda}".encode()).hexdigest()
    if key.exists():  # NVRTC on TIRx's CUDA is the slow part: its answer never changes
        got = key.read_text()
        return got or None
    inc = cccl_include()
    found = None
    for a in dict.fromkeys((arch, "sm_100a")):
        try:
            compile_source(cuda, a, name="tirx_corpus_oracle.cu", options=(f"-I{inc}",) if inc else ())
            found = a
            break
        except Exception:
            continue
    cache.mkdir(parents=True, exist_ok=True)
    key.write_text(found or "")
    return found


def _check_one(rec: dict, compile_: bool) -> dict:
    out = {"s1": "no-text", "s1_why": rec.get("print_error", "")}
    if "text" in rec:
        out["s1"], out["s1_why"] = stage1(rec["text"])
    if "arch" not in rec:
        out["s3"] = "oracle-not-compiled"
    elif not compile_:
        out["arch"], out["s3"] = rec["arch"], "not-run"
    else:
        arch = oracle_arch(rec["cuda"], rec["arch"])
        if arch is None:
            out["arch"], out["s3"] = rec["arch"], "oracle-not-compiled"
            out["s3_why"] = "TIRx's CUDA does not compile with NVRTC (sm_90a, sm_100a)"
        elif "text" in rec:
            out["arch"] = arch
            out["s3"], out["s3_why"] = stage3(rec["text"], arch)
    return out


def kernel_id(rec: dict) -> str:
    return f"{rec['file'].removeprefix('tests/python/tirx/')}::{rec['test']}::{rec['name']}#{rec['occ']}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=pathlib.Path, nargs="?")
    ap.add_argument("out", type=pathlib.Path, nargs="?")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--render", type=pathlib.Path, help="render the page from this results JSON")
    ap.add_argument("--markdown", type=pathlib.Path, help="the page whose corpus section to write")
    ap.add_argument("--check", action="store_true", help="with --render: exit 1 if the page is stale")
    ap.add_argument("--gpu", type=pathlib.Path, help="stage 4 outcomes (corpus_gpu.py) to merge in")
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--no-frontend", action="store_true")
    a = ap.parse_args(argv)
    if a.render is not None:
        doc = json.loads(a.render.read_text())
        rows, accepted = doc["kernels"], doc.get("tirx_refuses_tirx_builds", [])
        if a.gpu is not None:
            merge_gpu(rows, a.gpu)
            if a.json:
                doc["kernels"] = rows
                a.json.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        return write_markdown(a.markdown, rows, accepted, check=a.check) if a.markdown else report(rows) or 0
    if a.src is None or a.out is None:
        ap.error("SRC and OUT are required (or --render)")
    src, out = a.src.resolve(), a.out.resolve()
    oracle_files = sorted((out / "oracle").glob("*.jsonl"))
    if a.files:
        oracle_files = [p for p in oracle_files if any(n.replace("/", "__") in p.stem for n in a.files)]
    (out / "tirx").mkdir(parents=True, exist_ok=True)
    records: list[dict] = []
    accepted: list[dict] = []
    for p in oracle_files:
        allrecs = [json.loads(line) for line in p.open()]
        recs = [r for r in allrecs if "refused" not in r]
        refused = {(r["test"], r["name"], r["occ"]): r["refused"] for r in allrecs if "refused" in r}
        if not allrecs:
            continue
        rel = allrecs[0]["file"]
        frontend: dict = {}
        failed_tests = {}
        if not a.no_frontend:
            r = run_file(src, src / rel, out / "tirx", "tirx", {"CORPUS_ORACLE": str(p)})
            tp = out / "tirx" / f"{file_key(rel)}.jsonl"
            failed_tests: dict[str, str] = {}
            if tp.exists():
                for line in tp.open():
                    t = json.loads(line)
                    if "test_error" in t:  # a test that failed: why its kernels were not built
                        failed_tests[t["test"]] = t["test_error"]
                    else:
                        frontend[(t["test"], t["name"], t["occ"])] = t
            print(f"{rel}: frontend run: {r['pytest']}", file=sys.stderr)
        for key, t in frontend.items():  # kernels TIRx refused and tirx built
            if key in refused and "text" in t:
                accepted.append(
                    {
                        "id": f"{rel.removeprefix('tests/python/tirx/')}::{key[0]}::{key[1]}#{key[2]}",
                        "tirx_refuses": refused[key],
                    }
                )
        for rec in recs:
            t = frontend.get((rec["test"], rec["name"], rec["occ"]))
            rec["s2"] = "not-run" if a.no_frontend else ("not-built" if t is None else t.get("stage2", "?"))
            rec["s2_why"] = (
                failed_tests.get(rec["test"], "the test ran without building it")
                if t is None and not a.no_frontend
                else ("" if t is None else t.get("stage2_error", ""))
            )
            records.append(rec)
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(_check_one, records, [not a.no_compile] * len(records), chunksize=4))
    rows = []
    for rec, res in zip(records, results):
        rows.append(
            {
                "id": kernel_id(rec),
                "file": rec["file"].removeprefix("tests/python/tirx/"),
                "s1": res["s1"],
                "s1_why": res.get("s1_why", ""),
                "s2": rec["s2"],
                "s2_why": rec["s2_why"],
                "s3": res.get("s3", ""),
                "s3_why": res.get("s3_why", ""),
                "arch": res.get("arch", ""),
                "s4": "",
                "s4_why": "",
            }
        )
    if a.gpu is not None:
        merge_gpu(rows, a.gpu)
    rows.sort(key=lambda r: r["id"])
    accepted.sort(key=lambda r: r["id"])
    report(rows)
    print(f"\nkernels TIRx refuses and tirx builds: {len(accepted)}")
    for r in accepted:
        print(f"  {r['id']}: TIRx: {r['tirx_refuses'][:150]}")
    if a.json:
        a.json.write_text(
            json.dumps({"kernels": rows, "tirx_refuses_tirx_builds": accepted}, indent=1, sort_keys=True)
            + "\n"
        )
    if a.markdown:
        write_markdown(a.markdown, rows, accepted)
    return 0


def merge_gpu(rows: list[dict], path: pathlib.Path) -> None:
    """Stage 4 outcomes from ``corpus_gpu.py`` (run on a GPU) into the rows."""
    gpu = json.loads(path.read_text())["kernels"]
    for r in rows:
        g = gpu.get(r["id"])
        r["s4"], r["s4_why"] = (g["s4"], g["s4_why"]) if g else ("", "")


BEGIN, END = "<!-- corpus:begin (tools/tirx_oracle/corpus_check.py) -->", "<!-- corpus:end -->"


def render(rows: list[dict], accepted: list[dict] = ()) -> str:  # type: ignore[assignment]
    """The corpus section of docs/tirx_compat.md: per file and stage, then the open clusters."""
    by_file: dict[str, list[dict]] = collections.defaultdict(list)
    for r in rows:
        by_file[r["file"]].append(r)
    lines = [
        BEGIN,
        "",
        "| file | kernels | 1 text | 2 frontend | 1 and 2 | 3 compile (of TIRx-compiled) | 4 GPU agree (of run) "
        "| 4 against the interpreter |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    tot: collections.Counter = collections.Counter()
    for f, rs in sorted(by_file.items()):
        c = summary(rs)
        tot.update(c)
        lines.append(
            f"| `{f}` | {c['n']} | {c['s1']} | {c['s2']} | {c['s12']} | {c['s3']} / {c['s3n']} | "
            f"{c['s4']} / {c['s4n']} | {c['s4i']} / {c['s4in']} |"
        )
    lines.append(
        f"| **all** | **{tot['n']}** | **{tot['s1']}** | **{tot['s2']}** | **{tot['s12']}** | "
        f"**{tot['s3']} / {tot['s3n']}** | **{tot['s4']} / {tot['s4n']}** | **{tot['s4i']} / {tot['s4in']}** |"
    )
    lines += ["", "Open failure clusters (stage, outcome, first line of the error; numbers masked):", ""]
    clusters = failure_clusters(rows)
    if not clusters:
        lines.append("- none")
    for (s, kind, why), n in clusters.most_common():
        lines.append(f"- {n} × stage {s[1]} {kind}: {why.replace('|', '/')}".rstrip(": "))
    lines += [
        "",
        f"Kernels TIRx refuses to build and tirx builds ({len(accepted)}): an error test whose check tirx "
        "lacks, or a form newer than 0.1.0a4 that tirx already accepts:",
        "",
    ]
    lines += [f"- `{r['id']}`: TIRx: {r['tirx_refuses'].replace('|', '/')[:160]}" for r in accepted] or [
        "- none"
    ]
    lines += ["", END]
    return "\n".join(lines)


def write_markdown(
    page: pathlib.Path, rows: list[dict], accepted: list[dict] = (), check: bool = False
) -> int:  # type: ignore[assignment]
    text = page.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{page}: no corpus section (the lines {BEGIN!r} ... {END!r})")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    new = head + render(rows, accepted) + tail
    if check:
        if new != text:
            print(f"{page}: the corpus section is stale; run corpus_check.py --render ... --markdown {page}")
            return 1
        return 0
    page.write_text(new)
    return 0


def report(rows: list[dict]) -> None:
    by_file: dict[str, list[dict]] = collections.defaultdict(list)
    for r in rows:
        by_file[r["file"]].append(r)
    print(f"{'file':60} {'kernels':>7} {'s1':>5} {'s2':>5} {'s1+2':>5} {'s3':>9}")
    tot = collections.Counter()
    for f, rs in sorted(by_file.items()):
        c = summary(rs)
        tot.update(c)
        print(f"{f:60} {c['n']:7} {c['s1']:5} {c['s2']:5} {c['s12']:5} {c['s3']:4}/{c['s3n']:<4}")
    print(
        f"{'total':60} {tot['n']:7} {tot['s1']:5} {tot['s2']:5} {tot['s12']:5} {tot['s3']:4}/{tot['s3n']:<4}"
    )
    print("\nfailure clusters:")
    for (s, kind, why), n in failure_clusters(rows).most_common():
        print(f"{n:4}  {s} {kind}: {why}")


def failure_clusters(rows: list[dict]) -> collections.Counter:
    clusters: collections.Counter = collections.Counter()
    for r in rows:
        for s in ("s1", "s2", "s3", "s4"):
            if r.get(s, "") in (
                "pass",
                "equal",
                "agree",
                "interp-agree",
                "oracle-not-compiled",
                "not-run",
                "",
                "bounds",
                "race",
                "div-by-zero",
            ):
                continue
            if s == "s3" and r[s] == "load-failed":  # the same failure as stage 1's
                continue
            why = re.sub(r"\d+", "N", r.get(f"{s}_why") or "")[:140]
            clusters[(s, r[s], why)] += 1
    return clusters


def summary(rs: list[dict]) -> collections.Counter:
    c: collections.Counter = collections.Counter()
    for r in rs:
        c["n"] += 1
        c["s1"] += r["s1"] == "pass"
        c["s2"] += r["s2"] == "equal"
        c["s12"] += r["s1"] == "pass" and r["s2"] == "equal"
        if r["s3"] not in ("oracle-not-compiled", ""):
            c["s3n"] += 1
            c["s3"] += r["s3"] == "pass"
        if r.get("s4") in (
            "agree",
            "agree-ulp",  # float results a few ulp apart (transcendental functions): counted, not as agreeing
            "agree-address",  # a TMA descriptor copied out: each side's own addresses in it
            "theirs-differs",  # TIRx's CUDA alone differs; tirx's kernel gives the interpreter's bits
            "differs",
            "error",
            "tirx-faults",
            "hangs",
        ):  # compared on the GPU (a fault or hang of tirx alone counts against it)
            c["s4n"] += 1
            c["s4"] += r["s4"] == "agree"
        if r.get("s4") in ("interp-agree", "interp-agree-ulp", "interp-differs"):  # TIRx's CUDA not launched
            c["s4in"] += 1
            c["s4i"] += r["s4"] == "interp-agree"
    return c


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
