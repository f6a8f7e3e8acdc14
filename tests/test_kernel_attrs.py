"""``T.cuda.KernelAttributes`` (``T.device_entry(..., kernel_attrs=...)``): the attrs TIRx
prints for it, and the kernel qualifiers codegen derives from them."""

from __future__ import annotations

import pytest
from test_frontend_util import load_module

import tirx
import tirx.codegen
from tirx.errors import DiagnosticError

_SRC = """
from tirx.script import tirx as T

@T.function
def k(A: T.Tensor((128,), "float32")):
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=128{cluster}), kernel_attrs=T.cuda.KernelAttributes({ka})):
        A[0] = T.float32(1)
"""


def _k(ka: str, cluster: str = ""):
    return load_module(_SRC.format(ka=ka, cluster=cluster), "ka").k


def test_printed_attrs_are_tirx_s():
    # TIRx 0.1.0a4 prints this dict for KernelAttributes(min_blocks_per_sm=2, max_blocks_per_cluster=4,
    # required_block_size=True) (keys sorted; the block and cluster shape added)
    f = _k("max_blocks_per_cluster=4, required_block_size=True")
    text = tirx.dumps(f)
    want = (
        '"cuda.kernel_attrs": {"max_blocks_per_cluster": 4, "required_block_size": 1, "required_block_x": 128, '
        '"required_block_y": 1, "required_block_z": 1, "required_cluster_x": 1, "required_cluster_y": 1, '
        '"required_cluster_z": 1}'
    )
    assert want in text
    assert tirx.structural_equal(tirx.loads(text), f)
    assert '{"min_blocks_per_sm": 2, "required_block_size": 0}' in tirx.dumps(_k("min_blocks_per_sm=2"))


@pytest.mark.parametrize(
    "ka, cluster, qual, ptx",
    [
        ("min_blocks_per_sm=2", "", "__launch_bounds__(128, 2)", ".minnctapersm 2"),
        ("max_blocks_per_cluster=4", ", cluster=2", "__launch_bounds__(128, 1, 4)", ".maxclusterrank 4"),
        ("max_registers_per_thread=64", "", "__maxnreg__(64)", ".maxnreg 64"),
        (
            "required_block_size=True",
            ", cluster=2",
            "__block_size__((128, 1, 1), (2, 1, 1))",
            ".reqntid 128, 1, 1",
        ),
        ("", "", "__launch_bounds__(128)", ".maxntid 128, 1, 1"),
    ],
)
def test_qualifiers_and_ptx(ka, cluster, qual, ptx, monkeypatch, tmp_path):
    f = _k(ka, cluster)
    assert qual in tirx.codegen.generate(f).text
    pytest.importorskip("cuda.bindings.nvrtc")
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path))
    k = tirx.compile(f, target="cuda -arch=sm_90a", cache=False)
    assert ptx in k.ptx


def test_required_block_size_with_launch_bounds(monkeypatch, tmp_path):
    """TIRx writes ``__block_size__(...) __launch_bounds__(128, 2)``, which ptxas refuses (.maxntid
    with .reqntid): tirx keeps the launch bounds as a comment (the required block bounds the block)."""
    f = _k("min_blocks_per_sm=2, required_block_size=True")
    text = tirx.codegen.generate(f).text
    assert "__block_size__((128, 1, 1), (1, 1, 1)) /* TIRx: __launch_bounds__(128, 2) */ k_kernel(" in text
    pytest.importorskip("cuda.bindings.nvrtc")
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path))
    k = tirx.compile(f, target="cuda -arch=sm_90a", cache=False)
    assert ".reqntid 128, 1, 1" in k.ptx and ".maxntid" not in k.ptx


def test_conflicting_attributes_are_located_errors():
    with pytest.raises(DiagnosticError, match="max_registers_per_thread conflicts"):
        _k("max_registers_per_thread=64, min_blocks_per_sm=2")
    with pytest.raises(DiagnosticError, match="min_blocks_per_sm must be a positive int"):
        _k("min_blocks_per_sm=0")


def test_kernel_attrs_from_text_must_be_counts():
    """Mutate fuzz seed 1338261887: text can hold any literal in cuda.kernel_attrs (1e999 loaded
    as an infinite float); codegen raised an internal OverflowError, now a located error."""
    text = (
        "@T.function\n"
        "def k(A: T.Tensor((8,), T.int32)):\n"
        '    with T.device_entry(1, 1, 1, 128, 1, 1, attrs={"cuda.kernel_attrs": {"min_blocks_per_sm": V}, '
        '"cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):\n'
        "        A[0] = 1\n"
    )
    for bad in ("1e999", "-3", '"two"', "2.5"):
        f = tirx.loads(text.replace("V", bad))
        with pytest.raises(DiagnosticError, match="min_blocks_per_sm must be a non-negative integer"):
            tirx.codegen.generate(f)
    assert "__launch_bounds__(128, 2)" in tirx.codegen.generate(tirx.loads(text.replace("V", "2"))).text
