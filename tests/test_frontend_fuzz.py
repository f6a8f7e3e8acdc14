"""Printed text is Python the frontend accepts: generated IR -> text -> @T.function -> equal IR."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from test_frontend_util import load_module, printed_text_as_python

import tirx
from tirx.testing import strategies as tst

_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _reparse(obj):
    mod = load_module(printed_text_as_python(tirx.dumps(obj)), "fuzz")
    return getattr(mod, obj.name)


@_SETTINGS
@given(tst.functions(max_stmts=15))
def test_printed_function_reparses_through_the_frontend(f):
    tirx.assert_structural_equal(_reparse(f), f)


@_SETTINGS
@given(tst.modules(max_stmts=10))
def test_printed_module_reparses_through_the_frontend(m):
    tirx.assert_structural_equal(_reparse(m), m)
