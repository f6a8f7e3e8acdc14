"""Interval analysis of integer expressions (tirx.ir.bounds): every value an expression can
take under the IR's exact semantics lies in its interval, and "cannot overflow" means the
exact (unwrapped) result equals the wrapped one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tirx.ir import (
    EQ,
    GE,
    LT,
    Add,
    And,
    BitAnd,
    BitNot,
    BitOr,
    BitXor,
    Cast,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Select,
    Shl,
    Shr,
    Sub,
    Var,
)
from tirx.ir.arith import int_range, trunc_div, trunc_mod, wrap
from tirx.ir.bounds import UNBOUNDED, Bounds, local_ranges
from tirx.ir.op import call
from tirx.ir.types import prim
from tirx.script import tirx as T

INT_TYPES = [prim(n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]
BINARY = (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max, Shl, Shr, BitAnd, BitOr, BitXor)


# ------------------------------------------------------------------ reference semantics
def _shift_amount(b: int, t) -> int:
    return b % (1 << t.bits)  # read as unsigned, as PTX and the interpreter do


def _apply(cls, a: int, b: int, t) -> tuple[int, int | None]:
    """(wrapped IR result, exact mathematical result or None where it is not arithmetic)."""
    if cls is Add:
        x = a + b
    elif cls is Sub:
        x = a - b
    elif cls is Mul:
        x = a * b
    elif cls is Div:
        x = 0 if b == 0 else trunc_div(a, b)
    elif cls is Mod:
        x = 0 if b == 0 else trunc_mod(a, b)
    elif cls is FloorDiv:
        x = 0 if b == 0 else a // b
    elif cls is FloorMod:
        x = 0 if b == 0 else a % b
    elif cls is Min:
        x = min(a, b)
    elif cls is Max:
        x = max(a, b)
    elif cls is Shl:
        s = _shift_amount(b, t)
        x = 0 if s >= t.bits else a << s
        return wrap(x, t), (x if s < t.bits else None)
    elif cls is Shr:
        s = _shift_amount(b, t)
        x = (-1 if a < 0 else 0) if s >= t.bits else a >> s
    elif cls is BitAnd:
        x = a & b
    elif cls is BitOr:
        x = a | b
    elif cls is BitXor:
        x = a ^ b
    else:
        raise AssertionError(cls)
    return wrap(x, t), x


def evaluate(e, env: dict, seen: list) -> int:
    """The IR value of ``e``; appends (node, value, exact, operands) for every node evaluated."""
    ops: tuple = ()
    if isinstance(e, IntImm):
        v, x = e.value, e.value
    elif isinstance(e, Var):
        v = x = env[e]
    elif isinstance(e, BINARY):
        a, b = evaluate(e.a, env, seen), evaluate(e.b, env, seen)
        v, x = _apply(type(e), a, b, e.ty)
        ops = (a, b)
    elif isinstance(e, (EQ, LT)):
        a, b = evaluate(e.a, env, seen), evaluate(e.b, env, seen)
        v = x = int(a == b if isinstance(e, EQ) else a < b)
    elif isinstance(e, BitNot):
        v = wrap(~evaluate(e.a, env, seen), e.ty)
        x = v
    elif isinstance(e, Cast):
        v = wrap(evaluate(e.value, env, seen), e.ty)
        x = v
    elif isinstance(e, Select):
        c = evaluate(e.cond, env, seen)
        tv, fv = evaluate(e.true_value, env, seen), evaluate(e.false_value, env, seen)
        v = x = tv if c else fv
    elif isinstance(e, Let):
        env = {**env, e.var: evaluate(e.value, env, seen)}
        v = x = evaluate(e.body, env, seen)
    elif getattr(getattr(e, "op", None), "name", None) == "popcount":
        a = evaluate(e.args[0], env, seen)
        v = x = bin(a % (1 << e.ty.bits)).count("1")
    else:
        raise AssertionError(type(e))
    seen.append((e, v, x, ops))
    return v


# ------------------------------------------------------------------ random expressions
@st.composite
def ranges(draw, t):
    lo, hi = int_range(t)
    edge = st.sampled_from([lo, lo + 1, -1, 0, 1, 2, hi - 1, hi, hi // 2, lo // 2])
    pick = st.one_of(st.integers(lo, hi), edge.filter(lambda v: lo <= v <= hi), st.integers(-300, 300))
    a, b = draw(pick), draw(pick)
    a, b = max(lo, min(a, hi)), max(lo, min(b, hi))
    return min(a, b), max(a, b)


@st.composite
def exprs(draw, t, vars_, depth):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from(vars_[t]))
        lo, hi = int_range(t)
        c = draw(st.one_of(st.integers(-40, 40), st.integers(lo, hi), st.sampled_from([lo, hi, t.bits, 1])))
        return IntImm(max(lo, min(c, hi)), t)
    k = draw(st.integers(0, 9))
    if k <= 5:
        cls = draw(st.sampled_from(BINARY))
        return cls(draw(exprs(t, vars_, depth - 1)), draw(exprs(t, vars_, depth - 1)))
    if k == 6:
        u = draw(st.sampled_from(INT_TYPES))
        return Cast(t, draw(exprs(u, vars_, depth - 1)))
    if k == 7:
        a, b = draw(exprs(t, vars_, depth - 1)), draw(exprs(t, vars_, depth - 1))
        c = draw(st.sampled_from([EQ, LT]))(
            draw(exprs(t, vars_, depth - 1)), draw(exprs(t, vars_, depth - 1))
        )
        return Select(c, a, b) if draw(st.booleans()) else Cast(t, c)
    if k == 8:
        return BitNot(draw(exprs(t, vars_, depth - 1)))
    v = Var("l", t)
    value = draw(exprs(t, vars_, depth - 1))
    body = draw(exprs(t, {**vars_, t: [*vars_[t], v]}, depth - 1))
    return Let(v, value, body)


@st.composite
def cases(draw):
    vars_, rng = {}, {}
    for t in INT_TYPES:
        vars_[t] = []
        for i in range(2):
            v = Var(f"{t}_{i}", t)
            vars_[t].append(v)
            rng[v] = draw(ranges(t))
    t = draw(st.sampled_from(INT_TYPES))
    e = draw(exprs(t, vars_, 4))
    envs = [{v: draw(st.integers(*r)) for v, r in rng.items()} for _ in range(4)]
    return e, rng, envs


@settings(max_examples=400, deadline=None)
@given(cases())
def test_every_value_lies_in_its_interval(case):
    e, rng, envs = case
    b = Bounds(rng)
    for env in envs:
        seen: list = []
        evaluate(e, env, seen)
        for node, v, x, ops in seen:
            if isinstance(node, Var) and node not in rng:
                continue  # a Let var: its range is its value's
            lo, hi = b(node)
            assert lo <= v <= hi, (node, v, (lo, hi))
            arith = isinstance(node, (Add, Sub, Mul)) or (isinstance(node, Shl) and b.shift_in_range(node))
            if arith and node.ty.kind == "int" and not b.overflows(node):
                assert x == v, (node, x, v)  # "no overflow": the exact result is the wrapped one
            if isinstance(node, (Shl, Shr)) and b.shift_in_range(node):
                assert 0 <= ops[1] < node.ty.bits


@settings(max_examples=300, deadline=None)
@given(cases())
def test_exact_mode_bounds_host_evaluation(case):
    """exact=True (launch configuration, host bindings) bounds what the runtime computes on
    the host: Python integers, nothing wrapped but casts."""
    from tirx.runtime.hostexpr import HOST_GLOBALS, HostExprError, to_python

    e, rng, envs = case
    try:
        code = to_python(e, {v: f"v{i}" for i, v in enumerate(rng)})
    except HostExprError:
        return  # Let: not a host expression
    b = Bounds(rng, exact=True)
    lo, hi = b(e)
    shifts: list = []
    evaluate(e, envs[0], shifts)
    if any(isinstance(n, Shl) and b(n.b)[1] > 512 for n, *_ in shifts):
        return  # Python would build a number of 2^amount bits
    for env in envs:
        ns = {**HOST_GLOBALS, **{f"v{i}": env[v] for i, v in enumerate(rng)}}
        try:
            v = eval(code, ns)
        except (ZeroDivisionError, ValueError, MemoryError, OverflowError):
            continue  # the launch fails: nothing runs
        # +-UNBOUNDED endpoints are infinite (Python integers have no width)
        assert (lo == -UNBOUNDED or lo <= int(v)) and (hi == UNBOUNDED or int(v) <= hi), (code, v, (lo, hi))


def test_reference_semantics_agree_with_constant_folding():
    """The evaluator above and Simplify's constant folding (the IR's exact semantics)."""
    from tirx.passes.simplify import fold_expr

    for t in INT_TYPES:
        lo, hi = int_range(t)
        vals = sorted(
            v for v in {lo, lo + 1, -7, -1, 0, 1, 3, 7, t.bits - 1, t.bits, hi - 1, hi} if lo <= v <= hi
        )
        for cls in BINARY:
            for a in vals:
                for c in vals:
                    r = fold_expr(cls(IntImm(a, t), IntImm(c, t)))
                    if isinstance(r, IntImm):  # Simplify leaves /0 and out-of-range shifts alone
                        assert r.value == _apply(cls, a, c, t)[0], (cls, t, a, c)


def _range(e, **known):
    return Bounds({v: r for v, r in known.values()})(e)


def test_rules_by_example():
    i32, i64, u32 = prim("int32"), prim("int64"), prim("uint32")
    n = Var("n", i32)
    tx = Var("tx", i32)
    b = Bounds({n: (0, 2**31 - 1), tx: (0, 255)})
    # ceildiv(n, 256): the addition can overflow (full range), floor division bounds it anyway
    grid = FloorDiv(Sub(Add(n, IntImm(256, i32)), IntImm(1, i32)), IntImm(256, i32))
    assert b.overflows(grid.a.a)
    assert b(grid) == (-(2**31) // 256, (2**31 - 1) // 256)
    bx = Var("bx", i32)
    b.define(bx, (0, 2**31 // 256 - 1))
    i = Add(Mul(bx, IntImm(256, i32)), tx)
    assert b(i) == (0, 2**31 - 1) and not b.overflows(i) and not b.overflows(i.a)
    # one more block and the index can overflow
    b2 = Bounds({bx: (0, 2**31 // 256), tx: (0, 255)})
    assert b2.overflows(Add(Mul(bx, IntImm(256, i32)), tx))
    # floor division by a positive non-constant
    k = Var("k", i32)
    b.define(k, (1, 8))
    assert b.is_pos(k) and b(FloorDiv(tx, k)) == (0, 255) and b(FloorMod(tx, k)) == (0, 7)
    # casts keep a fitting range, else the target's
    assert b(Cast(i64, n)) == (0, 2**31 - 1)
    assert b(Cast(prim("int8"), tx)) == int_range(prim("int8"))
    # shifts: constant amounts are exact; unknown amounts are not in range
    assert b(Shl(tx, IntImm(4, i32))) == (0, 255 << 4) and b.shift_in_range(Shl(tx, IntImm(4, i32)))
    assert not b.shift_in_range(Shl(tx, n))
    assert b(BitAnd(n, IntImm(7, i32))) == (0, 7)
    assert b(Shr(n, IntImm(24, i32))) == (0, 127)
    # unsigned never "overflows" (C++ defines it) but keeps exact ranges when they fit
    x = Var("x", u32)
    assert not b.overflows(Mul(x, x)) and b(Mul(x, x)) == int_range(u32)
    # ops marked nonneg
    assert b(call("popcount", n)) == (0, 2**31 - 1)
    assert b(LT(n, tx)) == (0, 1)
    # a loop from start to stop: range(unit0, 1024) has extent 1024 - unit0
    u0, v = Var("u0", i32), Var("tile", i32)
    b.define(u0, (0, 65))
    assert b.loop_range(v, u0, Sub(IntImm(1024, i32), u0), IntImm(66, i32)) == (0, 1023)
    assert b.loop_range(v, u0, IntImm(10, i32), Sub(n, n)) is None  # step not provably > 0
    assert b.trip_count(IntImm(100, i32), IntImm(8, i32)) == 13
    # inside `if 0 <= y and y < 1000:` the product y * 1000 fits
    y = Var("y", i32)
    prod = Mul(y, IntImm(1000, i32))
    assert b.overflows(prod)
    with b.assume(And(GE(y, IntImm(0, i32)), LT(y, IntImm(1000, i32)))):
        assert b(y) == (0, 999) and not b.overflows(prod)
    assert b.overflows(prod) and b(y) == int_range(i32)
    # host expressions: unbounded Python ints, ceildiv(n, 256) is at most 2^23
    h = Bounds({n: (0, 2**31 - 1)}, exact=True)
    assert h(grid) == (0, 2**23) and h(Shl(n, IntImm(40, i32)))[1] == (2**31 - 1) << 40


def test_remainders_of_multiples_exhaustively():
    """x * 8 % 128 is at most 120 (the power of two dividing x * 8 divides the remainder),
    also where x * 8 wraps around; checked on every int8 and uint8 value."""
    i32 = prim("int32")
    x32 = Var("x", i32)
    assert Bounds()(FloorMod(Mul(x32, IntImm(8, i32)), IntImm(128, i32))) == (0, 120)
    for t in (prim("int8"), prim("uint8")):
        x = Var("x", t)
        lo, hi = int_range(t)
        for k in (3, 4, 6, 8, 12, 16, 24):
            for c in (4, 6, 8, 16, 48):
                for cls in (Mod, FloorMod):
                    for a in (
                        Mul(x, IntImm(k % (hi + 1), t)),
                        Shl(x, IntImm(2, t)),
                        Add(Mul(x, IntImm(4, t)), IntImm(8, t)),
                    ):
                        e = cls(a, IntImm(c, t))
                        r = Bounds({x: (lo, hi)})(e)
                        for v in range(lo, hi + 1):
                            got = evaluate(e, {x: v}, [])
                            assert r[0] <= got <= r[1], (e, v, got, r)


def test_local_ranges_counters_and_fixpoints():
    @T.function
    def f(A: T.Tensor((64,), "int32"), n: T.int32):
        it: T.int32 = 0
        for _i in range(10):
            for _j in range(5):
                it = it + 2
        stride: T.int32 = 128
        while stride > 0:
            A[stride] = it
            stride = stride // 2
        x: T.int32 = 1
        while x < n:
            x = x * 3
        A[0] = it + stride + x

    br = local_ranges(f.body, Bounds())
    got = {d.name: r for d, (_t, r) in br.items()}
    assert got["it"] == (0, 100)  # 50 increments by 2
    assert got["stride"] == (0, 128)  # halving converges
    assert got["x"] == int_range(prim("int32"))  # unbounded growth: the whole dtype


def test_local_ranges_leave_out_escaping_buffers():
    @T.function
    def f(A: T.Tensor((4,), "int32")):
        c: T.int32 = 0
        T.evaluate(T.call_extern("touch", T.address_of(c), ty="int32"))
        A[0] = c

    br = local_ranges(f.body, Bounds())
    assert not any(d.name == "c" for d in br)


def test_local_ranges_read_increments_from_a_whole_chain():
    """``acc = acc + 1 + 2 - k`` is an increment by ``3 - k`` (solved at once, not by 70
    rounds of iteration over the chain; the mutation campaign found a 5,000-term chain
    costing 1.85 s of codegen that way)."""

    @T.function
    def f(A: T.Tensor((64,), "int32"), k: T.int32):
        acc: T.int32 = 0
        back: T.int32 = 0
        for _i in range(10):
            acc = acc + 1 + 2 - T.min(T.max(k, 0), 1)
            back = 5 - back  # the load with a minus sign: not an increment, a fixpoint
        A[0] = acc + back

    br = local_ranges(f.body, Bounds())
    got = {d.name: r for d, (_t, r) in br.items()}
    assert got["acc"] == (0, 30)  # ten increments of 2..3
    assert got["back"] == (0, 5)


def test_exact_bounds_past_2_256_stay_sound():
    """Found by hypothesis: on the host, uint8 ``(0 - v) ^ (v << v)`` reaches about 2**262 for
    v = 254 (Python integers have no width); the XOR of a negative and that was bounded by the
    finite +-2**256 that stands for "no bound". Endpoints past 2**255 are now infinite, and
    division and >> of an infinite operand stay unbounded."""
    from tirx.ir import BitXor, FloorDiv, IntImm, Shl, Shr, Sub, Var
    from tirx.runtime.hostexpr import HOST_GLOBALS, to_python

    u8 = prim("uint8")
    v = Var("v", u8)
    e = BitXor(Sub(IntImm(0, u8), v), Shl(v, v))
    b = Bounds({v: (0, 254)}, exact=True)
    lo, hi = b(e)
    code = to_python(e, {v: "v"})
    for x in (0, 1, 200, 254):
        got = eval(code, {**HOST_GLOBALS, "v": x})
        assert (lo == -UNBOUNDED or lo <= got) and (hi == UNBOUNDED or got <= hi)
    big = Shl(v, v)  # finite but past 2**255: infinite
    assert b(big)[1] == UNBOUNDED
    for shrink in (FloorDiv(big, IntImm(4, u8)), Shr(big, IntImm(4, u8))):
        assert b(shrink)[1] == UNBOUNDED
