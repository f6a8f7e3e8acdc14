"""The seed guide's examples (examples/seed_guide.py) equal the text TIRx prints for them."""

from __future__ import annotations

from pathlib import Path

import pytest
from examples_dir import load_example
from test_frontend_util import load_module, printed_text_as_python

import tirx

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "seed_guide.py"

HEADER = "from __future__ import annotations\n\n# from tvm_tirx.script import tirx as T\n\n"
LAUNCH = '"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]'
EXPECTED = {
    "add_two_f16": HEADER
    + f"""@T.function
def add[n](A: T.Tensor((n,), T.float16), B: T.Tensor((n,), T.float16)):
    with T.device_entry((n + 128 - 1) // 128, 1, 1, 128, 1, 1, attrs={{{LAUNCH}}}):
        i: T.let[T.int32] = T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")
        if i < n:
            B[i] = A[i] + T.float16(2.0)
""",
    "add_one_pairs": HEADER
    + f"""@T.function
def add_one_pairs[n](A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
    with T.device_entry((n + 512 - 1) // 512, 1, 1, 256, 1, 1, attrs={{{LAUNCH}}}):
        i: T.let[T.int32] = (T.cuda.block_idx("x") * 256 + T.cuda.thread_idx("x")) * 2
        if i < n:
            B[i] = A[i] + T.float32(1.0)
        if i + 1 < n:
            B[i + 1] = A[i + 1] + T.float32(1.0)
""",
    "add_one_256": HEADER
    + f"""@T.function
def add_one_fixed(A: T.Tensor((256,), T.float32), B: T.Tensor((256,), T.float32)):
    with T.device_entry(1, 1, 1, 256, 1, 1, attrs={{{LAUNCH}}}):
        i: T.let[T.int32] = T.cuda.block_idx("x") * 256 + T.cuda.thread_idx("x")
        if i < 256:
            B[i] = A[i] + T.float32(1.0)
""",
}


@pytest.fixture(scope="module")
def guide():
    return load_example("seed_guide.py")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_guide_kernel_equals_loaded_text(guide, name):
    tirx.assert_structural_equal(getattr(guide, name), tirx.loads(EXPECTED[name]))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_guide_kernel_equals_text_parsed_by_frontend(guide, name):
    f = getattr(guide, name)
    mod = load_module(printed_text_as_python(EXPECTED[name]), name)
    tirx.assert_structural_equal(f, getattr(mod, f.name))


def test_guide_make_add_float32_is_separate(guide):
    f32 = guide.make_add(guide.T.float32, 1)
    assert "T.float32(1.0)" in tirx.dumps(f32)
    assert not tirx.structural_equal(f32, guide.add_two_f16)


def test_guide_specialize_is_cached(guide):
    assert guide.add_one_fixed.specialize(N=256) is guide.add_one_256


def test_guide_only_the_import_changed(guide):
    text = EXAMPLE.read_text()
    assert "import tirx\nfrom tirx.script import tirx as T\n" in text
