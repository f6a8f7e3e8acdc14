"""The PTX instruction table: an instruction with modifier chains is data, not one op per variant.

A ``Row`` is one instruction form: its opcode (``mbarrier``), its modifier ``Slot``s in
PTX order (name, allowed values, optional or not), its ``Operand``s (name and kind), the
type of the value it returns (void for TIRx's forms, which write outputs through buffer
elements) and, when the generic ``{mnemonic} operands;`` layout does not fit, its
inline-asm template. ``declare_opcode`` turns the rows of one opcode into ONE op
(``ptx.mbarrier``) of the op table; from the rows come

1. the script surface: ``T.ptx.mbarrier.init.shared__cta.b64(addr, count)`` (a trailing
   ``_`` escapes a Python keyword, ``__`` stands for ``::``), an object that is also
   callable in the printed positional form;
2. the printed form, TIRx's: operands, then one string per slot of the matched row (``""``
   for an absent optional slot), then a trailing ``""``:
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

An operand may be ``optional`` (an absent output is PTX's sink ``_``, an absent input is
left out). A row with ``bare=True`` prints with no strings at all (its opcode's plain
call, ``T.ptx.elect_sync()``). This module imports only ``tirx.ir`` at import time.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import attrs

from ..ir import op as _op
from ..ir.expr import BufferLoad, Call, Cast, IntImm, PrimExpr, StringImm, convert
from ..ir.op import declare, lookup, register_handler
from ..ir.types import PointerType, PrimType, Type, int32, uint32, void

__all__ = ["Opcode", "Operand", "Row", "Slot", "declare_opcode", "match", "render"]

KINDS = ("smem", "space_addr", "u32", "b32", "imm", "addr", "out32", "out64", "pred", "any", "int")
_OUT_KINDS = ("out32", "out64", "pred")


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

    def __attrs_post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"PTX operand {self.name!r}: unknown kind {self.kind!r} (one of {KINDS})")


@attrs.define(slots=True, frozen=True)
class Row:
    """One instruction form. ``asm`` (optional) is a template in tirx/codegen/asm.py's
    language with names for indices: ``{mn}`` the mnemonic with the chosen modifiers,
    ``{addr}`` an operand by name (its placeholder modifier follows its kind), ``{out}``
    the result, ``{{``/``}}`` braces. ``check({name: operand})`` may return an error
    message. ``cuda``/``interp`` override the lowering / give CPU semantics."""

    name: str
    slots: tuple[Slot, ...] = ()
    operands: tuple[Operand, ...] = ()
    mnemonic: str = ""
    result: Any = None  # None (void), a Type, or a function of the operands -> Type
    asm: str | None = None
    volatile: bool = True
    bare: bool = False
    doc: str = ""
    check: Callable | None = None
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
        ops = ", ".join(o.name + ("?" if o.optional else "") for o in self.operands)
        return "".join(parts) + f"({ops})"


# ------------------------------------------------------------------ escapes
def unescape(attr: str) -> str:
    """A Python attribute spelling to the PTX modifier: ``async_`` -> ``async``,
    ``shared__cta`` -> ``shared::cta``, ``_1d`` -> ``1d``."""
    s = attr
    if s.endswith("_") and not s.endswith("__"):
        s = s[:-1]
    if len(s) > 1 and s[0] == "_" and s[1].isdigit():
        s = s[1:]
    return s.replace("__", "::")


def escape(mod: str) -> str:
    """The attribute spelling of a modifier (inverse of ``unescape`` for table values)."""
    import keyword

    s = mod.replace("::", "__")
    if keyword.iskeyword(s):
        s += "_"
    if s[:1].isdigit():
        s = "_" + s
    return s


# ------------------------------------------------------------------ operand checks
def _is_int(t: Any, bits: int | None = None) -> bool:
    return isinstance(t, PrimType) and t.lanes == 1 and t.is_int and (bits is None or t.bits == bits)


def _operand_ok(kind: str, e: Any) -> str | None:
    """None when the (IR) operand fits ``kind``, else what it must be."""
    t = getattr(e, "ty", None)
    if kind == "smem":
        if _is_int(t, 32) or (isinstance(t, PointerType) and t.scope.startswith("shared")):
            return None
        return "a 32-bit shared address (T.cuda.cvta_generic_to_shared(p)) or a shared pointer"
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
    if kind == "int":
        return None if isinstance(t, PrimType) and (t.is_int or t.is_bool) else "an integer expression"
    return None if isinstance(e, PrimExpr) else "an expression"


def _convert_operand(kind: str, x: Any) -> Any:
    """What a script call hands the IR for ``x`` in a ``kind`` position (TIRx's conversions)."""
    conv = getattr(x, "__tirx_expr__", None)
    if conv is not None:
        x = conv()
    data = getattr(x, "data", None)  # a Buffer passed as an address
    if kind in ("addr", "any") and data is not None and not isinstance(x, PrimExpr):
        x = data
    if isinstance(x, bool):
        return convert(x)
    if isinstance(x, int):
        if kind in ("smem", "u32", "b32"):
            return IntImm(x, uint32)
        if kind == "imm":
            return IntImm(x, int32)
        return convert(x)
    if not isinstance(x, PrimExpr):
        return x
    t = x.ty
    if kind == "smem" and isinstance(t, PointerType) and t.scope.startswith("shared"):
        return Call(lookup("cuda.cvta_generic_to_shared"), (x,), uint32)
    if kind in ("smem", "u32") and _is_int(t) and t != uint32 and t.bits <= 32:
        return Cast(uint32, x)
    return x


# ------------------------------------------------------------------ matching
class _Miss(NamedTuple):
    """Why a row does not take a call, and how far off it is (the nearest rows are reported)."""

    why: str
    far: int


def _assign_tokens(row: Row, tokens: Sequence[str]) -> tuple[str, ...] | _Miss:
    """Slot values for chain ``tokens`` in ``row``, or why they do not fit (``far``: the
    tokens not placed)."""
    vals = []
    i = 0
    for s in row.slots:
        if i < len(tokens) and tokens[i] in s.choices:
            vals.append(tokens[i])
            i += 1
        elif s.optional:
            vals.append("")
        else:
            if i < len(tokens):
                why = f"'{tokens[i]}' is not allowed where .{s.name} is required ({'|'.join(s.choices)})"
                return _Miss(why, len(tokens) - i)
            return _Miss(f"missing required modifier .{s.name} ({'|'.join(s.choices)})", 0)
    if i < len(tokens):
        return _Miss(f"'{tokens[i]}' has no place after the modifiers before it", len(tokens) - i)
    return tuple(vals)


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
        why = f'takes {len(row.slots) + 1} modifier strings ({len(row.slots)} slots and a trailing "")'
        return _Miss(why, far + 1)
    if why is not None:
        return _Miss(why, far)
    if strings[-1] != "":
        return _Miss(f'the trailing string must be "", got {strings[-1]!r}', 1)
    return tuple(strings[:-1])


def _kind(row: Row, od: Operand, mods: Sequence[str]) -> str:
    """The operand's kind for these modifiers (``space_addr`` follows the ``space`` slot)."""
    if od.kind != "space_addr":
        return od.kind
    for s, v in zip(row.slots, mods):
        if s.name == "space":
            return "smem" if v.startswith("shared") else "addr"
    return "addr"


def _fit_operands(
    row: Row, ops: Sequence[Any], convert_them: bool, mods: Sequence[str]
) -> tuple[tuple, tuple[int, ...]] | str:
    """(operands, indices of the row operands they fill) or why they do not fit. Optional
    operands are left out first from the front outputs, then from the back."""
    n = len(ops)
    if n < row.n_required or n > len(row.operands):
        want = (
            f"{row.n_required}"
            if row.n_required == len(row.operands)
            else f"{row.n_required} to {len(row.operands)}"
        )
        return f"takes {want} operand(s) ({', '.join(o.name for o in row.operands)}), got {n}"
    opt = [i for i, o in enumerate(row.operands) if o.optional]
    drop_n = len(row.operands) - n
    why = None
    for drop in _drop_choices(opt, drop_n):
        idx = tuple(i for i in range(len(row.operands)) if i not in drop)
        out = []
        for a, i in zip(ops, idx):
            od = row.operands[i]
            kind = _kind(row, od, mods)
            a = _convert_operand(kind, a) if convert_them else a
            bad = _operand_ok(kind, a)
            if bad is not None:
                why = f"operand {od.name!r} must be {bad}, got {_what(a)}"
                break
            out.append(a)
        else:
            if row.check is not None:
                msg = row.check(dict(zip((row.operands[i].name for i in idx), out)))
                if msg:
                    return msg
            return tuple(out), idx
    return why or "operands do not fit"


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


class Opcode:
    """The rows of one opcode and its op (``ptx.<opcode>``)."""

    def __init__(self, opcode: str, rows: Sequence[Row]):
        self.opcode = opcode
        self.name = "ptx." + opcode
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

    def _first_fit(self, assign: Any, ops: Sequence[Any], convert_them: bool, what: Any) -> Match:
        """The first row whose modifiers ``assign(row)`` accepts and whose operands fit."""
        whys = []
        for r in self.rows:
            mods = assign(r)
            if isinstance(mods, _Miss):
                whys.append((r, mods.why, 1 + mods.far))
                continue
            fit = _fit_operands(r, ops, convert_them, mods)
            if isinstance(fit, str):
                whys.append((r, fit, 0))
                continue
            return Match(r, mods, *fit)
        raise self._fail(what(), whys)

    def match_chain(self, tokens: Sequence[str], ops: Sequence[Any]) -> Match:
        chain = "".join("." + t for t in tokens)
        return self._first_fit(
            lambda r: _assign_tokens(r, tokens),
            ops,
            True,
            lambda: f"{self.opcode}{chain} with {len(ops)} operand(s)",
        )

    def match_args(self, args: Sequence[Any], convert_them: bool = False) -> Match:
        """The row of a call in the printed form (operands, then the slot strings)."""
        k = len(args)
        while k > 0 and isinstance(args[k - 1], (str, StringImm)):
            k -= 1
        ops = list(args[:k])
        strings = [a.value if isinstance(a, StringImm) else a for a in args[k:]]
        for i, a in enumerate(ops):
            if isinstance(a, (str, StringImm)):
                raise TypeError(f"T.{self.name}: argument {i + 1} is a string among the operands; "
                                "the modifier strings come after all operands")  # fmt: skip
        return self._first_fit(
            lambda r: _assign_strings(r, strings),
            ops,
            convert_them,
            lambda: f"({', '.join(repr(s) for s in strings)}) with {len(ops)} operand(s)",
        )

    def allowed_after(self, tokens: Sequence[str]) -> list[str]:
        """The modifiers that may follow ``tokens`` in some row (in table order)."""
        nxt: list[str] = []
        for r in self.rows:
            k = _walk(r, tokens)
            if k is None:
                continue
            while k < len(r.slots):
                nxt += [c for c in r.slots[k].choices if c not in nxt]
                if not r.slots[k].optional:
                    break
                k += 1
        return nxt

    def build(self, m: Match, span: Any = None) -> Call:
        args = list(m.operands)
        if not m.row.bare:
            args += [*m.mods, ""]
        return self.op(*args, span=span)

    def result_type(self, cargs: tuple) -> Type:
        m = self.match_args(cargs)
        r = m.row.result
        if r is None:
            return void
        if isinstance(r, Type):
            return r
        return r(m.operands)


def _walk(row: Row, tokens: Sequence[str]) -> int | None:
    """The slot index after ``tokens`` are placed in ``row`` (as ``_assign_tokens`` places
    them), or None when they do not fit."""
    k = 0
    for t in tokens:
        while k < len(row.slots) and t not in row.slots[k].choices:
            if not row.slots[k].optional:
                return None
            k += 1
        if k == len(row.slots):
            return None
        k += 1
    return k


def match(call: Call) -> Match:
    """The table row a ``ptx.<opcode>`` call stands for."""
    opc = _OPCODES.get(call.op.name)
    if opc is None:
        raise ValueError(f"T.{call.op.name} is not an op of the PTX instruction table")
    return opc.match_args(call.args)


# ------------------------------------------------------------------ rendering
_NAMED = re.compile(r"\{\{|\}\}|\{(\w+)(?::(\w+))?\}")


def _default_asm(row: Row, filled: tuple[int, ...]) -> str:
    parts = []
    pre, post = "", ""
    npred = 0
    for i, od in enumerate(row.operands):
        if i not in filled:
            if od.kind in _OUT_KINDS:
                parts.append("_")
            continue
        if od.kind == "pred":
            reg = f"P{npred}"
            npred += 1
            pre += f".reg .pred {reg}; "
            post += f" selp.u32 {{{od.name}}}, 1, 0, {reg};"
            parts.append(reg)
        else:
            parts.append(f"[{{{od.name}}}]" if od.mem else f"{{{od.name}}}")
    body = "{mn}" + (" " + ", ".join(parts) if parts else "") + ";"
    if pre:
        return "{{ " + pre + body + post + " }}"
    return body


def render(m: Match, opcode: str) -> tuple[str, list]:
    """The asm.py template and operand list of a matched call."""
    row = m.row
    mn = ".".join([row.mnemonic or opcode, *(v for v in m.mods if v)])
    tmpl = row.asm if row.asm is not None else _default_asm(row, m.filled)
    pos = {row.operands[i].name: (k, row.operands[i]) for k, i in enumerate(m.filled)}
    names = {o.name for o in row.operands}

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
            e = m.operands[k]
            if od.kind in _OUT_KINDS:
                mod = "out"
            elif od.kind == "imm":
                mod = "imm"
            elif _kind(row, od, m.mods) == "smem" and isinstance(e.ty, PointerType):
                mod = "smem"
        return f"{{{k}:{mod}}}" if mod else f"{{{k}}}"

    return _NAMED.sub(sub, tmpl), list(m.operands)


# ------------------------------------------------------------------ the script surface
class Chain:
    """``T.ptx.<opcode>[.<modifier>...]``: attributes add modifiers (checked against the
    rows as they are written), a call takes the operands. ``T.ptx.<opcode>(...)`` with
    trailing strings is the printed positional form."""

    __slots__ = ("_opc", "_tokens")
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
            where = "T.ptx." + ".".join((opc.opcode, *self._tokens))
            allowed = ", ".join(escape(c) for c in nxt) or "none (call it)"
            raise AttributeError(f"{where}: '{attr}' is not a modifier allowed here; allowed: {allowed}")
        return Chain(opc, (*self._tokens, tok))

    def __dir__(self) -> list[str]:
        """The modifiers that may come next (tab completion)."""
        return [escape(c) for c in self._opc.allowed_after(self._tokens)]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("T.ptx chains are immutable")

    def __call__(self, *args: Any, span: Any = None) -> Call:
        opc = self._opc
        if self._tokens or not any(isinstance(a, (str, StringImm)) for a in args):
            return opc.build(opc.match_chain(self._tokens, args), span)
        return opc.build(opc.match_args(args, convert_them=True), span)

    @property
    def op(self) -> Any:
        return self._opc.op

    def __repr__(self) -> str:
        return "T.ptx." + ".".join((self._opc.opcode, *(escape(t) for t in self._tokens)))


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


def _interp(opc: Opcode) -> Callable:
    def interp(fc: Any, c: Call) -> Any:
        m = opc.match_args(c.args)
        if m.row.interp is None:
            from ..errors import OpError

            raise OpError(
                f"the interpreter cannot run T.{opc.name} ({m.row.signature(opc.opcode)}): inline PTX "
                "with no CPU model (TMA, wgmma and mbarrier pipelines need the cuda target)"
            )
        return m.row.interp(fc, c)

    return interp


def declare_opcode(opcode: str, rows: Sequence[Row], *, doc: str, **trait_kw: Any) -> Opcode:
    """Declare the op ``ptx.<opcode>`` from its rows, and its script chain."""
    if not rows:
        raise ValueError(f"PTX opcode {opcode!r} needs at least one row")
    opc = Opcode(opcode, rows)
    opc.op = declare(
        opc.name, ("*x",), opc.result_type, pure=False, device_only=True,
        doc=f"{doc} (PTX instruction table: {len(opc.rows)} form(s))",
        cuda=_lower(opc), interp=_interp(opc), **trait_kw,
    )  # fmt: skip
    register_handler("script", opc.name)(Chain(opc))
    # the rows are the declaration: record the file that holds them (tools/op_mentions.py)
    _op._DECL_SITE[opc.name] = sys._getframe(1).f_code.co_filename
    _OPCODES[opc.name] = opc
    return opc


def opcodes() -> dict[str, Opcode]:
    """Every declared table opcode by op name (``"ptx.fence"``)."""
    return dict(_OPCODES)
