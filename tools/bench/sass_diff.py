"""Does a source change of the attention kernels change their SASS? No GPU needed.

    python tools/bench/sass_diff.py --baseline OLD_attention.py [--only best] [--show 5]

Every kernel of ``tirx/kernels/hopper/attention.py`` (``KERNELS`` and the four ``best_config``
kernels at 4·16·4096) is compiled for sm_90a from this tree and from ``--baseline`` (an older
copy of the module, see ``baseline.py``), disassembled (``nvdisasm``, the wheel of tirx's
``[cuda]`` extra, or ``cuobjdump``), and compared instruction by instruction: addresses,
encodings and the operand order of commutative min / max / add / mul are ignored. A kernel whose
SASS is the same runs at the same speed, so a change that only makes compiling cheaper can be
judged here; the paired GPU timing (``ab_attention.py``) has a noise floor of about 1 %
(docs/benchmarks.md, "Compile time vs speed of the attention forms"). Prints one row a kernel:
instructions new / old, differing lines, registers; ``--show N``: the first N differing lines.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import baseline  # noqa: E402

_INSN = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;")
_COMMUTATIVE = re.compile(
    r"^(@!?U?P\w+ )?((?:FMNMX|FADD|FMUL|IMNMX)(?:\.FTZ)?) ([^,\s]+), ([^,\s]+), ([^,\s]+)(.*)$"
)


def disassembler() -> list[str] | None:
    """The command that prints a cubin's SASS with addresses: ``cuobjdump -sass`` (PATH or
    /usr/local/cuda), else ``nvdisasm -c`` (tirx's ``[cuda]`` extra); None without either.
    Also bench_hopper.sass_check's."""
    exe = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    if os.path.exists(exe):
        return [exe, "-sass"]
    from tirx.tools.cli import find_nvdisasm

    nv = find_nvdisasm()
    return None if nv is None else [nv, "-c"]


def instructions(cubin: bytes, cmd: list[str]) -> list[str]:
    """The SASS instructions of ``cubin``, one string each, normalized (see the module doc)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.cubin")
        with open(path, "wb") as fh:
            fh.write(cubin)
        text = subprocess.run([*cmd, path], capture_output=True, text=True, check=True).stdout
    out = []
    for line in text.splitlines():
        m = _INSN.match(line)
        if not m:
            continue
        insn = re.sub(r"\s+", " ", re.sub(r"/\*[^*]*\*/", "", m.group(1))).strip()
        c = _COMMUTATIVE.match(insn)
        if c:
            a, b = sorted((c.group(4), c.group(5)))
            insn = f"{c.group(1) or ''}{c.group(2)} {c.group(3)}, {a}, {b}{c.group(6)}"
        out.append(insn)
    return out


def cases(new, old) -> list[tuple[str, object, object]]:
    """(name, new builder, old builder) of every kernel both modules have."""
    out = [(n, new.KERNELS[n], old.KERNELS[n]) for n in sorted(new.KERNELS) if n in old.KERNELS]
    for d in (128, 64):
        for causal in (True, False):
            name = f"best d{d}{' causal' if causal else ''}"
            out.append(
                (
                    name,
                    lambda m=new, d=d, c=causal: m.make_attention(4, 16, 4096, d, c, **m.best_config(d, c)),
                    lambda m=old, d=d, c=causal: m.make_attention(4, 16, 4096, d, c, **m.best_config(d, c)),
                )
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", required=True, help="an older attention.py")
    ap.add_argument("--only", default="", help="only the kernels whose name contains this text")
    ap.add_argument("--show", type=int, default=0, help="print the first N differing instructions")
    a = ap.parse_args()
    os.environ.setdefault("TIRX_CACHE_DIR", tempfile.mkdtemp(prefix="tirx_sass_diff_"))
    import tirx
    from tirx.kernels.hopper import attention as new

    old = baseline.load(a.baseline)
    cmd = disassembler()
    if cmd is None:
        raise SystemExit("sass_diff: needs nvdisasm (pip install nvidia-cuda-nvdisasm) or cuobjdump")
    same = total = 0
    for name, make_new, make_old in cases(new, old):
        if a.only not in name:
            continue
        ks = [
            tirx.compile(make(), target="cuda -arch=sm_90a", cache=False, options=("--ptxas-options=-v",))
            for make in (make_new, make_old)
        ]
        sn, so = (instructions(k.cubin, cmd) for k in ks)
        regs = "/".join(re.search(r"Used (\d+) registers", k.module.log).group(1) for k in ks)
        diff = [(x, y) for x, y in zip(sn, so) if x != y]
        ndiff = len(diff) + abs(len(sn) - len(so))
        total += 1
        same += ndiff == 0
        print(
            f"{name:40s} instructions {len(sn):5d} / {len(so):5d}  differing {ndiff:5d}  registers {regs}",
            flush=True,
        )
        for x, y in diff[: a.show]:
            print(f"    new: {x}\n    old: {y}")
    print(f"{same} of {total} kernels have the same SASS")


if __name__ == "__main__":
    main()
