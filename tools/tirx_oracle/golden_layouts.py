"""Record where TIRx's layouts put elements (run with apache-tvm-tirx 0.1.0a4 installed).

    /tmp/tvmref/bin/python tools/tirx_oracle/golden_layouts.py tests/data/tirx_golden/layouts.json
    /tmp/tvmref/bin/python tools/tirx_oracle/golden_layouts.py cuda tests/data/tirx_golden/layouts_cuda.json

Draws random tile layouts (``T.S[extents : strides] + offset``), half of them XOR-swizzled
(``T.ComposeLayout``), each with a tensor shape of the same size and coordinates in it, and
stores TIRx's memory offset (``layout.apply(*coord, shape=shape)["m"]``) for each, plus
TIRx's printed text of the layout; and the text of the layouts the ``T.cuda.layout``
factories give (MMA shared-memory, tensor-memory operand and data-path layouts) over a grid
of arguments (or that the factory refuses them). ``tests/test_layout.py`` checks tirx's offsets and text
against the file without TIRx. Seeded: the same file every run. This script imports TIRx;
nothing in tirx imports it.
"""

from __future__ import annotations

import itertools
import json
import random
import sys


def cases(n: int = 200, seed: int = 14) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        k = rnd.randint(1, 4)
        ext = [rnd.choice([1, 2, 3, 4, 8]) for _ in range(k)]
        strides = [rnd.randint(0, 40) for _ in range(k)]
        size = 1
        for e in ext:
            size *= e
        shape = [size]
        divs = [d for d in range(2, size) if size % d == 0]
        if divs and rnd.random() < 0.7:
            d = rnd.choice(divs)
            shape = [d, size // d]
        sw = None
        if rnd.random() < 0.5:
            s = rnd.randint(0, 3)
            sw = [rnd.randint(0, 2), s, rnd.randint(s, 4), rnd.random() < 0.5]
        coords = [[rnd.randrange(d) for d in shape] for _ in range(6)]
        out.append({"ext": ext, "strides": strides, "offset": rnd.randint(0, 9), "shape": shape, "swizzle": sw,
                    "coords": coords})  # fmt: skip
    return out


def factory_calls() -> list[list]:
    """``[factory, args, kwargs]`` of the ``T.cuda.layout`` factories over a grid of arguments."""
    out: list[list] = []
    for dt in ("float16", "bfloat16", "float32", "float8_e4m3fn"):
        for mode in range(4):
            for shape in ([64, 64], [128, 64], [8, 128], [2, 64, 32], [3, 64, 128], [64, 12]):
                out.append(["mma_shared_layout", [dt, mode, shape], {}])
    for op, shape, dt, m, cg, ws, grp in itertools.product(
        ["A", "D"], [[128, 64], [64, 64], [2, 64, 32], [64, 2, 32], [64, 2, 2, 16], [32, 64]],
        ["float32", "float16"], [64, 128, 256], [1, 2], [False, True], [None, [2, 2, 16]],
    ):  # fmt: skip
        out.append(
            ["tmem_mma_operand_layout", [op, shape, dt], {"M": m, "cta_group": cg, "ws": ws, "group": grp}]
        )
    for dp, rows, cols, sub in itertools.product("ABCDEFG", [32, 64, 128], [16, 30], [0, 1]):
        out.append(["tmem_datapath_layout", [dp, rows, cols, sub], {}])
    return out


def main(path: str) -> int:
    import tvm_tirx
    from tvm_tirx.script import tirx as T

    simplify = tvm_tirx.sym.Analyzer().simplify
    recs = []
    for c in cases():
        lay = T.TileLayout(T.S[tuple(c["ext"]) : tuple(c["strides"])] + c["offset"])
        if c["swizzle"]:
            p, s, a, inner = c["swizzle"]
            lay = T.ComposeLayout(p, s, a, lay, swizzle_inner=inner)
        m = [int(simplify(lay.apply(*co, shape=c["shape"])["m"])) for co in c["coords"]]
        recs.append({**c, "m": m, "text": str(lay)})
    facts = []
    for name, args, kw in factory_calls():
        try:
            got = str(getattr(T.cuda.layout, name)(*args, **kw))
        except Exception as e:
            got = f"error: {type(e).__name__}"
        facts.append({"factory": name, "args": args, "kwargs": kw, "text": got})
    with open(path, "w") as f:  # one record a line
        body = ",\n".join(json.dumps(r) for r in recs)
        fbody = ",\n".join(json.dumps(r) for r in facts)
        f.write('{"apply": [\n' + body + '\n],\n"factories": [\n' + fbody + "\n]}\n")
    print(f"{len(recs)} layouts, {sum(len(r['m']) for r in recs)} offsets; {len(facts)} factory calls")
    return 0


#: frontend golden kernels whose CUDA TIRx compiles, recorded for the GPU comparison
CUDA_CASES = ("layout_storage",)


def record_cuda(path: str) -> int:
    """TIRx's printed text and CUDA source of each of :data:`CUDA_CASES`
    (tests/data/tirx_golden/frontend/<case>.py), for tests/test_layout_gpu.py."""
    import pathlib

    import tvm_tirx

    here = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "tirx_golden" / "frontend"
    out = {}
    for name in CUDA_CASES:
        src = (here / f"{name}.py").read_text()
        tmp = here / f"_tvm_{name}.py"  # TIRx's parser reads the kernel's source from its file
        tmp.write_text(
            src.replace("from tirx.script import tirx as T", "from tvm_tirx.script import tirx as T")
        )
        try:
            ns: dict = {"__name__": f"golden_{name}", "__file__": str(tmp)}
            exec(compile(tmp.read_text(), str(tmp), "exec"), ns)  # the oracle runs its own kernels
        finally:
            tmp.unlink()
        f = ns["f"]
        mod = tvm_tirx.tirx.compile(f, target={"kind": "cuda", "arch": "sm_90a"})
        out[name] = {"text": f.script() + "\n", "cuda": mod.mod.imports[0].inspect_source("cuda")}
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    print(f"{len(out)} kernels")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "cuda":  # golden_layouts.py cuda tests/data/tirx_golden/layouts_cuda.json
        sys.exit(record_cuda(sys.argv[2]))
    sys.exit(main(sys.argv[1]))
