"""Golden kernels for a GPU differential test against TIRx's own CUDA.

For every op both systems have (tests/data/tirx_golden/ops.json) whose arguments are buffer
elements or literals, TIRx builds ``O[i] = T.<op>(X[i], ...)`` (one thread per element),
prints it, and compiles it to CUDA. ``tests/test_tirx_golden_cuda_gpu.py`` then, on a GPU,
loads TIRx's *text* in tirx and runs tirx's kernel, compiles TIRx's *CUDA* with NVRTC and
runs it, on the same edge inputs, and compares: an independent implementation of every op's
meaning on the same hardware.

    python tools/tirx_oracle/golden_ops.py spec /tmp/ops_spec.json            # (tirx)
    python tools/tirx_oracle/golden_cuda.py spec /tmp/ops_spec.json /tmp/cuda_spec.json   # (tirx)
    /tmp/tvmref/bin/python tools/tirx_oracle/golden_cuda.py print /tmp/cuda_spec.json \\
        tests/data/tirx_golden/cuda.json                                      # (TIRx)
"""

from __future__ import annotations

import json
import re
import sys

N = 256  # elements (threads), 2 blocks of 128
_BUF = {
    "F": "float32",
    "N": "int32",
    "U": "uint32",
    "L": "uint64",
    "H": "float16",
    "G": "bfloat16",
    "D": "float64",
}


def spec(ops_spec: str, out: str) -> None:
    """For each op with an example of buffer elements / literals: the kernel's parameters
    and output dtype (tirx's result type of the call)."""
    sys.path.insert(0, ".")
    import tirx

    with open(ops_spec) as f:
        ops = json.load(f)["ops"]
    cases = []
    for op in ops:
        ex = op.get("example")
        # NVSHMEM ops need NVSHMEM's headers and a bootstrapped job: tests/test_nvshmem*.py; IKET
        # annotations compute nothing (TIRx's CUDA for one outside run-iket does not compile)
        if (
            ex is None
            or "address_of" in ex
            or ".data" in ex
            or op["name"].startswith(("ptx.", "nvshmem.", "cuda.iket_"))
        ):
            continue
        args = ex.replace("[1]", "[i]")
        bufs = sorted(set(re.findall(r"\b([FNULHGD])\[i\]", args)))
        params = ", ".join(f"{b}: T.Tensor(({N},), T.{_BUF[b]})" for b in bufs)
        text = (
            f"@T.function\ndef k({params}):\n"
            f'    with T.device_entry({N // 128}, 1, 1, 128, 1, 1, attrs={{"cuda.kernel_attrs": {{}}, '
            '"cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):\n'
            '        i: T.let[T.int32] = T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")\n'
            f"        T.evaluate(T.{op['name']}({args}))\n"
        )
        try:
            ty = _bind_type(tirx.loads(text))
        except Exception as e:  # not expressible this way: left out, with why
            print(f"skip {op['name']}: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
            continue
        if ty is None or getattr(ty, "lanes", 1) != 1 or str(ty) in ("void", "bool"):
            out_ty = "int32" if str(ty) == "bool" else None
            if out_ty is None:
                print(f"skip {op['name']}: result {ty}")
                continue
        else:
            out_ty = str(ty)
        cases.append({"op": op["name"], "args": args, "bufs": bufs, "out": out_ty})
    with open(out, "w") as f:
        json.dump({"n": N, "buffers": _BUF, "cases": cases}, f, indent=1)
    print(f"wrote {len(cases)} cases to {out}")


def _bind_type(f) -> object:
    """The type of the evaluated call in ``f``."""
    from tirx.ir.visitor import Visitor

    found = []

    class V(Visitor):
        def visit_Evaluate(self, s):
            found.append(s.value.ty)

    V().visit(f.body)
    return found[-1] if found else None


def _kernel_src(case: dict, n: int, bufs: dict) -> str:
    params = "".join(f'{b}: T.Tensor(({n},), "{bufs[b]}"), ' for b in case["bufs"])
    call = f"T.{case['op']}({case['args']})"
    if case["out"] == "int32" and any(w in case["op"] for w in ("isnan", "isinf", "isfinite", "likely")):
        call = f'T.Cast("int32", {call})'
    return (
        "from tvm_tirx.script import tirx as T\n"
        "@T.function\n"
        f'def k({params}O: T.Tensor(({n},), "{case["out"]}")):\n'
        f"    with T.device_entry(launch=T.cuda.LaunchConfig(grid={n // 128}, block=128)):\n"
        '        i = T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")\n'
        f"        O[i] = {call}\n"
    )


def oracle(spec_path: str, out: str) -> None:
    import tempfile

    import tvm_tirx
    from golden_ops import import_kernel_file  # the sibling script (run from this folder)

    with open(spec_path) as f:
        sp = json.load(f)
    tmp = tempfile.mkdtemp(prefix="tirx_gcuda_")
    res = {}
    for k, case in enumerate(sp["cases"]):
        try:
            mod = import_kernel_file(tmp, f"k{k}", _kernel_src(case, sp["n"], sp["buffers"]))
            text = mod.k.script()
            m = tvm_tirx.tirx.compile(mod.k, target={"kind": "cuda", "arch": "sm_90a"})
            cuda = m.mod.imports[0].inspect_source("cuda")
        except Exception as e:
            res[case["op"]] = {
                "refused": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            }
            continue
        sig = re.search(r"\bk_kernel\(([^)]*)\)\s*\{", cuda)  # the definition's parameters
        names = re.findall(r"\b([A-Za-z]\w*)_ptr\b", sig.group(1)) if sig else []
        res[case["op"]] = {**case, "text": text, "cuda": cuda, "cuda_params": names}
    with open(out, "w") as f:
        json.dump({"n": sp["n"], "buffers": sp["buffers"], "ops": res}, f, indent=1, sort_keys=True)
    ok = sum(1 for r in res.values() if "cuda" in r)
    print(f"TIRx compiled {ok} of {len(res)} kernels; wrote {out}")


if __name__ == "__main__":
    if sys.argv[1] == "spec":
        spec(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "print":
        oracle(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
