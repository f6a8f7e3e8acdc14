"""Golden text for every op tirx and TIRx share: TIRx prints a call of it, tirx must load that
text and print it back the same (issue #14, "checked against TIRx itself").

Two steps, two environments:

    python tools/tirx_oracle/golden_ops.py spec /tmp/ops_spec.json        # tirx: ops + argument kinds
    /tmp/tvmref/bin/python tools/tirx_oracle/golden_ops.py print /tmp/ops_spec.json \\
        tests/data/tirx_golden/ops.json                                    # TIRx: its printed text

``spec`` lists tirx's built-in ops that are not PTX-table opcodes (those have their own
golden tests) with their argument kinds, literal choices and defaults. ``print`` builds, in
TIRx, one kernel per op whose arguments follow those kinds (float32 / int32 / uint32 /
uint64 / float16 / bfloat16 buffer elements, comparisons for bools, addresses for
pointers, the first choice for literals), and records TIRx's printed statement, or why
TIRx refused it. ``tests/test_tirx_golden_ops.py`` reads the result without TIRx.
"""

from __future__ import annotations

import json
import sys
from typing import Any

# the kernel both sides use: buffers of every dtype an op may take
PARAMS = [
    ("F", "float32"),
    ("N", "int32"),
    ("U", "uint32"),
    ("L", "uint64"),
    ("H", "float16"),
    ("G", "bfloat16"),
    ("D", "float64"),
]
LAUNCH = "grid=2, block=64, cluster=2"


def spec(out: str) -> None:
    sys.path.insert(0, ".")
    import tirx  # noqa: F401
    from tirx.ir.op import all_ops
    from tirx.ops.ptx_table import opcodes

    table = opcodes()
    ops = []
    for name, op in sorted(all_ops(builtin_only=True).items()):
        if name in table:
            continue
        d = {
            "name": name,
            "args": list(op.args),
            "choices": {str(k): list(v) for k, v in op.choices.items()},
            "defaults": sorted(op.defaults),
            "result": op.result if isinstance(op.result, str) else "fixed",
        }
        d["example"] = _tirx_accepts(name, _candidates(d))
        ops.append(d)
    with open(out, "w") as f:
        json.dump({"params": PARAMS, "ops": ops}, f, indent=1)
    print(f"wrote {len(ops)} ops to {out}")


# arguments per kind, tried in order until TIRx accepts one (its ops take one dtype each)
_TRY = {
    "x": ["F[1]", "N[1]", "U[1]", "L[1]", "H[1]", "G[1]", "D[1]"],
    "f": ["F[1]", "D[1]", "H[1]", "G[1]"],
    "i": ["N[1]", "U[1]", "L[1]"],
    "b": ["N[1] > 0"],
    "p": [f"T.address_of({b}[0])" for b in "FNULHGD"],  # aligned with "x": same dtype at the same try
    "n": ["2"],
}


def _candidates(op: dict) -> list[str]:
    """Argument lists to try: every argument of the same kind gets the same dtype."""
    kinds = [k for k in op["args"] if not (k.endswith("?") and op["args"].index(k) in op["defaults"])]
    kinds = [k for k in kinds if not k.startswith("*")]
    outs = []
    for t in range(7):
        args = []
        ok = True
        for i, k in enumerate(kinds):
            base = k.rstrip("?")
            if str(i) in op["choices"]:
                c = op["choices"][str(i)][0]
                args.append(json.dumps(c) if isinstance(c, str) else str(c))
                continue
            if base == "s":
                if op["result"] == "ty":  # call_extern and kin: a function name and ty=
                    ok = False
                    break
                args.append('"x"')  # an axis
                continue
            opts = _TRY.get(base, ["F[1]"])
            args.append(opts[min(t, len(opts) - 1)])
        if ok:
            if op["result"] == "ty":  # a result type of the same width as the float32 first try
                args.append("ty=T.uint32")
            cand = ", ".join(args)
            if cand not in outs:
                outs.append(cand)
    return outs


def import_kernel_file(directory: str, stem: str, source: str) -> Any:
    """Write ``source`` to ``directory/stem.py`` and import it: both TIRx's and tirx's
    decorators read a kernel's source from its file. The source is the oracle's own."""
    import importlib.util
    import os

    path = os.path.join(directory, stem + ".py")
    with open(path, "w") as f:
        f.write(source)
    spec_ = importlib.util.spec_from_file_location(stem, path)
    mod = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(mod)
    return mod


def _tirx_accepts(name: str, cands: list[str]) -> str | None:
    """The first argument list whose kernel tirx builds and generates CUDA for."""
    import tempfile

    import tirx.codegen

    tmp = tempfile.mkdtemp(prefix="tirx_spec_")
    for i, args in enumerate(cands):
        src = _kernel_src(f"T.evaluate(T.{name}({args}))").replace("tvm_tirx", "tirx")
        try:
            mod = import_kernel_file(tmp, f"k{i}_{name.replace('.', '_')}", src)
        except Exception:  # not this dtype: try the next
            continue
        try:
            tirx.codegen.generate(mod.k)
        except Exception as e:  # an op CUDA refuses by name (host runtime, LLVM) still has its text
            if "not supported by the CUDA backend" not in str(e):
                continue
        return args
    return None


def _kernel_src(stmt: str) -> str:
    ps = ", ".join(f'{n}: T.Tensor((64,), "{d}")' for n, d in PARAMS)
    return (
        "from tvm_tirx.script import tirx as T\n"
        "@T.function\n"
        f"def k({ps}):\n"
        f"    with T.device_entry(launch=T.cuda.LaunchConfig({LAUNCH})):\n"
        '        sm = T.alloc_shared((4,), "uint64")\n'
        f"        {stmt}\n"
    )


def oracle(spec_path: str, out: str) -> None:
    import tempfile

    from tvm_tirx.script import tirx as T  # noqa: F401  (TIRx itself)

    with open(spec_path) as f:
        sp = json.load(f)
    results = {}
    tmp = tempfile.mkdtemp(prefix="tirx_golden_")
    for op in sp["ops"]:
        name = op["name"]
        got = None
        why = []
        for args in [op["example"]] if op.get("example") is not None else _candidates(op):
            call = f"T.{name}({args})"
            for stmt in (f"T.evaluate({call})", f"x = {call}"):
                try:
                    mod = import_kernel_file(tmp, f"k{len(why)}_{name.replace('.', '_')}", _kernel_src(stmt))
                    text = mod.k.script()
                except Exception as e:  # TIRx refused this spelling: try the next
                    why.append(
                        f"{stmt}: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
                    )
                    continue
                got = {"stmt": stmt, "text": text}
                break
            if got:
                break
        results[name] = got if got else {"refused": why[-3:]}
    with open(out, "w") as f:
        json.dump({"params": sp["params"], "launch": LAUNCH, "ops": results}, f, indent=1, sort_keys=True)
    n = sum(1 for r in results.values() if "text" in r)
    print(f"TIRx printed {n} of {len(results)} ops; wrote {out}")


if __name__ == "__main__":
    if sys.argv[1] == "spec":
        spec(sys.argv[2])
    elif sys.argv[1] == "print":
        oracle(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
