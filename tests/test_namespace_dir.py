"""``dir(T.cuda)`` / ``dir(T.ptx)`` list their ops (editors and notebooks complete from
``dir``), and a misspelt member names the closest ones, the CUDA spelling first (issue #32)."""

from __future__ import annotations

import pytest

from tirx.ir import op as _op
from tirx.script import tirx as T


def test_namespaces_list_every_op_under_them():
    for ns, prefix in ((T.cuda, "cuda."), (T.ptx, "ptx.")):
        names = set(dir(ns))
        for full in _op.script_names():
            if full.startswith(prefix):
                assert full[len(prefix) :].split(".", 1)[0] in names, full
    assert "cta_sync" in dir(T.cuda) and "thread_idx" in dir(T.cuda)
    for name in dir(T.cuda):  # everything listed resolves
        assert getattr(T.cuda, name) is not None, name


@pytest.mark.parametrize(
    ("wrong", "first"),
    [
        ("syncthreads", "cta_sync"),
        ("__syncthreads", "cta_sync"),
        ("cta_synk", "cta_sync"),
        ("thread_id", "thread_idx"),
        ("__shfl_xor", "__shfl_xor_sync"),
    ],
)
def test_a_misspelt_member_suggests_the_closest(wrong, first):
    with pytest.raises(AttributeError, match=f"did you mean '{first}'"):
        getattr(T.cuda, wrong)


def test_dir_of_T_lists_script_names_not_the_modules_helpers():
    names = dir(T)
    for want in ("function", "jit", "float32", "bfloat16", "cuda", "ptx", "exp", "Tensor", "device_entry"):
        assert want in names, want
    for helper in ("Callable", "annotations", "OpNamespace", "KernelAttributes"):
        assert helper not in names, helper
    assert not [n for n in names if n.startswith("_")]
    for name in names:  # everything listed resolves
        assert getattr(T, name) is not None, name


def test_no_suggestion_when_nothing_is_close():
    with pytest.raises(AttributeError) as ei:
        T.cuda.qqqqqqqqqq  # noqa: B018 - the lookup is the test
    assert "did you mean" not in str(ei.value)


def test_every_op_and_alias_documents_itself():
    """help(T.cuda.thread_idx) shows the op's own doc and signature, not the Op class (#32)."""
    import inspect
    import pydoc

    from tirx.ir.op import Op, aliases, all_ops, get

    for name in all_ops(builtin_only=True):
        op = get(name)
        doc = op.__doc__
        assert doc.startswith(f"T.{name}") and "docs/ops.md" in doc, name
        sig = inspect.signature(op)
        assert len([p for p in sig.parameters.values() if p.name != "ty"]) == len(op.args), name
        assert ("ty" in sig.parameters) == op.needs_ty, name
    for name, a in aliases().items():
        assert a.__doc__.startswith(f"T.{name}") and f"T.{a.target}" in a.__doc__
        assert "span" not in inspect.signature(a).parameters
    text = pydoc.render_doc(T.cuda.thread_idx)
    assert "threadIdx" in text and "axis" in text and "singletons" not in text  # TIRx's parameter name
    assert Op.__doc__.startswith("An intrinsic")  # the class keeps its own docstring
    assert T.cuda.thread_idx.__name__ == "thread_idx"
    assert list(inspect.signature(T.cuda.warp_reduce).parameters) == ["value", "op", "width"]
