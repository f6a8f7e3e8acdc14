"""The PTX instruction table against TIRx's (tests/data/tirx_golden/surface.json).

For every TIRx form of the families below, tirx has a row that takes the same
modifier slots (same count, same optional flags, at least the same choices) and the same
number of operands -- so TIRx's printed text of the form has a row to load into -- unless
the form is listed as knowingly unsupported below, with the reason.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tirx.ops.ptx_table import Match, Row, escape, opcodes, render

SURFACE = json.loads((Path(__file__).parent / "data" / "tirx_golden" / "surface.json").read_text())["ptx"]

#: the families of tirx/ops/ptx_rows_{memory,arith,warp,mma,multimem,sm100,tcgen05}.py
ROW_FAMILIES = {
    "ld", "st", "mov", "cvt", "cvt_pack", "bar", "barrier", "activemask", "vote_sync", "redux_sync", "atom",
    "red", "getctarank", "griddepcontrol", "ldmatrix", "stmatrix", "mma", "st_async", "add", "sub", "mul",
    "mad", "fma", "min", "max", "abs", "neg", "and", "or", "xor", "not", "shl", "shr", "popc", "clz", "brev",
    "bfe", "bfi", "bfind", "prmt", "lop3", "selp", "setp", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos",
    "tanh", "copysign", "div", "rem", "shf", "dp4a", "dp2a", "mul24", "mad24", "sad", "testp", "set", "slct",
    "bmsk", "szext", "fns", "cnot", "ldu", "red_async", "isspacep", "prefetchu", "createpolicy", "discard",
    "applypriority", "match", "movmatrix",
    # tirx/ops/ptx_rows_{multimem,sm100,tcgen05}.py (their files list the forms left out, with reasons)
    "multimem_cp", "multimem_ld_reduce", "multimem_red", "multimem_red_async", "multimem_st", "multimem_st_async",
    "tensormap_replace", "tensormap_cp_fenceproxy", "st_bulk", "clusterlaunchcontrol", "clmad", "tcgen05", "fabric", "spcompress", "spdecompress",
}  # fmt: skip

#: operands TIRx's table lists that its call does not take: the 128-byte size is written
#: into the instruction
IMPLIED_OPERANDS = {("discard", "discard"): 1, ("applypriority", "applypriority"): 1,
                    ("tensormap_cp_fenceproxy", "tensormap_cp_fenceproxy"): 1, ("st_bulk", "st_bulk"): 1,
                    ("fabric", "fabric_try_pullred"): 1}  # fmt: skip

#: TIRx forms of the row families above that tirx leaves out on purpose
UNSUPPORTED_FORMS = {
    ("mov", "mov_pack_b64x2"): "128-bit registers (.b128): tirx has no 128-bit scalar type",
    ("mov", "mov_unpack_b64x2"): "128-bit registers (.b128): tirx has no 128-bit scalar type",
    ("mov", "mov_pack_b32x4"): "128-bit registers (.b128): tirx has no 128-bit scalar type",
    ("mov", "mov_unpack_b32x4"): "128-bit registers (.b128): tirx has no 128-bit scalar type",
}  # fmt: skip

#: families whose rows are kept in tirx/ops/ptx_rows.py and hopper.py: their TIRx forms
#: that are not rows yet (the mbarrier wait forms with a report, the wgmma.mma_async
#: forms, ...) are not checked here (cp's are: every sm_90 form of cp is a row)
_OTHER = re.compile(r"^(fence|mapa|mbarrier|prefetch|wgmma|cvta|elect_sync|setmaxnreg|shfl_sync)$")


def _why_unsupported(family: str, form: dict) -> str | None:
    arch = form["arch"] or ""
    if re.match(r"sm_1\d\d", arch):
        return f"{arch} (Blackwell) only: the table covers sm_90a and older"
    return UNSUPPORTED_FORMS.get((family, form["name"]))


def _accepts(row: Row, form: dict, family: str = "") -> bool:
    if row.bare or len(row.slots) != len(form["slots"]):
        return False
    for mine, theirs in zip(row.slots, form["slots"]):
        if mine.optional != theirs["optional"] or not set(theirs["choices"]) <= set(mine.choices):
            return False
    n = len(form["operands"]) - IMPLIED_OPERANDS.get((family, form["name"]), 0)
    return row.n_required <= n <= len(row.operands)


def _forms():
    ops = opcodes()
    for family, entry in sorted(SURFACE.items()):
        name = "ptx." + escape(family)
        if name in ops and entry.get("kind") == "instruction":
            for form in entry["forms"]:
                yield family, form, ops[name]


def test_the_row_families_are_declared():
    declared = {o.opcode for o in opcodes().values()}
    assert declared >= ROW_FAMILIES, sorted(ROW_FAMILIES - declared)
    assert set(SURFACE) >= ROW_FAMILIES


def test_every_tirx_form_has_a_row():
    missing = []
    for family, form, opc in _forms():
        if any(_accepts(r, form, family) for r in opc.rows):
            continue
        if _why_unsupported(family, form) is None and not _OTHER.match(family):
            missing.append((family, form["name"]))
    assert not missing, missing


def test_the_unsupported_list_is_current():
    # a listed form that a row now takes must leave the list
    stale = []
    for family, form, opc in _forms():
        listed = (family, form["name"]) in UNSUPPORTED_FORMS
        if listed and any(_accepts(r, form, family) for r in opc.rows):
            stale.append((family, form["name"]))
    assert not stale, stale
    forms = {(f, fm["name"]) for f, fm, _ in _forms()}
    assert set(UNSUPPORTED_FORMS) <= forms


def test_coverage_of_the_row_families():
    # the share of TIRx's forms of these families that tirx takes (sm_90a and older: all)
    total = taken = sm90 = 0
    for family, form, opc in _forms():
        if family not in ROW_FAMILIES:
            continue
        total += 1
        ok = any(_accepts(r, form, family) for r in opc.rows)
        taken += ok
        if not re.match(r"sm_1\d\d", form["arch"] or ""):
            sm90 += 1
            assert ok or (family, form["name"]) in UNSUPPORTED_FORMS, (family, form["name"])
    assert total > 200 and taken / total > 0.6, (taken, total)


# ----------------------------------------------------------------------------- rendering
_ROWS = sorted(
    ((o, r) for o in opcodes().values() if o.opcode in ROW_FAMILIES for r in o.rows if r.asm is None),
    key=lambda t: (t[0].name, t[1].name),
)


@st.composite
def _row_mods(draw):
    opc, row = draw(st.sampled_from(_ROWS))
    mods = tuple(draw(st.sampled_from((("",) if s.optional else ()) + s.choices)) for s in row.slots)
    lay = row.layout(mods)
    filled = tuple(i for i, o in enumerate(lay) if not o.optional or draw(st.booleans()))
    return opc, row, mods, filled


@settings(max_examples=300, deadline=None)
@given(_row_mods())
def test_default_asm_names_every_operand_once(case):
    # the generated template writes the instruction with its modifiers, each operand once,
    # vectors in balanced braces, and PTX's sink for a left-out output
    from tirx.ir import IntImm
    from tirx.ir.types import uint32

    opc, row, mods, filled = case
    ops = tuple(IntImm(k, uint32) for k in range(len(filled)))  # rendering reads types only
    tmpl, operands = render(Match(row, mods, ops, filled), opc.opcode)
    mn = ".".join([row.mnemonic or opc.opcode, *(m for m in mods if m)])
    assert mn + " " in tmpl or tmpl.rstrip(" }").endswith(mn + ";")
    # tokenized as tirx/codegen/asm.py reads a template: {{, }}, or a placeholder
    toks = [m.group(0) for m in re.finditer(r"\{\{|\}\}|\{(\w+)(?::\w+)?\}", tmpl)]
    placed = sorted(int(t[1:-1].split(":")[0]) for t in toks if t not in ("{{", "}}"))
    assert placed == list(range(len(operands)))
    depth = 0
    for t in toks:
        depth += {"{{": 1, "}}": -1}.get(t, 0)
        assert depth >= 0
    assert depth == 0
