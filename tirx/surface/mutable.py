"""Which names of a kernel are mutable locals: the frontend's rule for ``x = ...`` re-assigned
in a nested block, read from the Python syntax tree (``ast``: parsing only, nothing runs). The
frontend applies it to every kernel; the text builder asks for it when a text re-assigns a
name bound in an enclosing block (``grammar/__init__.py``), so both build the same IR."""

from __future__ import annotations

import ast
import itertools
from typing import Any

__all__ = ["function_mutables", "is_constexpr_test", "mutable_names"]


def mutable_names(body: list, decide: Any = None) -> frozenset:
    """The names a kernel keeps as mutable locals: re-assigned (unannotated) in a block nested
    below an earlier assignment, *and* read where that mutation shows: after the nested block
    closed, or inside a loop before any assignment of this iteration (the previous iteration's
    value, a ``while`` test included), or inside a nested ``def`` / ``lambda``. A re-assignment
    no read observes that way is a new binding (``x_1``), as TIRx builds it; one that is
    observed, which TIRx refuses (a read after the block) or builds as a loop that never ends
    (a ``while`` test), is the mutable local Python's meaning needs.

    ``decide(test)``, where given, says which way an ``if T.constexpr(...):`` goes (True,
    False, or None when it cannot tell yet): only the taken branch is in the built program,
    so only it counts (a name bound in a branch another configuration takes is no earlier
    assignment here)."""
    counter = itertools.count(1)
    order = itertools.count()
    defs: dict[str, list] = {}  # name -> [(order, block path)]
    uses: dict[str, list] = {}
    loops: list = []  # (loop path, first order, last order)
    in_defs: set = set()  # names read inside nested functions (read whenever they are called)

    def use(node: Any, path: tuple) -> None:
        if node is None:
            return
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and type(n.ctx) is ast.Load:
                uses.setdefault(n.id, []).append((next(order), path))
            elif isinstance(n, ast.Lambda):
                in_defs.update(x.id for x in ast.walk(n.body) if isinstance(x, ast.Name))

    def define(t: Any, path: tuple) -> None:
        tt = type(t)
        if tt is ast.Name:
            defs.setdefault(t.id, []).append((next(order), path))
        elif tt is ast.Tuple or tt is ast.List:
            for e in t.elts:
                define(e, path)
        elif tt is ast.Starred:
            define(t.value, path)
        else:  # A[i] = ..., obj.f = ...: reads A and i
            use(t, path)

    def loop(st: Any, path: tuple, test: Any) -> None:
        lp = (*path, next(counter))
        start = next(order)
        use(test, lp)  # a while test is read on every iteration
        walk(st.body, lp)
        loops.append((lp, start, next(order)))
        if st.orelse:
            walk(st.orelse, (*path, next(counter)))

    def walk(stmts: list, path: tuple) -> None:
        for st in stmts:
            t = type(st)
            if t is ast.Assign:
                use(st.value, path)
                for tg in st.targets:
                    define(tg, path)
            elif t is ast.AugAssign:
                use(st.value, path)
                if type(st.target) is ast.Name:
                    uses.setdefault(st.target.id, []).append((next(order), path))
                define(st.target, path)
            elif t is ast.If and is_constexpr_test(st.test):
                use(st.test, path)
                # decided while parsing: its branch is straight-line code (TIRx)
                taken = decide(st.test) if decide is not None else None
                if taken is not False:
                    walk(st.body, path)
                if taken is not True:
                    walk(st.orelse, path)
            elif t is ast.If:
                use(st.test, path)
                walk(st.body, (*path, next(counter)))
                if st.orelse:
                    walk(st.orelse, (*path, next(counter)))
            elif t is ast.For:
                use(st.iter, path)
                loop(st, path, None)
            elif t is ast.While:
                loop(st, path, st.test)
            elif t is ast.With:
                for item in st.items:
                    use(item.context_expr, path)
                walk(st.body, (*path, next(counter)))
            elif t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
                in_defs.update(x.id for x in ast.walk(st) if isinstance(x, ast.Name))
            else:
                use(st, path)

    walk(body, ())

    def encloses(p: tuple, q: tuple) -> bool:  # block p is q or encloses it
        return q[: len(p)] == p

    loop_ids = {lp[-1] for lp, _s, _e in loops}

    def closes_loop(dp: tuple, up: tuple) -> bool:  # a loop around dp that does not enclose up
        k = 0
        while k < min(len(dp), len(up)) and dp[k] == up[k]:
            k += 1
        return any(b in loop_ids for b in dp[k:])

    out = set()
    for name, ds in defs.items():
        if len(ds) < 2:
            continue
        seen: set = set()
        nested = False
        for _o, q in ds:  # source order: is an earlier path a proper prefix of q?
            if any(q[:k] in seen for k in range(len(q))):
                nested = True
                break
            seen.add(q)
        if not nested:
            continue
        if name in in_defs:
            out.add(name)
            continue
        for uo, up in uses.get(name, ()):
            # the definitions visible to this read on straight-line code: the last one before
            # it in a block enclosing it
            reaching = [o for o, dp in ds if o < uo and encloses(dp, up)]
            last = max(reaching, default=-1)
            # a definition in a loop closed before the read, after the visible one (TIRx refuses
            # the read; Python's meaning is the loop's last value). One in an ``if`` / ``with``
            # block closed before the read is TIRx's branch-local binding: the read sees the
            # binding before the block (held-out round 13), so it is no reason here
            if any(last < o < uo and not encloses(dp, up) and closes_loop(dp, up) for o, dp in ds):
                out.add(name)
                break
            # a loop around the read: its own re-assignment, not yet made in this iteration
            if any(
                s < uo < e and last < s and any(s < o < e for o, _dp in ds)
                for lp, s, e in loops
                if encloses(lp, up)
            ):
                out.add(name)
                break
    return frozenset(out)


def is_constexpr_test(test: Any) -> bool:
    """``if T.constexpr(...):`` (any spelling ending in ``constexpr``)."""
    if type(test) is not ast.Call:
        return False
    f = test.func
    return (type(f) is ast.Attribute and f.attr == "constexpr") or (
        type(f) is ast.Name and f.id == "constexpr"
    )


def function_mutables(text: str) -> dict[str, frozenset] | None:
    """``mutable_names`` of every function of a text (by name, module functions included), or
    None when Python cannot parse the text (a 3.12 ``def f[n](...)`` on an older Python)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: dict[str, frozenset] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            out[node.name] = mutable_names(node.body)
    return out
