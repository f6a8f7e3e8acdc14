"""Op traits (issue #13): declared on the op, queried by passes instead of names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tirx.ir.op import Traits, all_ops, declare, lookup

ROOT = Path(__file__).resolve().parent.parent


def test_builtin_traits():
    ops = all_ops(builtin_only=True)
    assert ops["if_then_else"].traits.select and ops["if_then_else"].traits.lazy_args == (1, 2)
    for n in ("cuda.atomic_add", "cuda.atomic_max", "cuda.atomic_min", "cuda.atomic_exch", "cuda.atomic_cas"):
        assert ops[n].traits.atomic == 0
    assert {n for n, o in ops.items() if o.traits.atomic is not None} == {
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
    dims = {"block.x": (1, 256), "grid.y": (4, 4), "cluster.size": (2, 2)}
    dim = dims.get
    assert ops["cuda.thread_idx"].traits.value_range("x", dim) == (0, 255)
    assert ops["cuda.block_idx"].traits.value_range("y", dim) == (0, 3)
    assert ops["cuda.block_dim"].traits.value_range("x", dim) == (1, 256)
    assert ops["cuda.warp_id"].traits.value_range(None, dim) == (0, 7)
    assert ops["cuda.cta_rank"].traits.value_range(None, dim) == (0, 1)
    assert ops["cuda.lane_id"].traits.value_range(None, dim) == (0, 31)
    # an unknown dimension gives no range
    assert ops["cuda.thread_idx"].traits.value_range("z", dim) is None
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
    for r in rows.values():
        assert r["count"] == len(r["files"])
        assert not any(f.startswith(("tests/", "docs/")) or f.endswith("ops_builtin.py") for f in r["files"])
    # passes query traits, not these names
    for f in ("passes/cse.py", "passes/simplify.py", "tirx/ir/bounds.py"):
        assert f not in rows["if_then_else"]["files"]
    assert "passes/pointer.py" not in rows["cuda.atomic_max"]["files"]
