"""The PTX instruction table: an instruction with modifier chains is data, not one op per variant.

A ``Row`` is one instruction form: its opcode (``mbarrier``), its modifier ``Slot``s in
PTX order (name, allowed values, optional or not), its ``Operand``s (name and kind), the
type of the value it returns (void for TIRx's forms, which write outputs through buffer
elements) and, when the generic ``{mnemonic} operands;`` layout does not fit, its
inline-asm template. ``declare_opcode`` turns the rows of one opcode into ONE op
(``ptx.mbarrier``) of the op table; from the rows come

1. the script surface: ``T.ptx.mbarrier.init.shared__cta.b64(addr, count)`` (a trailing
   ``_`` escapes a Python keyword, ``__`` stands for ``::``, ``_dot_`` / ``_col_`` for ``.`` /
   ``:``), an object that is also
   callable in the printed positional form; as in TIRx, a chain is order-free (each
   modifier fills the first open slot that lists it);
2. the printed form, TIRx's: operands, then one string per slot of the matched row (``""``
   for an absent optional slot), then the trailing marker (``""`` unless the call has
   predicate inputs or a guard; below):
   ``T.ptx.mbarrier(addr, T.uint32(1), "init", "", "shared::cta", "b64", "")``;
3. checking: a chain or call that matches no row is a TypeError naming the allowed
   modifiers (the front ends turn it into a located DiagnosticError);
4. the CUDA lowering: the call's strings select the row, whose template is rendered in the
   language of ``tirx/codegen/asm.py`` and emitted through ``cg.asm``.

Operand kinds (what a chain/Python call converts, what the IR must hold):

``smem``   a 32-bit shared-window address; a pointer is converted to
           ``T.cuda.cvta_generic_to_shared(p)``, a Python int to ``T.uint32``
``u32``    a 32-bit integer value; a Python int becomes ``T.uint32(v)``, another integer
           expression is cast to uint32
``b32``    any 32-bit value (int or float); a Python int becomes ``T.uint32(v)``
``imm``    an integer literal emitted as an immediate; a Python int becomes ``T.int32(v)``
``addr``   a generic 64-bit address: a pointer or a 64-bit integer
``space_addr``  ``smem`` when the row's ``space`` slot names a shared space, else ``addr``
           (PTX reads an address without a state space as generic)
``out32``, ``out64``  a writable 32/64-bit buffer element (``x[0]``, a ``T.local_scalar``)
           the instruction writes
``pred``   a writable 32-bit element set to 1/0 from the instruction's predicate result
``any``, ``int``  any expression / any integer expression (the value forms kept from
           before the table: ``T.ptx.mapa(p, rank)``, ``T.ptx.elect_sync()``)
``int64``  any integer expression; a Python int becomes ``T.uint64(v)`` (st.bulk's size, as
           TIRx converts it; a narrower expression is widened by the row's lowering)
``reg``    a register value typed by the operand's ``ty`` (a slot name whose chosen token
           types it, or a fixed token such as ``u32``): a Python number becomes that
           type's literal (``T.uint32(1)``, ``T.float32(1.0)``); a 32/64-bit token needs a
           value of that width. With the token ``pred`` it is a ``pin``
``dst``    a writable buffer element the instruction writes, typed like ``reg`` (a
           32/64-bit token needs an element of that width); with ``pred`` it is a ``pred``
``inout``  a ``dst`` the instruction also reads (wgmma's accumulators: ``+f`` in the asm)
``pin``    a predicate input: a bool expression (or an integer, nonzero = true); the
           printed form marks its position in the trailing string (``"p3"``), as TIRx does

An operand with ``lanes`` is a register vector ``{a, b, ...}``: it takes one argument per
lane, named ``d0, d1, ...``; ``lanes`` is a slot name whose token ends in the count
(``v4``, ``x2``; no token: one plain operand), an int, or a function of the chosen
modifiers (``{slot name: token}``) giving the count (mma fragments).

An optional operand with ``when`` (a slot name) is there exactly when that slot is chosen
(the cache policy of ``.L2::cache_hint``), which tells ``(d, addr, value)`` from
``(addr, value, policy)`` when ``d`` may be left out (PTX's sink ``_``).

A call without outputs may take ``pred=`` (a guard: ``@p`` before the instruction).
The trailing string of the printed form is TIRx's marker: comma-joined ``pred`` (a guard
predicate, ``pred=`` of a call without outputs, printed as the last operand) and ``p<i>``
for each predicate input; ``""`` when there is neither.

An operand may be ``optional`` (an absent output is PTX's sink ``_``, an absent input is
left out). A row with ``bare=True`` prints with no strings at all (its opcode's plain
call, ``T.ptx.elect_sync()``). This module imports only ``tirx.ir`` at import time.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeGuard

import attrs

from ..ir import op as _op
from ..ir.expr import BufferLoad, Call, Cast, FloatImm, IntImm, PrimExpr, StringImm, convert
from ..ir.op import declare, register_handler
from ..ir.types import PointerType, PrimType, Type, as_prim, int32, uint32, uint64, void

__all__ = [
    "Opcode",
    "Operand",
    "Row",
    "Slot",
    "declare_opcode",
    "match",
    "operands",
    "render",
    "row",
    "slots",
]

KINDS = (
    "smem", "space_addr", "u32", "b32", "imm", "addr", "out32", "out64", "pred", "any", "int", "int64", "reg", "dst",
    "pin", "inout",
)  # fmt: skip
_OUT_KINDS = ("out32", "out64", "pred", "dst", "inout")

#: PTX type token -> the dtype of its register (packed pairs and tf32 live in 32-bit
#: registers, f32x2 in 64); None: no scalar dtype (b128)
TOKEN_DTYPE: dict[str, str | None] = {
    "pred": "bool", "b8": "uint8", "u8": "uint8", "s8": "int8", "b16": "uint16", "u16": "uint16",
    "s16": "int16", "f16": "float16", "bf16": "bfloat16", "e4m3x2": "uint16", "e5m2x2": "uint16",
    "b32": "uint32", "u32": "uint32", "s32": "int32", "f32": "float32", "f16x2": "uint32",
    "bf16x2": "uint32", "u16x2": "uint32", "s16x2": "uint32", "tf32": "uint32", "b64": "uint64",
    "u64": "uint64", "s64": "int64", "f64": "float64", "f32x2": "uint64", "b128": None,
    "ue8m0x2": "uint16", "e2m3x2": "uint16", "e3m2x2": "uint16", "e2m1x4": "uint16", "e4m3x4": "uint32",
    "e5m2x4": "uint32", "e2m3x4": "uint32", "e3m2x4": "uint32",
}  # fmt: skip


@attrs.define(slots=True, frozen=True)
class Slot:
    """A modifier position: its name, the values it allows, whether it may be absent."""

    name: str
    choices: tuple[str, ...]
    optional: bool = False

    def __attrs_post_init__(self) -> None:
        if not self.choices or any(not c or not isinstance(c, str) for c in self.choices):
            raise ValueError(f"PTX slot {self.name!r}: choices must be non-empty strings")


@attrs.define(slots=True, frozen=True)
class Operand:
    """An operand: its name (used in templates and errors), kind (module doc), whether it
    may be left out, and whether PTX takes it as a memory operand (``[addr]``)."""

    name: str
    kind: str
    optional: bool = False
    mem: bool = False
    ty: Any = ""  # reg/dst: the slot whose token types it, a fixed token, or a function of the modifiers
    lanes: Any = None  # a register vector: slot name, int, or function of the modifiers
    when: str = ""  # an optional operand present exactly when this slot is chosen

    def __attrs_post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"PTX operand {self.name!r}: unknown kind {self.kind!r} (one of {KINDS})")


@attrs.define(slots=True, frozen=True)
class Row:
    """One instruction form. ``asm`` (optional) is a template in tirx/codegen/asm.py's
    language with names for indices: ``{mn}`` the mnemonic with the chosen modifiers,
    ``{addr}`` an operand by name (its placeholder modifier follows its kind), ``{out}``
    the result, ``{{``/``}}`` braces. ``check({name: operand})`` may return an error
    message, ``check_mods({slot: token})`` refuse a combination of modifiers (a message).
    ``cuda``/``interp`` override the lowering / give CPU semantics."""

    name: str
    slots: tuple[Slot, ...] = ()
    operands: tuple[Operand, ...] = ()
    mnemonic: str = ""
    result: Any = None  # None (void), a Type, or a function of the operands -> Type
    asm: Any = None  # a template, or a function of the chosen modifiers ({slot: token}) giving one
    volatile: bool = True
    bare: bool = False
    doc: str = ""
    check: Callable | None = None
    check_mods: Callable | None = None  # ({slot: token}) -> an error message or None
    cuda: Callable | None = None
    interp: Callable | None = None

    @property
    def n_required(self) -> int:
        return sum(1 for o in self.operands if not o.optional)

    def signature(self, opcode: str) -> str:
        """``mbarrier.init[.layout::v0|.layout::v1][.shared|.shared::cta].b64(addr, count)``."""
        parts = [self.mnemonic or opcode]
        for s in self.slots:
            alt = "|".join("." + c for c in s.choices)
            parts.append(f"[{alt}]" if s.optional else (alt if len(s.choices) == 1 else f"{{{alt}}}"))
        ops = ", ".join(o.name + ("[..]" if o.lanes is not None else "") + ("?" if o.optional else "")
                        for o in self.operands)  # fmt: skip
        return "".join(parts) + f"({ops})"

    def layout(self, mods: Sequence[str]) -> tuple[Operand, ...]:
        """The operands of a call with these modifiers: a register vector is one operand
        per lane (``d0, d1, ...``)."""
        return _layout(self, tuple(mods))[0]


# ------------------------------------------------------------------ compact row specs
def slots(spec: str) -> tuple[Slot, ...]:
    """Slots from ``"sem?=weak|relaxed space=global|shared type=b32"`` (``?``: optional)."""
    out = []
    for item in spec.split():
        name, _, choices = item.partition("=")
        opt = name.endswith("?")
        out.append(Slot(name.rstrip("?"), tuple(choices.split("|")), opt))
    return tuple(out)


_OPERAND = re.compile(r"(\w+):(\w+)(?:@([\w:]+))?(?:\*(\w+))?(!?)(\??)(\w*)$")


def operands(spec: str) -> tuple[Operand, ...]:
    """Operands from ``"d:dst@type*vec addr:space_addr! policy:reg@b64?hint"``: name:kind,
    ``@`` the type slot or token, ``*`` the lanes slot (or count), ``!`` a memory operand
    (``[addr]``), ``?`` optional (``?slot``: present exactly when that slot is chosen)."""
    out = []
    for item in spec.split():
        m = _OPERAND.match(item)
        if m is None:
            raise ValueError(f"PTX operand spec {item!r}: expected name:kind[@ty][*lanes][!][?[slot]]")
        name, kind, ty, lanes, mem, opt, when = m.groups()
        n: Any = int(lanes) if lanes and lanes.isdigit() else lanes
        out.append(Operand(name, kind, bool(opt), bool(mem), ty or "", n, when))
    return tuple(out)


def row(name: str, slot_spec: str, operand_spec: str = "", **kw: Any) -> Row:
    """A ``Row`` from compact slot and operand specs (``slots``, ``operands``)."""
    return Row(name, slots(slot_spec), operands(operand_spec), **kw)


# ------------------------------------------------------------------ escapes
def unescape(attr: str) -> str:
    """A Python attribute spelling to the PTX modifier: ``async_`` -> ``async``,
    ``shared__cta`` -> ``shared::cta``, ``_1d`` -> ``1d``, ``_dot_`` -> ``.`` (a modifier
    that is two PTX modifiers in one slot, fabric's ``...::bytes.mbarrier::report::fabric``),
    ``_col_`` -> ``:`` (``sp__2_col_4`` is ``sp::2:4``)."""
    s = attr
    if s.endswith("_") and not s.endswith("__"):
        s = s[:-1]
    if len(s) > 1 and s[0] == "_" and s[1].isdigit():
        s = s[1:]
    return s.replace("_dot_", ".").replace("_col_", ":").replace("__", "::")


def escape(mod: str) -> str:
    """The attribute spelling of a modifier (inverse of ``unescape`` for table values)."""
    import keyword

    s = mod.replace("::", "__").replace(".", "_dot_").replace(":", "_col_")
    if keyword.iskeyword(s):
        s += "_"
    if s[:1].isdigit():
        s = "_" + s
    return s


# ------------------------------------------------------------------ operand checks
def _is_int(t: Any, bits: int | None = None) -> TypeGuard[PrimType]:
    return isinstance(t, PrimType) and t.lanes == 1 and t.is_int and (bits is None or t.bits == bits)


def _width(token: str | None) -> int | None:
    """The register width a 32/64-bit type token asks for (None: not checked)."""
    dt = TOKEN_DTYPE.get(token or "")
    if dt is None or dt == "bool":
        return None
    bits = as_prim(dt).bits
    return bits if bits in (32, 64) else None


def _shared_window() -> Any:
    """The op giving a pointer's 32-bit shared-window address (found by its trait)."""
    return _op.find(shared_window=True)


def _operand_ok(kind: str, e: Any, token: str | None = None) -> str | None:
    """None when the (IR) operand fits ``kind``, else what it must be."""
    t = getattr(e, "ty", None)
    if kind in ("reg", "dst", "inout"):
        w = _width(token)
        what = f"a {w}-bit " if w else "a "
        if kind in ("dst", "inout"):
            ok = (
                isinstance(e, BufferLoad)
                and isinstance(t, PrimType)
                and t.lanes == 1
                and (w is None or t.bits == w)
            )
            return None if ok else what + f"writable buffer element for .{token} (x[0] or a T.local_scalar)"
        if isinstance(t, PointerType):
            return None if w in (None, 64) else what + f"value for .{token}"
        ok = isinstance(t, PrimType) and t.lanes == 1 and (w is None or t.bits == w)
        return None if ok else what + f"scalar value for .{token}" if token else "a scalar value"
    if kind == "pin":
        ok = isinstance(t, PrimType) and t.lanes == 1 and (t.is_bool or t.is_int)
        return None if ok else "a predicate (a bool expression)"
    if kind == "smem":
        if _is_int(t, 32) or (isinstance(t, PointerType) and t.scope.startswith("shared")):
            return None
        return f"a 32-bit shared address (T.{_shared_window().name}(p)) or a shared pointer"
    if kind == "u32":
        return None if _is_int(t) and t.bits <= 32 else "a 32-bit integer"
    if kind == "b32":
        return None if isinstance(t, PrimType) and t.lanes == 1 and t.bits == 32 else "a 32-bit value"
    if kind == "imm":
        return None if isinstance(e, IntImm) else "an integer literal"
    if kind == "addr":
        return None if isinstance(t, PointerType) or _is_int(t, 64) else "a pointer or a 64-bit address"
    if kind in ("out32", "pred"):
        ok = isinstance(e, BufferLoad) and isinstance(t, PrimType) and t.lanes == 1 and t.bits == 32
        return None if ok else "a writable 32-bit buffer element (x[0] or a T.local_scalar)"
    if kind == "out64":
        ok = isinstance(e, BufferLoad) and _is_int(t, 64)
        return None if ok else "a writable 64-bit integer buffer element (x[0] or a T.local_scalar)"
    if kind in ("int", "int64"):
        return None if isinstance(t, PrimType) and (t.is_int or t.is_bool) else "an integer expression"
    return None if isinstance(e, PrimExpr) else "an expression"


#: operand converters ``(kind, x, convert) -> IR | None`` tried first (an operand helper
#: such as ``T.ptx.addr(base, off)`` converts its base by the position's kind:
#: tirx/ops/ptx_operands.py)
_OPERAND_CONVERTERS: list[Callable] = []


def register_operand_converter(conv: Callable) -> None:
    """Let an operand helper convert itself in a row's operand position."""
    _OPERAND_CONVERTERS.append(conv)


def _convert_operand(kind: str, x: Any, token: str | None = None, mem: bool = False) -> Any:
    """What a script call hands the IR for ``x`` in a ``kind`` position (TIRx's conversions);
    ``mem``: a memory operand (``[addr]``)."""
    conv = getattr(x, "__tirx_expr__", None)
    if conv is not None:
        x = conv()
    for hook in _OPERAND_CONVERTERS:
        got = hook(kind, x, lambda k, v: _convert_operand(k, v, token))
        if got is not None:
            return got
    data = getattr(x, "data", None)  # a Buffer passed as an address
    if kind in ("addr", "any") and data is not None and not isinstance(x, PrimExpr):
        x = data
    if kind == "pin" and isinstance(x, (bool, int)):
        return IntImm(int(x), uint32)  # TIRx's literal predicate
    if kind == "reg" and isinstance(x, (bool, int, float)) and TOKEN_DTYPE.get(token or ""):
        dt = as_prim(TOKEN_DTYPE[token or ""])
        if dt.is_float:
            return FloatImm(float(x), dt)
        if isinstance(x, int) and not dt.is_bool:
            return IntImm(x, dt)
    if isinstance(x, bool):
        return convert(x)
    if isinstance(x, int):
        if kind in ("smem", "u32", "b32"):
            return IntImm(x, uint32)
        if kind == "imm":
            return IntImm(x, int32)
        if kind == "int64":
            return IntImm(x, uint64)
        return convert(x)
    if not isinstance(x, PrimExpr):
        return x
    t = x.ty
    if kind == "smem" and isinstance(t, PointerType):
        # any pointer, as TIRx converts it (a shared buffer's ptr_to may be typed global)
        return Call(_shared_window(), (x,), uint32)
    if kind == "addr" and mem and t == uint64:
        # a 64-bit address handle as a memory operand (T.address_of(tensormap)): TIRx makes
        # the pun a visible T.reinterpret(x, ty=T.Ptr(T.void)), the same register in PTX (a
        # register operand such as mapa's or cvta's source stays the integer)
        return Call(_op.find(bitcast=True), (x,), PointerType(void))
    if kind in ("smem", "u32") and _is_int(t) and t != uint32 and t.bits <= 32:
        return Cast(uint32, x)
    return x


# ------------------------------------------------------------------ matching
class _Miss(NamedTuple):
    """Why a row does not take a call, and how far off it is (the nearest rows are reported)."""

    why: str
    far: int


def _fill(row: Row, tokens: Sequence[str]) -> list[str | None] | str:
    """Each chain token in the first open slot of ``row`` that lists it (TIRx's chains are
    order-free: ``atom.global_.v2.f32.add`` is ``atom.global.add.v2.f32``), or the first
    token with no open slot."""
    filled: list[str | None] = [None] * len(row.slots)
    for t in tokens:
        for k, sl in enumerate(row.slots):
            if filled[k] is None and t in sl.choices:
                filled[k] = t
                break
        else:
            return t
    return filled


def _assign_tokens(row: Row, tokens: Sequence[str]) -> tuple[str, ...] | _Miss:
    """Slot values for chain ``tokens`` in ``row``, or why they do not fit (``far``: the
    tokens not placed)."""
    filled = _fill(row, tokens)
    if isinstance(filled, str):
        return _Miss(f"'{filled}' has no open modifier slot", len(tokens) - tokens.index(filled))
    for sl, v in zip(row.slots, filled):
        if v is None and not sl.optional:
            return _Miss(f"missing required modifier .{sl.name} ({'|'.join(sl.choices)})", 0)
    return tuple(v or "" for v in filled)


def _assign_strings(row: Row, strings: Sequence[str]) -> tuple[str, ...] | _Miss:
    """Slot values for the printed form's strings in ``row``, or why they do not fit
    (``far``: the strings out of place, plus one for a wrong count)."""
    if row.bare:
        return () if not strings else _Miss("takes no modifier strings", len(strings) + 1)
    placed = 0
    why = None
    for s, v in zip(row.slots, strings):
        if (v == "" and s.optional) or v in s.choices:
            placed += 1
            continue
        allowed = "|".join(s.choices) + (' or ""' if s.optional else "")
        why = f"slot .{s.name} is {v!r}; allowed: {allowed}"
        break
    far = len(strings) - placed
    if len(strings) != len(row.slots) + 1:
        why = f"takes {len(row.slots) + 1} modifier strings ({len(row.slots)} slots and a trailing marker)"
        return _Miss(why, far + 1)
    if why is not None:
        return _Miss(why, far)
    return tuple(strings[:-1])  # the trailing marker is checked once the operands fit


def _token(row: Row, od: Operand, mods: Sequence[str]) -> str | None:
    """The type token of a reg/dst operand for these modifiers (None: not typed); ``ty`` may
    be a function of the chosen modifiers (tcgen05.commit's 16/32-bit multicast mask)."""
    if not od.ty:
        return None
    if callable(od.ty):
        return od.ty({s.name: v for s, v in zip(row.slots, mods)})
    for s, v in zip(row.slots, mods):
        if s.name == od.ty:
            return v or None
    return od.ty


def _kind(row: Row, od: Operand, mods: Sequence[str]) -> str:
    """The operand's kind for these modifiers (``space_addr`` follows the ``space`` slot,
    a reg/dst typed ``.pred`` is a predicate input/output)."""
    if od.kind in ("reg", "dst"):
        if _token(row, od, mods) == "pred":
            return "pin" if od.kind == "reg" else "pred"
        return od.kind
    if od.kind != "space_addr":
        return od.kind
    for s, v in zip(row.slots, mods):
        if s.name == "space":
            return "smem" if v.startswith("shared") else "addr"
    return "addr"


def _lane_count(row: Row, od: Operand, mods: tuple[str, ...]) -> int | None:
    """How many registers the vector operand ``od`` has (None: a plain operand)."""
    n = od.lanes
    if n is None or isinstance(n, int):
        return n
    if callable(n):
        return n({s.name: v for s, v in zip(row.slots, mods)})
    for s, v in zip(row.slots, mods):
        if s.name == n:
            digits = "".join(ch for ch in v if ch.isdigit())
            return int(digits) if v else None
    return None


@functools.lru_cache(maxsize=4096)
def _layout(row: Row, mods: tuple[str, ...]) -> tuple[tuple[Operand, ...], dict[str, tuple[str, ...]]]:
    """(the operands, one per lane of a vector; the vectors' lane names by operand name)."""
    if not any(o.lanes is not None for o in row.operands):
        return row.operands, {}
    out: list[Operand] = []
    groups: dict[str, tuple[str, ...]] = {}
    for od in row.operands:
        n = _lane_count(row, od, mods)
        if n is None:
            out.append(od)
            continue
        lanes = tuple(attrs.evolve(od, name=f"{od.name}{i}", lanes=None) for i in range(n))
        groups[od.name] = tuple(o.name for o in lanes)
        out += lanes
    return tuple(out), groups


def _fit_operands(
    row: Row, ops: Sequence[Any], convert_them: bool | str, mods: Sequence[str]
) -> tuple[tuple, tuple[int, ...]] | str:
    """(operands, indices of the row's operands (``layout``) they fill) or why they do not
    fit. Optional operands are left out first from the front outputs, then from the back.
    ``convert_them``: convert script values (``"chain"``: a chain or subscript call, which
    also makes a uint64 memory operand a pointer; the printed form keeps its operands' IR)."""
    layout = _layout(row, tuple(mods))[0]
    n = len(ops)
    n_req = sum(1 for o in layout if not o.optional)
    if n < n_req or n > len(layout):
        want = f"{n_req}" if n_req == len(layout) else f"{n_req} to {len(layout)}"
        return f"takes {want} operand(s) ({', '.join(o.name for o in layout)}), got {n}"
    opt = [i for i, o in enumerate(layout) if o.optional]
    drop_n = len(layout) - n
    chosen = {sl.name for sl, v in zip(row.slots, mods) if v}
    why = None
    for drop in _drop_choices(opt, drop_n):
        # an operand tied to a slot (the cache policy of .L2::cache_hint) is there iff it is
        tied = [layout[i] for i in range(len(layout)) if layout[i].when]
        bad = [od for od in tied if (od.when in chosen) == (layout.index(od) in drop)]
        if bad:
            mod = "|".join("." + c for sl in row.slots if sl.name == bad[0].when for c in sl.choices)
            why = f"operand {bad[0].name!r} is there exactly when {mod} is"
            continue
        idx = tuple(i for i in range(len(layout)) if i not in drop)
        out: list[Any] = []
        for a, i in zip(ops, idx):
            od = layout[i]
            kind = _kind(row, od, mods)
            token = _token(row, od, mods)
            a = _convert_operand(kind, a, token, od.mem and convert_them == "chain") if convert_them else a
            problem = _operand_ok(kind, a, token)
            if problem is not None:
                why = f"operand {od.name!r} must be {problem}, got {_what(a)}"
                break
            out.append(a)
        else:
            if row.check is not None:
                msg = row.check(dict(zip((layout[i].name for i in idx), out)))
                if msg:
                    return msg
            return tuple(out), idx
    return why or "operands do not fit"


def _marker(row: Row, mods: Sequence[str], filled: Sequence[int], guard: bool, keep: bool = False) -> str:
    """TIRx's trailing string: ``pred`` for a guard (``pred,keep``: its outputs kept where it is
    false, ``preserve_dst=True``), ``p<i>`` per predicate input."""
    layout = _layout(row, tuple(mods))[0]
    flags = (["pred", "keep"] if keep else ["pred"]) if guard else []
    flags += [f"p{k}" for k, i in enumerate(filled) if _kind(row, layout[i], mods) == "pin"]
    return ",".join(flags)


def _drop_choices(opt: list[int], k: int) -> list[frozenset]:
    """Which optional operands to leave out: leading ones first, then trailing ones."""
    if k == 0:
        return [frozenset()]
    import itertools

    return [frozenset(c) for c in itertools.combinations(opt, k)]


def _what(a: Any) -> str:
    if isinstance(a, PrimExpr):
        return f"an expression of type {a.ty}"
    return f"{type(a).__name__} {a!r}"


@attrs.define(slots=True, frozen=True)
class Match:
    row: Row
    mods: tuple[str, ...]
    operands: tuple
    filled: tuple[int, ...]
    guard: Any = None  # the ``pred=`` guard predicate (an expression) or None
    keep: bool = False  # ``preserve_dst=True``: TIRx's ``pred,keep`` (outputs kept where the guard is false)

    @property
    def marker(self) -> str:
        return _marker(self.row, self.mods, self.filled, self.guard is not None, self.keep)


class Opcode:
    """The rows of one opcode and its op (``ptx.<opcode>``)."""

    def __init__(self, opcode: str, rows: Sequence[Row]):
        self.opcode = opcode
        self.name = "ptx." + escape(opcode)  # ptx.and_: the printed name must be Python
        self.rows = tuple(rows)
        self.op: Any = None

    def _fail(self, what: str, whys: list[tuple[Row, str, int]]) -> TypeError:
        """The error for a call no row takes: the reasons of the nearest rows (operands
        wrong < a modifier wrong < the wrong number of modifiers)."""
        best = min(w[2] for w in whys)
        near = [(r, w) for r, w, k in whys if k == best]
        forms = "; ".join(f"{r.signature(self.opcode)}: {w}" for r, w in near[:6])
        more = f" (and {len(near) - 6} more)" if len(near) > 6 else ""
        return TypeError(f"T.{self.name}: {what} matches no form of {self.opcode}. {forms}{more}")

    def _first_fit(
        self,
        assign: Any,
        ops: Sequence[Any],
        convert_them: bool | str,
        what: Any,
        guard: Any = None,
        marker: str | None = None,
        keep: bool = False,
    ) -> Match:
        """The first row whose modifiers ``assign(row)`` accepts and whose operands fit
        (and, for the printed form, whose marker is ``marker``)."""
        whys = []
        for r in self.rows:
            mods = assign(r)
            if isinstance(mods, _Miss):
                whys.append((r, mods.why, 1 + mods.far))
                continue
            bad_mods = r.check_mods({sl.name: v for sl, v in zip(r.slots, mods)}) if r.check_mods else None
            if bad_mods:
                whys.append((r, bad_mods, 1))
                continue
            fit = _fit_operands(r, ops, convert_them, mods)
            if isinstance(fit, str):
                whys.append((r, fit, 0))
                continue
            # an optional output left out (mbarrier.arrive's state: ``_``) is no output; a guarded
            # register output is read and written (render); a predicate output has no such form
            if guard is not None and any(_kind(r, _layout(r, mods)[0][i], mods) == "pred" for i in fit[1]):
                whys.append((r, "pred= guards no instruction with a predicate output", 0))
                continue
            m = Match(r, mods, *fit, guard=guard, keep=keep and guard is not None)
            if marker is not None and marker != m.marker:
                whys.append((r, f"the trailing string must be {m.marker!r}, got {marker!r}", 0))
                continue
            return m
        raise self._fail(what(), whys)

    def match_chain(
        self, tokens: Sequence[str], ops: Sequence[Any], guard: Any = None, keep: bool = False
    ) -> Match:
        chain = "".join("." + t for t in tokens)
        if keep and guard is None:
            raise TypeError(
                f"T.{self.name}: preserve_dst=True keeps the outputs where pred= is false; give pred="
            )
        if guard is not None:
            guard = _convert_operand("pin", guard)
            bad = _operand_ok("pin", guard)
            if bad is not None:
                raise TypeError(f"T.{self.name}: pred= must be {bad}, got {_what(guard)}")
        return self._first_fit(
            lambda r: _assign_tokens(r, tokens),
            ops,
            "chain",
            lambda: f"{self.opcode}{chain} with {len(ops)} operand(s)",
            guard,
            keep=keep,
        )

    def match_args(self, args: Sequence[Any], convert_them: bool = False) -> Match:
        """The row of a call in the printed form (operands, then the slot strings and the
        marker)."""
        k = len(args)
        while k > 0 and isinstance(args[k - 1], (str, StringImm)):
            k -= 1
        ops = list(args[:k])
        strings = [a.value if isinstance(a, StringImm) else a for a in args[k:]]
        for i, a in enumerate(ops):
            if isinstance(a, (str, StringImm)):
                raise TypeError(f"T.{self.name}: argument {i + 1} is a string among the operands; "
                                "the modifier strings come after all operands")  # fmt: skip
        marker = strings[-1] if strings else None
        guard = None
        flags = marker.split(",") if marker else []
        if "pred" in flags and ops:
            guard = ops.pop()
        return self._first_fit(
            lambda r: _assign_strings(r, strings),
            ops,
            convert_them,
            lambda: f"({', '.join(repr(s) for s in strings)}) with {len(ops)} operand(s)",
            guard,
            marker,
            keep="keep" in flags,
        )

    def allowed_after(self, tokens: Sequence[str]) -> list[str]:
        """The modifiers that may follow ``tokens`` in some row: the open slots' choices,
        those after the last filled slot first (table order)."""
        nxt: list[str] = []
        for r in self.rows:
            filled = _fill(r, tokens)
            if isinstance(filled, str):
                continue
            last = max((k for k, v in enumerate(filled) if v is not None), default=-1)
            for k in [*range(last + 1, len(r.slots)), *range(last + 1)]:
                if filled[k] is None:
                    nxt += [c for c in r.slots[k].choices if c not in nxt]
        return nxt

    def build(self, m: Match, span: Any = None) -> Call:
        args = list(m.operands)
        if m.guard is not None:
            args.append(m.guard)
        if not m.row.bare:
            args += [*m.mods, m.marker]
        return self.op(*args, span=span)

    def result_type(self, cargs: tuple) -> Type:
        m = self.match_args(cargs)
        r = m.row.result
        if r is None:
            return void
        if isinstance(r, Type):
            return r
        return r(m.operands)


def match(call: Call) -> Match:
    """The table row a ``ptx.<opcode>`` call stands for."""
    opc = _OPCODES.get(call.op.name)
    if opc is None:
        raise ValueError(f"T.{call.op.name} is not an op of the PTX instruction table")
    return opc.match_args(call.args)


# ------------------------------------------------------------------ rendering
_NAMED = re.compile(r"\{\{|\}\}|\{(\w+)(?::(\w+))?\}")


def _default_asm(row: Row, mods: tuple[str, ...], filled: tuple[int, ...]) -> str:
    """``{mn} operands;``: outputs left out are PTX's sink ``_``, predicate outputs and
    inputs go through ``.pred`` registers (set from / written to 32-bit values)."""
    layout, groups = _layout(row, mods)
    lane_of = {n: g for g, names in groups.items() for n in names}
    parts: list[str] = []
    lanes: list[str] = []  # the registers of the vector being written
    pre, post = "", ""
    npred = nin = 0
    for i, od in enumerate(layout):
        kind = _kind(row, od, mods)
        if i not in filled:
            if kind not in _OUT_KINDS:
                continue
            p = "_"
        elif kind == "pred":
            p = f"P{npred}"
            npred += 1
            pre += f".reg .pred {p}; "
            post += f" selp.u32 {{{od.name}}}, 1, 0, {p};"
        elif kind == "pin":
            p = f"Q{nin}"
            nin += 1
            pre += f".reg .pred {p}; setp.ne.b32 {p}, {{{od.name}}}, 0; "
        else:
            p = f"[{{{od.name}}}]" if od.mem else f"{{{od.name}}}"
        g = lane_of.get(od.name)
        if g is None:
            parts.append(p)
            continue
        lanes.append(p)
        if groups[g][-1] == od.name:
            parts.append("{{" + ", ".join(lanes) + "}}")
            lanes = []
    text = parts
    body = "{mn}" + (" " + ", ".join(text) if text else "") + ";"
    if pre:
        return "{{ " + pre + body + post + " }}"
    return body


def render(m: Match, opcode: str) -> tuple[str, list]:
    """The asm.py template and operand list of a matched call."""
    row = m.row
    mn = ".".join([row.mnemonic or opcode, *(v for v in m.mods if v)])
    layout, groups = _layout(row, m.mods)
    if callable(row.asm):  # a template that depends on the chosen modifiers
        tmpl = row.asm({sl.name: v for sl, v in zip(row.slots, m.mods)})
    else:
        tmpl = row.asm if row.asm is not None else _default_asm(row, m.mods, m.filled)
    for g, lane_names in groups.items():  # a template's {d} for a vector is its lanes
        tmpl = tmpl.replace("{" + g + "}", "{{" + ", ".join("{" + n + "}" for n in lane_names) + "}}")
    pos = {layout[i].name: (k, layout[i]) for k, i in enumerate(m.filled)}
    names = {o.name for o in layout}
    operands = list(m.operands)
    for k, i in enumerate(m.filled):  # a predicate input reaches setp.ne.b32 as 32 bits
        e = operands[k]
        if _kind(row, layout[i], m.mods) == "pin" and not e.ty.is_bool and e.ty.bits != 32:
            operands[k] = Cast(uint32, e)
    if m.guard is not None:
        names.add("tirx_guard")
        pos["tirx_guard"] = (len(operands), Operand("tirx_guard", "pin"))
        guard = m.guard if m.guard.ty.is_bool or m.guard.ty.bits == 32 else Cast(uint32, m.guard)
        operands.append(guard)
        inner = tmpl[3:-3] if tmpl.startswith("{{ ") and tmpl.endswith(" }}") else tmpl
        tmpl = "{{ .reg .pred G; setp.ne.b32 G, {tirx_guard}, 0; @G " + inner + " }}"

    def sub(mt: re.Match) -> str:
        t = mt.group(0)
        if t in ("{{", "}}"):
            return t
        key, mod = mt.group(1), mt.group(2)
        if key == "mn":
            return mn
        if key == "out":
            return t
        if key not in names:
            raise ValueError(f"PTX row {row.name}: template names no operand {key!r}")
        if key not in pos:
            return "_"
        k, od = pos[key]
        if mod is None:
            e = operands[k]
            kind = _kind(row, od, m.mods)
            if kind == "inout" or (kind in ("dst", "out32", "out64") and m.guard is not None):
                # under a guard an output is read and written: where the guard is false it keeps
                # its value (TIRx's pred,keep; its plain pred leaves it unspecified, which this is
                # one case of)
                mod = "inout"
            elif kind in _OUT_KINDS:
                mod = "out"
            elif kind == "imm":
                mod = "imm"
            elif kind == "smem" and isinstance(e.ty, PointerType):
                mod = "smem"
        return f"{{{k}:{mod}}}" if mod else f"{{{k}}}"

    return _NAMED.sub(sub, tmpl), operands


# ------------------------------------------------------------------ the script surface
class Chain:
    """``T.ptx.<opcode>[.<modifier>...]``: attributes add modifiers (checked against the
    rows as they are written), a call takes the operands. ``T.ptx.<opcode>(...)`` with
    trailing strings is the printed positional form."""

    __slots__ = ("_opc", "_tokens")
    _opc: Opcode
    _tokens: tuple[str, ...]
    __tirx_namespace__ = True  # the script parser keeps this class's attribute-error messages

    def __init__(self, opc: Opcode, tokens: tuple[str, ...] = ()):
        object.__setattr__(self, "_opc", opc)
        object.__setattr__(self, "_tokens", tokens)

    def __getattr__(self, attr: str) -> Chain:
        if attr.startswith("__"):
            raise AttributeError(attr)
        opc = self._opc
        tok = unescape(attr)
        nxt = opc.allowed_after(self._tokens)
        if tok not in nxt:
            where = "T." + ".".join((opc.name, *self._tokens))
            allowed = ", ".join(escape(c) for c in nxt) or "none (call it)"
            raise AttributeError(f"{where}: '{attr}' is not a modifier allowed here; allowed: {allowed}")
        return Chain(opc, (*self._tokens, tok))

    def follow(self, tokens: Sequence[str], text: str) -> Chain:
        """This chain with the PTX modifiers ``tokens`` (``T.ptx["cp.async.ca..."]``'s
        ``["async", "ca", ...]``) added, exactly as the attribute chain adds them. A modifier
        that is two PTX modifiers (``...::bytes.mbarrier::report::fabric``) may span tokens.
        An unknown one is a KeyError naming the allowed ones and the closest."""
        import difflib

        opc = self._opc
        done = list(self._tokens)
        i = 0
        while i < len(tokens):
            nxt = opc.allowed_after(done)
            for j in range(i + 1, len(tokens) + 1):
                tok = ".".join(tokens[i:j])
                if tok in nxt:
                    done.append(tok)
                    i = j
                    break
            else:
                tok = tokens[i]
                where = ".".join([opc.opcode, *done])
                close = difflib.get_close_matches(tok, nxt, n=3, cutoff=0.5)
                hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                allowed = ", ".join(nxt) or "none (the instruction is complete)"
                raise KeyError(f"T.ptx[{text!r}]: {tok!r} is not a modifier allowed after {where}{hint} "
                               f"(allowed: {allowed})")  # fmt: skip
        return Chain(opc, tuple(done))

    def __dir__(self) -> list[str]:
        """The modifiers that may come next (tab completion)."""
        return [escape(c) for c in self._opc.allowed_after(self._tokens)]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("T.ptx chains are immutable")

    def __call__(self, *args: Any, pred: Any = None, preserve_dst: bool = False, span: Any = None) -> Call:
        """The operands (``pred=``: a guard predicate, ``@p``; ``preserve_dst=True``: the
        outputs keep their values where it is false, TIRx's ``pred,keep``)."""
        opc = self._opc
        if self._tokens or not any(isinstance(a, (str, StringImm)) for a in args):
            return opc.build(opc.match_chain(self._tokens, args, pred, bool(preserve_dst)), span)
        if pred is not None or preserve_dst:
            raise TypeError(f"T.{opc.name}: the printed form carries its guard as an operand, not pred=")
        return opc.build(opc.match_args(args, convert_them=True), span)

    @property
    def op(self) -> Any:
        return self._opc.op

    def __repr__(self) -> str:
        return "T." + ".".join((self._opc.name, *(escape(t) for t in self._tokens)))


# ------------------------------------------------------------------ declaration
_OPCODES: dict[str, Opcode] = {}


def _lower(opc: Opcode) -> Callable:
    def lower(cg: Any, c: Call) -> Any:
        try:
            m = opc.match_args(c.args)
        except TypeError as e:
            raise cg.error(str(e), c) from None
        if m.row.cuda is not None:
            return m.row.cuda(cg, c)
        tmpl, operands = render(m, opc.opcode)
        return cg.asm(c, tmpl, operands, m.row.volatile)

    return lower


def _writes(opc: Opcode) -> Callable:
    # a call's row (and so its outputs) follows from its strings and its operands' kinds: the
    # answer is remembered per such form (codegen asks for every call of every kernel)
    seen: dict = {}

    def writes(c: Call) -> frozenset[int] | None:
        """The argument positions a call binds as asm outputs (the buffer elements it writes;
        memory goes through addresses); None for a row with a lowering function of its own."""
        form = tuple(a.value if isinstance(a, StringImm) else (type(a), a.ty) for a in c.args)
        if form in seen:
            return seen[form]
        try:
            m = opc.match_args(c.args)
        except TypeError:
            return None
        got = None
        if m.row.cuda is None:
            tmpl, _ = render(m, opc.opcode)
            got = frozenset(
                int(k) for k, mod in _NAMED.findall(tmpl) if mod in ("out", "inout") and k.isdigit()
            )
        seen[form] = got
        return got

    return writes


#: resolvers ``row name -> interp implementation | None`` for the rows without their own
#: ``interp=`` (tirx/ops/ptx_semantics.py registers one: semantics by family and modifiers)
_ROW_SEMANTICS: list[Callable] = []


def register_row_semantics(resolve: Callable) -> None:
    """Give CPU semantics to table rows by name (a row's own ``interp=`` comes first)."""
    _ROW_SEMANTICS.append(resolve)


def row_has_semantics(row: Row) -> bool:
    """Whether the interpreter can run some form of table row ``row`` (its own ``interp=`` or
    a registered family's; tools/op_reference.py counts them)."""
    return row.interp is not None or any(resolve(row.name) is not None for resolve in _ROW_SEMANTICS)


def _interp(opc: Opcode) -> Callable:
    def interp(fc: Any, c: Call) -> Any:
        m = opc.match_args(c.args)
        if m.guard is not None:
            layout = _layout(m.row, m.mods)[0]
            if any(_kind(m.row, layout[i], m.mods) in _OUT_KINDS for i in m.filled):
                from ..errors import OpError

                raise OpError(
                    f"the interpreter cannot run T.{opc.name} ({m.row.signature(opc.opcode)}) guarded by pred= "
                    "with outputs (no CPU model of the outputs a false guard keeps); the cuda target runs it"
                )
        if m.row.interp is None:
            from ..errors import OpError

            for resolve in _ROW_SEMANTICS:  # the family semantics (tirx/ops/ptx_semantics.py)
                family = resolve(m.row.name)
                if family is not None:
                    return family(fc, c)

            raise OpError(
                f"the interpreter cannot run T.{opc.name} ({m.row.signature(opc.opcode)}): inline PTX "
                "with no CPU model (TMA, wgmma and mbarrier pipelines need the cuda target)"
            )
        return m.row.interp(fc, c)

    return interp


def _print_call(p: Any, parts: list, call: Call) -> str:
    """TIRx's printed form: an int32 literal operand is written ``T.int32(v)`` (a bare ``16``
    would load back by its position's kind: a predicate input as ``T.uint32``); the value
    forms of ``bare`` rows print as they are written (``T.ptx.mapa(p, 1)``)."""
    if any(isinstance(a, StringImm) for a in call.args):
        parts = [
            f"T.int32({t})" if type(a) is IntImm and a.ty == int32 and not t.startswith("T.") else t
            for a, t in zip(call.args, parts)
        ]
    return f"T.{call.op.name}({', '.join(parts)})"


def declare_opcode(opcode: str, rows: Sequence[Row], *, doc: str, **trait_kw: Any) -> Opcode:
    """Declare the op ``ptx.<opcode>`` from its rows, and its script chain (a Python
    keyword opcode is the op ``ptx.and_``, TIRx's printed name; ``ptx.and`` is its alias)."""
    if not rows:
        raise ValueError(f"PTX opcode {opcode!r} needs at least one row")
    opc = Opcode(opcode, rows)
    opc.op = declare(
        opc.name, ("*x",), opc.result_type, pure=False, device_only=True,
        doc=f"{doc} (PTX instruction table: {len(opc.rows)} form(s))",
        cuda=_lower(opc), interp=_interp(opc), **trait_kw,
    )  # fmt: skip
    register_handler("script", opc.name)(Chain(opc))
    register_handler("print", opc.name)(_print_call)
    register_handler("writes", opc.name)(_writes(opc))
    # the rows are the declaration: record the file that holds them (tools/op_mentions.py)
    _op._DECL_SITE[opc.name] = sys._getframe(1).f_code.co_filename
    _OPCODES[opc.name] = opc
    if opc.name != "ptx." + opcode:
        _op.alias("ptx." + opcode, opc.name, Chain(opc), doc=f"T.{opc.name} (a Python keyword needs the _)")
    return opc


def opcodes() -> dict[str, Opcode]:
    """Every declared table opcode by op name (``"ptx.fence"``)."""
    return dict(_OPCODES)


def instruction(text: Any) -> Chain:
    """``T.ptx["cp.async.ca.shared.global.L2::128B"]``: a PTX instruction by its text, the same
    chain as ``T.ptx.cp.async_.ca.shared.global_.L2__128B`` (TIRx's subscript form; the frontend
    and the text parser both look it up here). An unknown opcode is a KeyError with the closest."""
    import difflib

    if not isinstance(text, str):
        raise TypeError(
            'T.ptx[...] takes the instruction text as a string, e.g. T.ptx["fence.proxy.async"], '
            f"got {type(text).__name__}"
        )
    first, _, rest = text.partition(".")
    o = _op.lookup(f"ptx.{escape(first)}") if first else None
    head = _op.impl("script", o) if o is not None else None
    if not isinstance(head, Chain) or head._tokens:
        opcodes = sorted(
            {
                n[4:].split(".", 1)[0]
                for n, o in ((n, _op.lookup(n)) for n in _op.all_ops() if n.startswith("ptx."))
                if o is not None and isinstance(_op.impl("script", o), Chain)
            }
        )
        close = difflib.get_close_matches(first, opcodes, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(h) for h in close)}?" if close else ""
        raise KeyError(f"T.ptx[{text!r}]: {first!r} is not a PTX instruction of the table{hint}")
    return head.follow(rest.split(".") if rest else [], text)
