"""Interval analysis of integer expressions, following the IR's exact semantics.

``Bounds(ranges)(e)`` is an inclusive ``(lo, hi)`` that holds every value the scalar
integer (or bool) expression ``e`` can take, given inclusive ranges for some variables
(the others range over their whole dtype). Results are computed from the mathematical
(unwrapped) values where they can be bounded; an ``Add``/``Sub``/``Mul``/``Shl`` whose exact
interval leaves its dtype *can overflow* (``overflows(e)``), and its result then covers the
whole dtype, since the IR wraps it (two's complement, see ``tirx.ir.arith``).

Rules: constants; variables (known range or the dtype's); ``+ - *`` by interval arithmetic;
``Div``/``Mod`` truncating and ``FloorDiv``/``FloorMod`` flooring (division by zero gives 0,
as in the interpreter); ``min``/``max``; int->int casts (kept when the source range fits
the target, else the target's range); ``Select`` and ``if_then_else``; shifts (amounts read
as unsigned, amounts >= the width give 0, or the sign fill for ``>>``); ``&``, ``|``, ``^`` of
non-negative values, ``~``; comparisons and logic in ``[0, 1]``; calls of ops with
the ``nonneg`` trait in ``[0, max]``; ``Let``. Anything else (loads, other calls,
vectors) ranges over its dtype. Unsigned types wrap modulo ``2**bits``; their results are
kept exact when they stay in range, and never "overflow" in the sense above (C++ defines
unsigned wraparound).

Loads of per-thread local buffers take the range of the values stored into them when
``local_ranges`` (a pass over the statements that use them) can bound it: a flow-insensitive
hull of the initial 0 and every stored value, with increments ``x = x + d`` bounded by how
often they can run (the trip counts of the loops around them), solved as a fixpoint. Loop
variables: ``loop_range``.

``exact=True`` analyses host expressions (launch configuration, host bindings), which the
runtime evaluates with unbounded Python integers: nothing wraps there except casts, and
what cannot be bounded is unbounded (``+-UNBOUNDED``) rather than its dtype's range.

Nodes are immutable and hash by identity, so results are memoized per node object for the
life of one ``Bounds``; ``define`` records a variable's range where it is defined.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

from .arith import int_range, trunc_div
from .expr import EQ, GE, GT, LE, LT, Add, And, BufferLoad, GlobalVar, IntImm, Mul, Shl, Sub, Var
from .fold import select_arms
from .functor import Dispatch, Functor
from .stmt import ForKind
from .types import PrimType
from .visitor import Visitor

__all__ = ["Bounds", "dtype_range", "local_ranges"]

LOCAL_SCOPES = ("local", "register", "local.var")

_WRAPPING = (Add, Sub, Mul, Shl)
UNBOUNDED = 1 << 256  # "no bound" of exact (host) analysis: an endpoint at +-UNBOUNDED is infinite
_HUGE = UNBOUNDED >> 1  # exact analysis: an endpoint this large is made infinite (see _bound)
_FLIP = {LT: GT, LE: GE, GT: LT, GE: LE, EQ: EQ}  # a < b is b > a


def dtype_range(t: Any) -> tuple[int, int] | None:
    """The full range of a scalar integer/bool dtype, None for anything else (floats, vectors)."""
    if not isinstance(t, PrimType) or t.lanes != 1:
        return None
    if t.is_bool:
        return 0, 1
    if t.is_int:
        return int_range(t)
    return None


def _hull(*rs: tuple[int, int]) -> tuple[int, int]:
    return min(r[0] for r in rs), max(r[1] for r in rs)


def _div_corners(fn, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """fn(a, b) over the box, b not crossing zero (fn monotone in each argument there)."""
    if b[0] <= 0 <= b[1]:
        return None
    vs = [fn(x, y) for x in a for y in b]
    return min(vs), max(vs)


def _divisor(e: Any, depth: int = 6) -> int:
    """A power of two that divides every value of ``e`` (1 when nothing is known): ``x * 8``
    is a multiple of 8, so ``x * 8 % 128`` is at most 120. Only powers of two: they survive
    the wraparound modulo ``2**bits``."""
    if isinstance(e, IntImm):
        return min(e.value & -e.value, 1 << 64) if e.value else 1 << 64
    if depth == 0:
        return 1
    if isinstance(e, Mul):
        return min(_divisor(e.a, depth - 1) * _divisor(e.b, depth - 1), 1 << 64)
    if isinstance(e, (Add, Sub)):
        return min(_divisor(e.a, depth - 1), _divisor(e.b, depth - 1))
    if (
        isinstance(e, Shl)
        and isinstance(e.b, IntImm)
        and isinstance(e.ty, PrimType)
        and 0 <= e.b.value < e.ty.bits
    ):
        return min(_divisor(e.a, depth - 1) << e.b.value, 1 << 64)
    return 1


def _snap(r: tuple[int, int], g: int) -> tuple[int, int]:
    """``r`` shrunk to the multiples of ``g`` it holds (unchanged if it holds none)."""
    if g <= 1:
        return r
    lo, hi = -(-r[0] // g) * g, r[1] // g * g
    return (lo, hi) if lo <= hi else r


def _nonzero_parts(b: tuple[int, int]) -> list[tuple[int, int]]:
    """``b`` without zero, as sign-pure intervals."""
    out = []
    if b[0] <= -1:
        out.append((b[0], min(b[1], -1)))
    if b[1] >= 1:
        out.append((max(b[0], 1), b[1]))
    return out


class Bounds(Functor):
    """Inclusive integer ranges of IR expressions (see the module docstring)."""

    _b_table = Dispatch("_b_")  # the rule for a node class: ``_b_<Class>``, else no bound

    def __init__(
        self,
        ranges: dict | None = None,
        *,
        call_range: Any = None,
        exact: bool = False,
    ) -> None:
        # Var -> (lo, hi); call_range(call) -> (lo, hi) | None refines calls (thread indices)
        self.ranges: dict = dict(ranges or {})
        # data Var of a local buffer -> (dtype, (lo, hi)): the values its elements hold
        self.buffer_ranges: dict = {}
        self.call_range = call_range
        self.exact = exact
        self._memo: dict = {}
        self._over: set = set()
        self._defaulted: set = set()  # vars read with their dtype's range so far
        # Results that read no variable, local buffer or call range (constant subtrees)
        # survive ``_reset``: narrowing a range for every ``if`` must not make a long
        # constant chain cost O(statements x length). ``_reads`` counts context reads.
        self._pure: dict = {}
        self._pure_over: set = set()
        self._reads = 0

    # -- variables --------------------------------------------------------------------
    def define(self, v: Var, r: tuple[int, int] | None) -> None:
        """Record the range of ``v`` at its definition (``None``: its dtype's range)."""
        full = dtype_range(v.ty)
        if full is None:
            return
        if r is None:
            r = full
        lo, hi = r if full[0] <= r[0] <= r[1] <= full[1] else full
        old = self.ranges.get(v)
        if old is not None:
            if old == (lo, hi):
                return
            lo, hi = min(lo, old[0]), max(hi, old[1])
            self._reset()
        elif v in self._defaulted:
            self._reset()
        self.ranges[v] = (lo, hi)

    @contextlib.contextmanager
    def assume(self, cond: Any) -> Iterator[None]:
        """Narrow variable ranges while ``cond`` is known to hold (the then-branch of an
        ``if``): comparisons of a variable with an expression, in an ``and``-chain."""
        narrowed: dict = {}
        todo = [cond]
        while todo:
            c = todo.pop()
            if isinstance(c, And):
                todo += (c.a, c.b)
                continue
            if not isinstance(c, (LT, LE, GT, GE, EQ)):
                continue
            for v, other, cls in ((c.a, c.b, type(c)), (c.b, c.a, _FLIP[type(c)])):
                if not isinstance(v, Var) or not isinstance(v.ty, PrimType):
                    continue
                if dtype_range(v.ty) is None or v.ty.is_bool:
                    continue
                o = self(other)
                if o is None:
                    continue
                cur = narrowed.get(v) or self(v)
                assert cur is not None  # v is an integer scalar (checked above)
                lo, hi = cur
                if cls in (LT, LE, EQ):
                    hi = min(hi, o[1] - (cls is LT))
                if cls in (GT, GE, EQ):
                    lo = max(lo, o[0] + (cls is GT))
                narrowed[v] = (lo, hi)
        saved = {v: self.ranges.get(v) for v in narrowed}
        for v, (lo, hi) in narrowed.items():
            if lo <= hi:  # else the branch never runs: any range will do
                self.ranges[v] = (lo, hi)
        if narrowed:
            self._reset()
        try:
            yield
        finally:
            for v, r in saved.items():
                if r is None:
                    self.ranges.pop(v, None)
                else:
                    self.ranges[v] = r
            if narrowed:
                self._reset()

    def set_buffer_ranges(self, br: dict) -> None:
        """Ranges of local buffers' values (``local_ranges``)."""
        self.buffer_ranges = dict(br)
        self._reset()

    def loop_range(
        self, v: Var, start: Any, extent: Any, step: Any = None, count: int | None = None
    ) -> tuple[int, int] | None:
        """The values of a loop var running from ``start`` by a positive ``step`` while
        ``< start + extent`` (and at most ``count`` past ``start``: thread-bound loops);
        None (its dtype's range) when the step is not provably positive."""
        if step is not None and not self.is_pos(step):
            return None
        a, n = self(start), self(extent)
        if a is None or n is None:
            return None
        hi = a[1] + n[1] - 1
        if isinstance(extent, Sub) and extent.b is start:
            # range(start, stop): the extent is stop - start, and start + extent is stop
            # (exactly, also where the subtraction wraps)
            stop = self(extent.a)
            assert stop is not None  # the operand of an integer Sub is an integer
            hi = min(hi, stop[1] - 1)
        if count is not None:
            hi = min(hi, a[1] + count)
        assert isinstance(v.ty, PrimType)  # a loop var is an integer scalar
        return a[0], max(a[0], min(hi, int_range(v.ty)[1]))

    def trip_count(self, extent: Any, step: Any = None) -> float:
        """An upper bound of a loop's iterations (``inf`` when unknown)."""
        n = self(extent)
        if n is None:
            return float("inf")
        s = 1 if step is None else (self(step) or (0, 0))[0]
        if s < 1:
            return float("inf")
        return max(0, -(-n[1] // s))

    def _reset(self) -> None:
        self._memo.clear()
        self._over.clear()
        self._defaulted.clear()

    # -- queries ----------------------------------------------------------------------
    def __call__(self, e: Any) -> tuple[int, int] | None:
        """The range of scalar integer/bool expression ``e``; None for other expressions."""
        r = self._pure.get(e)
        if r is not None:
            return r
        r = self._memo.get(e)
        if r is not None:
            self._reads += 1  # a context-dependent result: so is whatever uses it
            return r
        if dtype_range(e.ty) is None:
            return None
        before = self._reads
        r = self._bound(e)
        if self._reads == before:
            self._pure[e] = r
            if e in self._over:
                self._pure_over.add(e)
        else:
            self._memo[e] = r
        return r

    bound = __call__

    def overflows(self, e: Any) -> bool:
        """Whether ``+ - * <<`` node ``e`` of a signed dtype can leave its dtype (exact value)."""
        self(e)
        return e in self._over or e in self._pure_over

    def shift_in_range(self, e: Any) -> bool:
        """Whether the amount of shift ``e`` is provably in ``[0, bits)`` (C++ defines only that)."""
        r = self(e.b)
        return r is not None and r[0] >= 0 and r[1] < e.a.ty.bits

    def is_nonneg(self, e: Any) -> bool:
        r = self(e)
        return r is not None and r[0] >= 0

    def is_pos(self, e: Any) -> bool:
        r = self(e)
        return r is not None and r[0] > 0

    # -- rules ------------------------------------------------------------------------
    def _fit(self, e: Any, lo: int, hi: int) -> tuple[int, int]:
        """An exact interval of ``e``'s value, wrapped to its dtype the IR's way."""
        t = e.ty
        full = int_range(t)
        if self.exact or (full[0] <= lo and hi <= full[1]):
            return lo, hi
        if t.kind == "int" and isinstance(e, _WRAPPING):
            self._over.add(e)
        return full

    def _bound(self, e: Any) -> tuple[int, int]:
        t = e.ty
        if isinstance(e, IntImm):
            return e.value, e.value
        full = dtype_range(t)
        assert full is not None  # __call__ bounds only integer/bool scalars
        if t.is_bool:
            return full
        if isinstance(e, Var):
            self._reads += 1
            r = self.ranges.get(e)
            if r is None:
                self._defaulted.add(e)
                return full
            return r
        m = self._b_table[type(e)]
        r = None if m is None else m(self, e)
        if r is None:
            return (-UNBOUNDED, UNBOUNDED) if self.exact else full
        if self.exact and (r[0] <= -_HUGE or r[1] >= _HUGE):
            # Python integers have no width: an endpoint past 2**255 is taken as infinite, so
            # a finite bound never approaches the +-UNBOUNDED that stands for "no bound" (an
            # infinite endpoint plus or times a finite one stays past 2**255, and the rules
            # that shrink magnitudes -- division, >> -- refuse infinite operands)
            r = (-UNBOUNDED if r[0] <= -_HUGE else r[0], UNBOUNDED if r[1] >= _HUGE else r[1])
        return r

    def _b_Add(self, e):
        a, b = self(e.a), self(e.b)
        return self._fit(e, a[0] + b[0], a[1] + b[1])

    def _b_Sub(self, e):
        a, b = self(e.a), self(e.b)
        return self._fit(e, a[0] - b[1], a[1] - b[0])

    def _b_Mul(self, e):
        a, b = self(e.a), self(e.b)
        vs = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
        return self._fit(e, min(vs), max(vs))

    def _division(self, e, fn):
        a, b = self(e.a), self(e.b)
        if self.exact and (a[0] <= -_HUGE or a[1] >= _HUGE):
            return None  # an infinite dividend: the quotient is unbounded too
        parts = [_div_corners(fn, a, p) for p in _nonzero_parts(b)]
        if b[0] <= 0 <= b[1]:
            parts.append((0, 0))  # division by zero gives 0 (the interpreter's choice)
        return self._fit(e, *_hull(*parts))

    def _b_Div(self, e):
        return self._division(e, trunc_div)

    def _b_FloorDiv(self, e):
        return self._division(e, lambda x, y: x // y)

    def _b_Mod(self, e):
        return self._remainder(e, self._trunc_mod(self(e.a), self(e.b)))

    def _b_FloorMod(self, e):
        return self._remainder(e, self._floor_mod(self(e.a), self(e.b)))

    def _remainder(self, e, r):
        # a common divisor of a and b divides the remainder (x * 8 % 128 <= 120)
        if isinstance(e.b, IntImm) and e.b.value:
            r = _snap(r, math.gcd(_divisor(e.a), e.b.value))
        return r

    @staticmethod
    def _trunc_mod(a, b):
        parts = _nonzero_parts(b)
        if not parts:
            return 0, 0  # division by zero gives 0
        if len(parts) == 1 and parts[0] == b and a[0] >= 0 and a[1] < min(abs(b[0]), abs(b[1])):
            return a  # a % b == a (b does not take 0)
        m = max(abs(b[0]), abs(b[1])) - 1  # |a % b| <= |b| - 1, with the sign of a
        return (0 if a[0] >= 0 else max(a[0], -m)), (0 if a[1] <= 0 else min(a[1], m))

    @staticmethod
    def _floor_mod(a, b):
        if b[0] > 0:  # the result is in [0, b - 1]
            if a[0] >= 0 and a[1] < b[0]:
                return a  # a % b == a
            return 0, (min(a[1], b[1] - 1) if a[0] >= 0 else b[1] - 1)
        if b[1] < 0:  # in [b + 1, 0]
            return b[0] + 1, 0
        return min(b[0] + 1, 0), max(b[1] - 1, 0)  # either sign, or division by zero (0)

    def _b_Min(self, e):
        a, b = self(e.a), self(e.b)
        return min(a[0], b[0]), min(a[1], b[1])

    def _b_Max(self, e):
        a, b = self(e.a), self(e.b)
        return max(a[0], b[0]), max(a[1], b[1])

    def _b_Cast(self, e):
        s = self(e.value)
        full = dtype_range(e.ty)
        if e.ty.is_bool:
            return 0, 1
        if s is None:  # from float: truncates and saturates
            return full
        if full[0] <= s[0] and s[1] <= full[1]:
            return s
        return full

    def _b_Select(self, e):
        return _hull(self(e.true_value), self(e.false_value))

    def _amounts(self, e) -> tuple[tuple[int, int] | None, bool]:
        """The in-range part of a shift amount, and whether it may be out of range."""
        b, bits = self(e.b), e.a.ty.bits
        assert b is not None  # a shift amount is an integer
        lo, hi = max(b[0], 0), min(b[1], bits - 1)
        return ((lo, hi) if lo <= hi else None), (b[0] < 0 or b[1] >= bits)

    def _b_Shl(self, e):
        a = self(e.a)
        if self.exact:  # Python's <<: no width (a negative amount raises: nothing launches)
            b = self(e.b)
            if not 0 <= b[1] <= 512 or max(abs(a[0]), abs(a[1])) >= UNBOUNDED:
                return None
            vs = [x << s for x in a for s in (max(b[0], 0), b[1])]
            return min(vs), max(vs)
        amt, out = self._amounts(e)
        if amt is None:
            return 0, 0  # every amount is out of range: 0
        vs = [x << s for x in a for s in amt]
        lo, hi = min(vs), max(vs)
        if out:
            lo, hi = min(lo, 0), max(hi, 0)
        return self._fit(e, lo, hi)

    def _b_Shr(self, e):
        a = self(e.a)
        if self.exact and (a[0] <= -_HUGE or a[1] >= _HUGE):
            return None  # an infinite operand stays unbounded
        amt, out = self._amounts(e)
        parts = []
        if out:
            parts.append((-1 if a[0] < 0 else 0, -1 if a[1] < 0 else 0))
        if amt is not None:
            vs = [x >> s for x in a for s in amt]
            parts.append((min(vs), max(vs)))
        return _hull(*parts)

    def _b_BitAnd(self, e):
        a, b = self(e.a), self(e.b)
        his = [r[1] for r in (a, b) if r[0] >= 0]
        if his:  # x & y with y >= 0 lies in [0, y]
            return 0, min(his)
        if a[1] < 0 and b[1] < 0 and not self.exact:  # both negative: the sign bit stays,
            return int_range(e.ty)[0], min(a[1], b[1])  # other bits only clear
        return None

    def _b_BitOr(self, e):
        a, b = self(e.a), self(e.b)
        if a[0] >= 0 and b[0] >= 0:
            return max(a[0], b[0]), (1 << max(a[1], b[1]).bit_length()) - 1
        return None

    def _b_BitXor(self, e):
        a, b = self(e.a), self(e.b)
        if a[0] >= 0 and b[0] >= 0:
            return 0, (1 << max(a[1], b[1]).bit_length()) - 1
        return None

    def _b_BitNot(self, e):
        a = self(e.a)
        if e.ty.kind == "uint" and not self.exact:
            m = int_range(e.ty)[1]
            return m - a[1], m - a[0]
        return -a[1] - 1, -a[0] - 1

    def _b_BufferLoad(self, e):
        self._reads += 1
        br = self.buffer_ranges.get(e.buffer.data)
        if br is not None and br[0] == e.ty:
            return br[1]
        return None

    def _b_Let(self, e):
        self.define(e.var, self(e.value))
        return self(e.body)

    def _b_Call(self, e):
        if isinstance(e.op, GlobalVar):
            return None
        if self.call_range is not None:
            self._reads += 1
            r = self.call_range(e)
            if r is not None:
                return r
        tr = e.op.traits
        if tr.select:  # the arms as the result dtype (a literal arm keeps its own: fold.select_arms)
            a, b = select_arms(e)
            return _hull(self(a), self(b))
        if tr.nonneg:
            return 0, int_range(e.ty)[1]
        return None


# ----------------------------------------------------------------------- local buffers
class _Stores(Visitor):
    """Stores into per-thread local integer buffers, with how often each can run."""

    def __init__(self, b: Bounds) -> None:
        self.b = b
        self.dtype: dict = {}  # data Var -> element dtype
        self.stores: dict = {}  # data Var -> [(value, count)]
        self.escaped: set = set()
        self.count: float = 1

    def visit_AllocBuffer(self, s) -> None:
        buf = s.buffer
        if buf.scope in LOCAL_SCOPES and dtype_range(buf.dtype) is not None and buf.dtype.is_int:
            self.dtype[buf.data] = buf.dtype
            self.stores.setdefault(buf.data, [])
        self.generic_visit(s)

    def visit_Var(self, v: Var) -> None:
        self.escaped.add(v)  # the pointer itself is used (a view, a call argument, ...)

    def visit_Call(self, c) -> None:
        if not isinstance(c.op, GlobalVar):
            for a in c.args:
                # T.address_of(x[i]); inline PTX may write buffer element operands
                if isinstance(a, BufferLoad) and (c.op.traits.takes_address or not c.op.pure):
                    self.escaped.add(a.buffer.data)
        self.generic_visit(c)

    def visit_BufferStore(self, s) -> None:
        d = s.buffer.data
        if d in self.stores:
            if s.buffer.dtype != self.dtype[d] or s.value.ty != self.dtype[d]:
                self.escaped.add(d)
            else:
                self.stores[d].append((s.value, self.count))
        self.generic_visit(s)

    def visit_Bind(self, s) -> None:
        self.generic_visit(s)
        self.b.define(s.var, self.b(s.value))

    def visit_Let(self, e) -> None:
        self.visit(e.value)
        self.b.define(e.var, self.b(e.value))
        self.visit(e.body)

    def _loop(self, n: float, body) -> None:
        saved = self.count
        self.count = 0 if saved == 0 or n == 0 else saved * n
        self.visit(body)
        self.count = saved

    def visit_For(self, s) -> None:
        for x in (s.start, s.extent, s.step):
            self.visit(x)
        if s.kind is ForKind.THREAD_BINDING:
            self.b.define(s.var, self.b.loop_range(s.var, s.start, s.extent))
            self._loop(1, s.body)
        else:
            self.b.define(s.var, self.b.loop_range(s.var, s.start, s.extent, s.nonunit_step))
            self._loop(self.b.trip_count(s.extent, s.nonunit_step), s.body)

    def visit_While(self, s) -> None:
        self.visit(s.cond)
        self._loop(float("inf"), s.body)


def _reads(e: Any, data: Var) -> bool:
    class _R(Visitor):
        found = False

        def visit_BufferLoad(self, x):
            if x.buffer.data is data:
                self.found = True
            self.generic_visit(x)

    r = _R()
    r.visit(e)
    return r.found


def _increment(e: Any, data: Var) -> list[tuple[Any, int]] | None:
    """``load ± d1 ± d2 ...`` of ``data`` (one ``+load`` term in a chain of ``+``/``-``, no
    other term reading it): the other terms with their signs."""
    if not isinstance(e, (Add, Sub)):
        return None
    terms: list[tuple[Any, int]] = []
    todo: list[tuple[Any, int]] = [(e, 1)]
    while todo:  # flatten the +/- tree (left-deep chains are long: no recursion)
        x, sign = todo.pop()
        if isinstance(x, Add):
            todo += ((x.a, sign), (x.b, sign))
        elif isinstance(x, Sub):
            todo += ((x.a, sign), (x.b, -sign))
        else:
            terms.append((x, sign))
    loads = [i for i, (x, sign) in enumerate(terms) if isinstance(x, BufferLoad) and x.buffer.data is data]
    if len(loads) != 1 or terms[loads[0]][1] != 1:
        return None
    rest = terms[: loads[0]] + terms[loads[0] + 1 :]
    if any(_reads(x, data) for x, _ in rest):
        return None
    return rest


def _sum_range(b: Bounds, terms: list[tuple[Any, int]]) -> tuple[int, int]:
    """The exact range of a signed sum of terms (each term's range from ``b``)."""
    lo = hi = 0
    for x, sign in terms:
        r = b(x)
        if r is None:
            return -UNBOUNDED, UNBOUNDED
        lo, hi = (lo + r[0], hi + r[1]) if sign > 0 else (lo - r[1], hi - r[0])
    return lo, hi


def local_ranges(body: Any, bounds: Bounds, widen_after: int = 70) -> dict:
    """The ranges of the values held by the per-thread local integer buffers of ``body``
    (for ``Bounds.set_buffer_ranges``), given the ranges ``bounds`` knows where ``body``
    starts. A buffer whose pointer escapes (a view, ``address_of``, an inline-PTX operand)
    is left out. Each range is the hull of 0 (the initial value), the values stored, and
    the drift of its increments ``x = x + d`` (trip counts times ``d``), solved by iterating
    from below; a range still growing after ``widen_after`` rounds becomes its dtype's."""
    b = Bounds(bounds.ranges, call_range=bounds.call_range)
    walk = _Stores(b)
    walk.visit(body)
    forms = {
        d: [(v, n, _increment(v, d)) for v, n in st if n]  # (value, count, increment or None)
        for d, st in walk.stores.items()
        if d not in walk.escaped
    }
    inf = float("inf")
    cur: dict = {d: (walk.dtype[d], (0, 0)) for d in forms}
    rounds = 0
    while True:
        b.set_buffer_ranges(cur)
        new = {}
        for d, st in forms.items():
            full = int_range(walk.dtype[d])
            lo = hi = 0  # the initial value
            dlo = dhi = 0  # drift of the increments
            for v, n, inc in st:
                if inc is None:
                    r = b(v)
                    assert r is not None  # a value stored to an integer buffer is an integer
                    lo, hi = min(lo, r[0]), max(hi, r[1])
                else:
                    r = _sum_range(b, inc)
                    dlo += n * r[0] if r[0] < 0 else 0
                    dhi += n * r[1] if r[1] > 0 else 0
            lo, hi = lo + dlo, hi + dhi
            if lo == -inf or hi == inf or lo < full[0] or hi > full[1]:
                lo, hi = full
            new[d] = (walk.dtype[d], (int(lo), int(hi)))
            if rounds >= widen_after and new[d] != cur[d]:
                new[d] = (walk.dtype[d], full)
        if new == cur:
            return cur
        cur = new
        rounds += 1
