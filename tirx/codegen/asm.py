"""Inline PTX: one emitter for ``T.ptx.asm`` and every op declared with a ``PTX`` template.

The template language:

``{i}``         operand ``i`` as an input register; the constraint follows its type
                (``r`` 32-bit ints/bool, ``l`` 64-bit ints and pointers, ``f`` float32,
                ``d`` float64, ``h`` 16-bit types)
``{i:smem}``    operand ``i`` (a pointer) as a 32-bit shared-window address (``r``)
``{i:imm}``     operand ``i`` as an immediate (``n``; must be an integer literal)
``{i:out}``     operand ``i`` (a buffer element, e.g. ``acc[3]``) as a write-only output
``{i:inout}``   operand ``i`` (a buffer element) read and written (``+``)
``{out}``       the call's result (its type is the call's ``ty``; bool results are
                written as a 0/1 u32 register)
``{{`` ``}}``   literal braces; a literal ``%`` needs no escaping

Impure ops are ``asm volatile`` with a ``"memory"`` clobber, so the compiler neither drops
nor reorders them around memory. The emitter calls back into the code generator (``cg``)
and imports nothing from it.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import OpError
from ..ir import BufferLoad, Call, IntImm, PointerType, PrimType, VoidType

__all__ = ["asm_bind", "asm_call", "template_outputs"]

_PH = re.compile(r"\{\{|\}\}|\{(\w+)(?::(\w+))?\}")


def template_outputs(template: str) -> frozenset[int]:
    """The operand indices ``template`` binds as outputs (``{i:out}``, ``{i:inout}``): the
    only buffer elements the instruction writes (memory it writes goes through addresses)."""
    return frozenset(int(k) for k, mod in _PH.findall(template) if mod in ("out", "inout") and k.isdigit())


def _constraint(t: Any) -> tuple[str, str]:
    """(constraint letter, C type used for the register) of a value type."""
    if isinstance(t, PointerType):
        return "l", "uint64_t"
    if not isinstance(t, PrimType) or t.lanes != 1:
        raise OpError(f"inline PTX: operands must be scalars or pointers, got {t}")
    if t.is_bool:
        return "r", "unsigned int"
    if t.base in ("float32",):
        return "f", "float"
    if t.base == "float64":
        return "d", "double"
    if t.bits == 64:
        return "l", "uint64_t"
    if t.bits == 16:
        return "h", "unsigned short"
    return "r", "unsigned int"


def _as_reg(cg: Any, e: Any) -> str:
    t = e.ty
    if isinstance(t, PointerType):
        return f"(uint64_t){cg.wrap(e, 15)}"
    if t.base == "float16":
        return f"__half_as_ushort({cg.expr(e)})"
    if t.base == "bfloat16":
        return f"__bfloat16_as_ushort({cg.expr(e)})"
    if t.is_bool or (t.is_int and t.bits < 32 and t.bits != 16):
        return f"(unsigned){cg.wrap(e, 15)}"
    return cg.expr(e)


def asm_call(cg: Any, c: Call, template: str, operands: list, volatile: bool, out_var: str | None = None):
    """Emit ``template`` over ``operands``; returns an expression (or a statement for void)."""
    outs: list[tuple[str, str]] = []  # (constraint, lvalue)
    ins: list[tuple[str, str]] = []
    # an 8-bit output operand (no 8-bit register constraint): a 16-bit register ("h", as
    # TIRx) declared before the asm and stored to the element after it
    temps: list[str] = []
    stores: list[str] = []
    slots: dict[tuple, tuple[str, int]] = {}
    res_t = c.ty
    has_res = not isinstance(res_t, VoidType)
    res_reg = None
    if has_res:
        letter, rct = _constraint(res_t)
        res_reg = ("r", rct) if (isinstance(res_t, PrimType) and res_t.is_bool) else (letter, rct)

    def ref(key: Any, mod: str | None) -> str:
        k = (key, mod)
        if k in slots:
            kind, i = slots[k]
            return f"%{i}" if kind == "out" else f"%@{i}"
        if key == "out":
            if not has_res:
                raise cg.error(
                    f"inline PTX for T.{c.op.name}: {{out}} used but the call has no result type", c
                )
            assert res_reg is not None  # set when the call has a result
            outs.append((f"={res_reg[0]}", "tirx_r"))
            slots[k] = ("out", len(outs) - 1)
            return f"%{len(outs) - 1}"
        try:
            i = int(key)
            e = operands[i]
        except (ValueError, IndexError):
            raise cg.error(
                f"inline PTX for T.{c.op.name}: placeholder {{{key}}} names no operand "
                f"(there are {len(operands)})",
                c,
            ) from None
        if mod in ("out", "inout"):
            if not isinstance(e, BufferLoad):
                raise cg.error(
                    f"inline PTX: operand {i} is an output ({{{i}:{mod}}}) and must be a buffer element", c
                )
            letter, _ = _constraint(e.ty)
            lv = cg.expr(e)
            if e.ty.is_int and e.ty.bits == 8:
                tmp = f"tirx_b{len(temps)}"
                init = f" = (unsigned short)(unsigned char)({lv})" if mod == "inout" else ""
                temps.append(f"unsigned short {tmp}{init};")
                stores.append(f"{lv} = ({cg.ctype(e.ty)}){tmp};")
                outs.append(("=h" if mod == "out" else "+h", tmp))
                slots[k] = ("out", len(outs) - 1)
                return f"%{len(outs) - 1}"
            if e.ty.base in ("float16", "bfloat16") or (e.ty.is_int and e.ty.bits < 32 and e.ty.bits != 16):
                # "h"/"r" registers need an unsigned lvalue of their width: the element's bits
                ct = "unsigned short" if e.ty.bits == 16 else "unsigned char"
                lv = f"*reinterpret_cast<{ct}*>(&({lv}))"
            outs.append(("=" + letter if mod == "out" else "+" + letter, lv))
            slots[k] = ("out", len(outs) - 1)
            return f"%{len(outs) - 1}"
        if mod == "smem":
            if not isinstance(e.ty, PointerType):
                raise cg.error(f"inline PTX: operand {i} ({{{i}:smem}}) must be a pointer", c)
            ins.append(("r", f"(unsigned)__cvta_generic_to_shared({cg.expr(e)})"))
        elif mod == "imm":
            if not isinstance(e, IntImm):
                raise cg.error(f"inline PTX: operand {i} ({{{i}:imm}}) must be an integer literal", c)
            ins.append(("n", str(e.value)))
        elif mod is None:
            letter, _ = _constraint(e.ty)
            ins.append((letter, _as_reg(cg, e)))
        else:
            raise cg.error(f"inline PTX: unknown placeholder modifier {mod!r} (use smem, imm, out, inout)", c)
        slots[k] = ("in", len(ins) - 1)
        return f"%@{len(ins) - 1}"

    def sub(m: re.Match) -> str:
        t = m.group(0)
        if t == "{{":
            return "{"
        if t == "}}":
            return "}"
        return ref(m.group(1), m.group(2))

    body = _PH.sub(sub, template.replace("%", "%%"))
    # inputs are numbered after the outputs
    body = re.sub(r"%@(\d+)", lambda m: f"%{len(outs) + int(m.group(1))}", body)
    text = body.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n\\t")
    out_s = ", ".join(f'"{k}"({v})' for k, v in outs)
    in_s = ", ".join(f'"{k}"({v})' for k, v in ins)
    vol = "asm volatile" if volatile else "asm"
    parts = [f'"{text}"', out_s, in_s] + (['"memory"'] if volatile else [])
    while len(parts) > 1 and not parts[-1]:
        parts.pop()
    stmt = f"{vol}({' : '.join(p if p else '' for p in parts)})".replace(" :  : ", " : : ")
    if temps:  # the 8-bit outputs' registers around the asm
        stmt = " ".join([*temps, f"{stmt};", *stores])
        if not has_res:
            return "{ " + stmt + " }"
        stmt = stmt[:-1] if stmt.endswith(";") else stmt
    if not has_res:
        return stmt
    assert res_reg is not None  # set when the call has a result
    rct = res_reg[1]
    if out_var is not None:
        stmt = stmt.replace("(tirx_r)", f"({out_var})", 1)
        return ("{ " + stmt + "; }" if temps else stmt), rct
    conv = "tirx_r"
    assert isinstance(res_t, (PrimType, PointerType))  # _constraint(res_t) accepted it above
    if res_t.is_bool if isinstance(res_t, PrimType) else False:
        conv = "tirx_r != 0"
    elif isinstance(res_t, PointerType):
        conv = f"({cg.ctype(res_t)})tirx_r"
    elif res_t.base == "float16":
        conv = "__ushort_as_half(tirx_r)"
    elif res_t.base == "bfloat16":
        conv = "__ushort_as_bfloat16(tirx_r)"
    elif rct != cg.ctype(res_t):
        conv = f"({cg.ctype(res_t)})tirx_r"
    return f"[&]() {{ {rct} tirx_r; {stmt}; return {conv}; }}()"


def asm_bind(cg: Any, s: Any, tmpl: str, operands: list, vol: bool) -> bool:
    """``x = <asm with a result>``: declare ``x`` and let the asm write it directly; False
    when the result type needs a conversion (then the caller emits a plain assignment)."""
    c = s.value
    t = c.ty
    if not isinstance(t, PrimType) or t.is_bool or t.base in ("float16", "bfloat16") or t.lanes != 1:
        return False
    _, rct = _constraint(t)
    if rct != cg.ctype(t) and not (t.base in ("int32", "uint32") or (t.bits == 64 and t.is_int)):
        return False
    name = cg.define(s.var)
    stmt, _ = asm_call(cg, c, tmpl, operands, vol, out_var=name)
    cg.line(f"{cg.ctype(t)} {name};", s)
    if rct != cg.ctype(t):
        stmt = stmt.replace(f"({name})", f"(*({rct}*)&{name})", 1)
    cg.line(f"{stmt};", s)
    return True
