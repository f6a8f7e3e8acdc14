"""A check of the PTX NVRTC makes from tirx's CUDA that needs no GPU (``tirx fuzz --ptx``:
``tirx.testing.gpu_compare.ptx_campaign`` runs it over random kernels).

``ld.global.nc`` reads through the non-coherent (read-only) path, which does not see the
kernel's own stores: it is right only for memory nothing writes while the kernel runs. NVRTC
13.0 emits it for a load it merged from two (``c ? W[i] : X[j]``) when one side is a
``__restrict__`` pointer nothing stores through, even where the other side is memory the kernel
writes (docs/cuda.md, "Kernel parameters"; found by the CUDA-against-interpreter fuzz). This
check finds such loads in the PTX itself: for every ``ld.global.nc`` it follows the address's
registers back through the arithmetic that made them (not through loaded values: an address
computed from a loaded value points elsewhere) to the kernel parameters they come from, and
fails when one of them is a parameter the kernel also stores, atomically updates or reduces
through. On random kernels of the CUDA campaign it found 5 to 51 such loads in each of three
runs of 3,682 to 6,062 kernels before the codegen fix, and none in two runs of 4,861 and
5,776 after (2026-12-07).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["check_ptx", "nc_loads_of_written_memory"]

_INSTR = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)\s+(.*?);\s*$")
_REG = re.compile(r"%r[d]?\d+")
_ENTRY = re.compile(r"\.(?:visible\s+)?\.entry\s+")
_FUNC = re.compile(r"\n\.(?:visible\s+|weak\s+|extern\s+)*\.func\s")
#: instructions whose result is not an address computed from their register operands
_OPAQUE = ("ld.", "atom.", "red.", "st.", "bar", "ret", "bra", "cp.", "fence", "mbarrier", "call")
_WRITES = ("st.", "atom.", "red.")


def _operands(rest: str) -> list[str]:
    return [x.strip() for x in re.split(r",(?![^\[]*\])", rest)]


def nc_loads_of_written_memory(ptx: str, pointers: set[int] | None = None) -> list[tuple[str, set[str]]]:
    """``[(the ld.global.nc line, {the written kernel parameters its address comes from})]``
    for each such load of each kernel in ``ptx`` whose address comes from a pointer parameter
    the kernel writes through. ``pointers``: the indices of the kernel's pointer parameters
    (an index computed from a scalar, ``M * N``, is no address of it); None: its 64-bit ones."""
    out: list[tuple[str, set[str]]] = []
    for chunk in _ENTRY.split(ptx)[1:]:
        body = _FUNC.split(chunk)[0]  # the kernel alone (device functions follow it)
        name = body.split("(", 1)[0].strip()
        head = body.split(")", 1)[0]
        wide = {int(i) for i in re.findall(rf"\.param\s+\.[ub]64[^,\n]*?{re.escape(name)}_param_(\d+)", head)}
        ptrs = wide if pointers is None else pointers
        defs: dict[str, list] = {}  # register -> [("param", name) | ("op", [registers])]
        loads: list[tuple[str, list[str]]] = []
        writes: list[list[str]] = []
        for line in body.splitlines():
            m = _INSTR.match(line)
            if m is None:
                continue
            op, rest = m.groups()
            addr = re.search(r"\[([^\]]*)\]", rest)
            if op.startswith("ld.global.nc") and addr:
                loads.append((line.strip(), _REG.findall(addr.group(1))))
            elif op.startswith(_WRITES) and addr:
                writes.append(_REG.findall(addr.group(1)))
            ops = _operands(rest)
            if not ops or not ops[0].startswith(("%", "{")):
                continue
            if op.startswith("ld.param"):
                p = re.search(r"\[(\w+)", rest)
                defs.setdefault(ops[0], []).append(("param", p.group(1) if p else "?"))
            elif not op.startswith(_OPAQUE):
                defs.setdefault(ops[0].strip("{}"), []).append(("op", _REG.findall(" ".join(ops[1:]))))

        written: set[str] = set()
        for regs in writes:
            written |= _roots(defs, regs, name, ptrs)
        for text, regs in loads:
            bad = _roots(defs, regs, name, ptrs) & written
            if bad:
                out.append((text, bad))
    return out


def _roots(defs: dict, regs: list[str], kernel: str, pointers: set[int]) -> set[str]:
    """The pointer parameters of ``kernel`` the registers ``regs`` are computed from."""
    got: set[str] = set()
    seen: set[str] = set()
    todo = list(regs)
    while todo:
        r = todo.pop()
        if r in seen:
            continue
        seen.add(r)
        for kind, v in defs.get(r, ()):
            if kind == "param":
                got.add(v)
            else:
                todo += v
    pre = kernel + "_param_"
    return {
        p for p in got if p.startswith(pre) and p[len(pre) :].isdigit() and int(p[len(pre) :]) in pointers
    }


def check_ptx(kernel: Any) -> None:
    """AssertionError when a compiled kernel (``tirx.compile(..., target="cuda")``: its kernels'
    PTX) has an ``ld.global.nc`` of memory it writes."""
    from tirx.ir import PointerType

    ks = list(getattr(kernel, "kernels", {}).values()) or [kernel]
    for k in ks:
        for kk in list(getattr(k, "kernels", {}).values()) or [k]:
            names = [p.name for p in kk.info.params]
            ptrs = {
                i
                for i, p in enumerate(kk.info.params)
                if p.kind in ("buffer", "handle") or (p.kind == "host" and isinstance(p.ty, PointerType))
            }
            bad = nc_loads_of_written_memory(kk.ptx, ptrs)
            if bad:
                lines = "\n".join(
                    f"  {t}  (from {', '.join(sorted(_param_name(names, p) for p in ps))})" for t, ps in bad
                )
                raise AssertionError(
                    f"{kk.name}: the PTX reads memory the kernel writes through the non-coherent path "
                    f"(ld.global.nc does not see the kernel's own stores):\n{lines}"
                )


def _param_name(names: list[str], ptx_name: str) -> str:
    i = int(ptx_name.rsplit("_", 1)[1])
    return names[i] if i < len(names) else ptx_name
