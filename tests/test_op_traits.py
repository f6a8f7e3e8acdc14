"""Op traits (issue #13): declared on the op, queried by passes instead of names."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tirx.ir.op import _DECL_SITE, Traits, all_ops, declare, find, lookup

ROOT = Path(__file__).resolve().parent.parent


def test_builtin_traits():
    ops = all_ops(builtin_only=True)
    assert ops["if_then_else"].traits.select and ops["if_then_else"].traits.lazy_args == (1, 2)
    for n in ("cuda.atomic_add", "cuda.atomic_max", "cuda.atomic_min", "cuda.atomic_exch", "cuda.atomic_cas",
              "atomic_add"):  # fmt: skip
        assert ops[n].traits.atomic == 0
    assert {n for n, o in ops.items() if o.traits.atomic is not None} == {
        "atomic_add",
        "cuda.atomic_add",
        "cuda.atomic_max",
        "cuda.atomic_min",
        "cuda.atomic_exch",
        "cuda.atomic_cas",
    }
    assert ops["ptr_byte_offset"].traits.pointer_from == (0,)
    assert ops["ptx.mapa"].traits.pointer_from == (0,)
    assert ops["address_of"].traits.takes_address
    assert ops["reinterpret"].traits.bitcast
    assert ops["cuda.cta_sync"].traits.convergent and ops["cuda.shfl_xor_sync"].traits.convergent
    assert not ops["exp"].traits.convergent
    # extra={"nonneg": True} still sets the trait
    for n in ("popcount", "clz", "cuda.thread_idx", "cuda.lane_id", "cuda.warp_id"):
        assert ops[n].traits.nonneg
    assert not ops["exp"].traits.nonneg
    assert ops["cuda.thread_idx"].traits.launch == ("idx", "block")
    assert ops["cuda.block_idx"].traits.launch == ("idx", "grid")


def test_value_ranges():
    ops = all_ops(builtin_only=True)
    dims = {
        "block.x": (1, 256),
        "block.y": (1, 1),
        "block.z": (1, 1),
        "grid.y": (4, 4),
        "cluster.size": (2, 2),
    }
    dim = dims.get
    assert ops["cuda.thread_idx"].traits.value_range("x", dim) == (0, 255)
    assert ops["cuda.block_idx"].traits.value_range("y", dim) == (0, 3)
    assert ops["cuda.block_dim"].traits.value_range("x", dim) == (1, 256)
    assert ops["cuda.warp_id"].traits.value_range(None, dim) == (0, 7)
    assert ops["cuda.cta_rank"].traits.value_range(None, dim) == (0, 1)
    assert ops["cuda.lane_id"].traits.value_range(None, dim) == (0, 31)
    # warps come from the linear index: a 64 x 4 x 2 block has 16 warps, 4 warpgroups
    big = {"block.x": (1, 64), "block.y": (1, 4), "block.z": (1, 2)}.get
    assert ops["cuda.warp_id"].traits.value_range(None, big) == (0, 15)
    assert ops["cuda.warpgroup_id"].traits.value_range(None, big) == (0, 3)
    # a dimension of unknown extent gives no warp range
    assert ops["cuda.warp_id"].traits.value_range(None, {"block.x": (1, 256)}.get) is None
    # an unknown dimension gives no range
    assert ops["cuda.thread_idx"].traits.value_range("z", dim) == (0, 0)
    assert ops["cuda.thread_idx"].traits.value_range("z", {"block.x": (1, 256)}.get) is None
    assert ops["exp"].traits.value_range(None, dim) is None


def test_declare_traits_keywords_and_defaults():
    name = "test_traits.probe"
    op = lookup(name) or declare(name, "x", "arg0", nonneg=True, convergent=True)
    assert op.traits.nonneg and op.traits.convergent and op.traits.atomic is None
    name2 = "test_traits.probe_obj"
    op2 = lookup(name2) or declare(name2, "p x", "arg0", traits=Traits(atomic=0), pure=False)
    assert op2.traits.atomic == 0 and not op2.traits.nonneg
    name3 = "test_traits.plain"
    assert (lookup(name3) or declare(name3, "x")).traits == Traits()
    with pytest.raises(TypeError, match="unknown trait"):
        declare("test_traits.bad", "x", bogus=True)


def _op_mentions():
    spec = importlib.util.spec_from_file_location("op_mentions", ROOT / "tools" / "op_mentions.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: where an op's name may still be spelled: surface syntax owned by a front end, the printer
#: or a form declaration, and the op declarations themselves (tirx/ops/)
SURFACE = (
    "tirx/script/",
    "tirx/surface/forms.py",
    "printer/",
    "grammar/",
    "tirx/ops/",
    "tirx/tirx/",
)  # tirx/tirx: TIRx's host API names


def test_op_mentions_tool_json():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "op_mentions.py"), "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    res = json.loads(out)
    rows = {r["op"]: r for r in res["ops"]}
    assert set(rows) == set(all_ops(builtin_only=True))
    assert res["summary"]["total_ops"] == len(rows)
    assert res["summary"]["ops_with_0_mentions"] == sum(1 for r in rows.values() if r["count"] == 0)
    for name, r in rows.items():
        assert r["count"] == len(r["files"])
        decl = Path(_DECL_SITE[name]).resolve().relative_to(ROOT).as_posix()
        assert decl.startswith("tirx/ops/") and decl not in r["files"], (name, decl)
        assert not any(f.startswith(("tests/", "docs/", "tirx/testing/", "tools/")) for f in r["files"])
        assert all(f.startswith(("tirx/testing/", "tirx/kernels/", "tirx/backend/", "tools/")) for f in r["uses"])
        # passes, analyses and backends (codegen, interpreter, runtime, tirx/ir) ask traits
        # or the declaration, never a name
        assert all(f.startswith(SURFACE) for f in r["files"]), (name, r["files"])
    # kernels of tools/ and tirx/testing/ use ops as any kernel does: reported, not counted
    assert "tirx/testing/elementwise.py" in rows["cuda.thread_idx"]["uses"]


def test_op_mentions_finds_name_tests():
    """The detector: name tests, op construction by name, ``T.<name>`` code, a second
    definition; not numpy functions, attributes, methods or C function names."""
    m = _op_mentions()
    src = """
