"""Record TIRx's tcgen05 descriptor values (run with apache-tvm-tirx 0.1.0a4 installed).

    /tmp/tvmref/bin/python tools/tirx_oracle/golden_tcgen05.py tests/data/tirx_golden/tcgen05_desc.json

For a grid of options (every dtype combination of each tcgen05.mma kind, each CTA group,
shapes at and off the table's edges, the flags) writes TIRx's instruction descriptor -- or
"error" where TIRx refuses the options -- and its matrix-descriptor constant per
(ldo, sdo, swizzle). TIRx computes them with its compile-time folds of the same encoders
its kernels call (every valid combination is kept, a 16th of the refused ones).
tests/test_tcgen05.py compares tirx's encoders against this file
without TIRx.
"""

from __future__ import annotations

import itertools
import json
import sys

F8 = ["float8_e4m3fn", "float8_e5m2", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
DENSE_TYPES = [
    ("float16", "float16", "float16"), ("float32", "float16", "float16"), ("float32", "bfloat16", "bfloat16"),
    ("float32", "tf32", "tf32"), ("int32", "int8", "int8"), ("int32", "uint8", "int8"), ("float16", "bfloat16", "bfloat16"),
    *[("float32", a, b) for a in F8 for b in F8[:3]], ("float16", "float8_e4m3fn", "float8_e5m2"),
    ("float32", "float16", "bfloat16"), ("int32", "float16", "float16"),
]  # fmt: skip
SCALED_TYPES = [
    *[("float32", a, b, "float8_e8m0fnu") for a in F8 for b in F8[:2]],
    ("float32", "float4_e2m1fn", "float4_e2m1fn", "float8_e8m0fnu"),
    ("float32", "float4_e2m1fn", "float4_e2m1fn", "float8_e4m3fn"),
    ("float32", "float8_e4m3fn", "float8_e4m3fn", "float8_e4m3fn"), ("float16", "float4_e2m1fn", "float4_e2m1fn", "float8_e8m0fnu"),
]  # fmt: skip
MN = [(64, 8), (64, 64), (64, 256), (128, 16), (128, 24), (128, 8), (128, 256), (128, 264), (256, 32), (256, 256),
      (256, 48), (128, 48), (64, 16), (192, 64), (128, 128)]  # fmt: skip
KS = [8, 16, 32, 64, 96, 128]


def main(out: str) -> None:
    from tvm_tirx.backend.cuda.cpp import descriptors as D

    dense, scaled = [], []
    for (d, a, b), (m, n), k, cg in itertools.product(DENSE_TYPES, MN, KS, (1, 2)):
        for ta, tb, na, sat, sp in ((False, False, False, False, False), (True, True, True, True, False),
                                    (False, True, False, False, True)):  # fmt: skip
            opts = dict(M=m, N=n, K=k, d_dtype=d, a_dtype=a, b_dtype=b, trans_a=ta, trans_b=tb, cta_group=cg,
                        neg_a=na, neg_b=False, sat_d=sat, is_sparse=sp)  # fmt: skip
            try:
                v = D.encode_instr_descriptor_dense_uint32(**opts)
            except Exception:
                v = "error"
            dense.append({**opts, "value": v})
    for (d, a, b, sf), (m, n), k, cg in itertools.product(SCALED_TYPES, MN, KS, (1, 2)):
        for ta, tb, na, sp in (
            (False, False, False, False),
            (True, False, True, False),
            (False, False, False, True),
        ):
            opts = dict(M=m, N=n, K=k, d_dtype=d, a_dtype=a, b_dtype=b, sf_dtype=sf, trans_a=ta, trans_b=tb,
                        cta_group=cg, neg_a=na, neg_b=False, is_sparse=sp)  # fmt: skip
            try:
                v = D.encode_instr_descriptor_block_scaled_uint32(**opts)
            except Exception:
                v = "error"
            scaled.append({**opts, "value": v})
    smem = []
    for ldo, sdo, sw in itertools.product((0, 1, 8, 64, 0x3FFF), (0, 2, 64, 1024 >> 4, 0x3FFF), range(5)):
        smem.append(
            {
                "ldo": ldo,
                "sdo": sdo,
                "swizzle": sw,
                "value": D.encode_smem_descriptor_base_uint64(ldo, sdo, sw),
            }
        )

    def table(rows: list) -> dict:
        # every valid combination, every 16th refused one (the file stays small); one row a list
        errs = [r for r in rows if r["value"] == "error"][::16]
        keep = [r for r in rows if r["value"] != "error"] + errs
        keys = list(keep[0])
        return {"keys": keys, "rows": [[r[k] for k in keys] for r in keep]}

    data = {"tirx_version": "apache-tvm-tirx 0.1.0a4", "dense": table(dense), "block_scaled": table(scaled),
            "smem_base": table(smem)}  # fmt: skip
    with open(out, "w") as fh:
        json.dump(data, fh, separators=(",", ":"))
        fh.write("\n")
    n = {k: len(data[k]["rows"]) for k in ("dense", "block_scaled", "smem_base")}
    print(f"{out}: {n} rows kept of {len(dense)} dense / {len(scaled)} block-scaled combinations")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tcgen05_desc.json")