import numpy as np

def atomic_max(p, v):
    return p

class C:
    def asm(self):
        self.log = np.exp(1.0)
        return {"fmod": ("fmodf", "fmod")}

def f(e, op):
    if op.name == "if_then_else" or getattr(e.op, "name", None) in ("popcount", "clz"):
        return call("exp", e)
    return T.cuda.thread_idx("x"), lookup("sqrt"), "see T.cuda.cta_sync()", "ptx.mapa.u64"
"""
    ops = all_ops(builtin_only=True)
    strings, as_names, chains, defs = m._py_mentions(src)
    dotted = {n: re.compile(r"(?<![\w])" + re.escape(n) + r"(?![\w])") for n in ops if "." in n}
    hits = {s for s in as_names if s in ops}
    for s in strings:
        hits |= m._string_names(s, ops, dotted)
    for c in chains:
        hits |= m._chain_names(c, ops)
    for d in defs:
        hits |= {n for n in ops if n.rsplit(".", 1)[-1] == d}
    assert hits == {
        "if_then_else", "popcount", "clz", "exp", "cuda.thread_idx", "sqrt", "cuda.cta_sync",
        "ptx.mapa", "cuda.atomic_max",
    }  # fmt: skip


def test_find_by_traits():
    ops = all_ops(builtin_only=True)
    assert find(takes_address=True) is ops["address_of"]
    assert find(bitcast=True) is ops["reinterpret"]
    assert find(alignment_test=True) is ops["is_aligned"]
    assert find(launch=("idx", "block")) is ops["cuda.thread_idx"]
    assert find(select=True) is ops["if_then_else"]
    with pytest.raises(ValueError, match="ops match"):
        find(nonneg=True)  # several
    with pytest.raises(ValueError, match="0 ops match"):
        find(launch=("idx", "nowhere"))
    with pytest.raises(TypeError, match="unknown trait"):
        find(bogus=True)
