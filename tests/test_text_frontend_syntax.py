"""Text loading accepts the frontend's syntax for static kernels (issue #31: "any static kernel a
user writes in the frontend's syntax must load as text too"): the launch keywords of
``T.device_entry``, a device entry written as a bare statement, keyword arguments of op aliases,
mutable locals (``x: T.int32 = v``, ``T.local_scalar``), augmented assignment, tuple unpacking,
straight-line rebinding, comparison chains, a tensor's ``shape`` / ``ptr_to``, docstrings; and
the frontend golden cases that use no Python metaprogramming, whose source text must load to
the IR the frontend builds from it."""

from __future__ import annotations

import pathlib
import re
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_tirx_golden_frontend import build_case

import tirx
from tirx.testing import strategies

GOLDEN = pathlib.Path(__file__).parent / "data" / "tirx_golden" / "frontend"

#: frontend golden cases with no Python metaprogramming (no helpers, imports, closures, @T.jit):
#: their source is a static kernel, and loading it as text gives what the frontend builds
STATIC = [
    "branch_local_binding", "builder_regions", "cell_init_literals", "chained_compare_constant",
    "cmp_of_cmp", "cuda_ballot_int", "cuda_convert", "cuda_iket", "cuda_launch_attrs", "cuda_shfl_dunder",
    "cuda_tensormap", "cuda_timers", "decl_tensor_pointer_expr", "device_entry_bare", "dtype_vector_isnan",
    "dtypes_all", "entry_backend_config", "entry_backend_config_bare", "entry_backend_config_groups",
    "extern_vector_lanes", "func_attr_global_symbol", "host_program_loop", "host_two_entries",
    "int64_row_major", "irnames_dtype", "irnames_finite", "irnames_host_types", "irnames_shuffle",
    "irnames_target", "launch_required_bounds", "launch_thread_kernels", "layout_basic", "layout_storage",
    "layout_stride_symbol", "layout_symbolic", "let_annotated_cell", "literal_dtypes", "loop_unroll",
    "module_dynamic_header", "module_free_vars", "nki_names", "nvshmem_ops", "nvshmem_ring",
    "ops_device_scope", "ops_gpu_generic", "ops_vector", "ptx_bulk_tensor_gather4",
    "ptx_bulk_tensor_prefetch", "ptx_cp_async", "ptx_cp_async_bulk", "ptx_float_pairs",
    "ptx_reduce_mapa_sreg", "ptx_sm100_forms", "raw_forms", "rearrange_einops", "rebind_in_nested_blocks",
    "return_kernel", "sibling_names", "sig_return_tensor", "tcgen05_descriptors", "tcgen05_ptx",
    "tcgen05_tmem", "tensor_reinterpret", "tensor_view_dtype", "tensormap_address", "tma_host_encode",
    "tma_im2col", "wgmma_mma_async_table",
]  # fmt: skip


@pytest.mark.parametrize("case", STATIC)
def test_static_frontend_source_loads_as_text_to_the_same_ir(case):
    built = build_case(case)
    loaded = tirx.loads((GOLDEN / f"{case}.py").read_text(), source_name=f"{case}.py")
    assert tirx.structural_equal(built, loaded), case
    assert tirx.dumps(loaded) == tirx.dumps(built)


HEAD = "from tirx.script import tirx as T\n\n@T.function\n"


def _both(body: str):
    """The kernel ``body`` (after the decorator) built by the frontend and loaded as text."""
    from test_frontend_util import load_module

    src = HEAD + body
    return load_module(src, "syntax_case").f, tirx.loads(src)


def test_launch_config_keywords_and_a_bare_entry_load_as_the_frontend_builds_them():
    built, loaded = _both(
        'def f(A: T.Tensor((64,), "float32")):\n'
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=32, cluster=(2, 1, 1), dynamic_smem_bytes=256),\n"
        "                   kernel_attrs=T.cuda.KernelAttributes(min_blocks_per_sm=2))\n"
        '    i = T.cuda.block_idx("x") * 32 + T.cuda.thread_idx("x")\n'
        "    A[i] = A[i] * T.float32(2)\n"
    )
    assert tirx.structural_equal(built, loaded)
    text = tirx.dumps(loaded)
    assert "cuda.launch_fields" in text and "min_blocks_per_sm" in text


def test_grid_and_block_keywords_in_a_with_header():
    built, loaded = _both(
        'def f(A: T.Tensor((64,), "float32")):\n'
        "    with T.device_entry(grid=2, block=32):\n"
        '        i = T.cuda.block_idx("x") * 32 + T.cuda.thread_idx("x")\n'
        "        A[i] = A[i] + T.float32(1)\n"
    )
    assert tirx.structural_equal(built, loaded)


def test_a_bare_entry_ends_with_its_block():
    """Inside an ``if``, a bare ``T.device_entry`` holds the rest of the branch, not what follows."""
    built, loaded = _both(
        'def f(A: T.Tensor((32,), "int32"), n: T.int32):\n'
        "    if n > 0:\n"
        "        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))\n"
        '        tx = T.cuda.thread_idx("x")\n'
        "        A[tx] = A[tx] + n\n"
        '    T.evaluate(T.call_extern("int32", "host_marker"))\n'
    )
    assert tirx.structural_equal(built, loaded)
    text = tirx.dumps(loaded)
    entry = next(ln for ln in text.splitlines() if "T.device_entry" in ln)
    marker = next(ln for ln in text.splitlines() if "host_marker" in ln)
    assert len(marker) - len(marker.lstrip()) < len(entry) - len(entry.lstrip())  # outside the entry


def test_alias_keyword_arguments_run_as_in_the_frontend():
    built, loaded = _both(
        'def f(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):\n'
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))\n"
        '    tx = T.cuda.thread_idx("x")\n'
        "    B[tx] = T.cuda.warp_max(A[tx], width=16)\n"
    )
    assert tirx.structural_equal(built, loaded)
    a = np.arange(32, dtype="float32")
    b = np.zeros(32, "float32")
    tirx.compile(loaded, target="interp")(a, b)
    np.testing.assert_array_equal(b, np.repeat([15.0, 31.0], 16).astype("float32"))


def test_mutable_locals_augmented_stores_and_unpacking_match_the_frontend():
    built, loaded = _both(
        'def f(A: T.Tensor((8,), "int32"), n: T.int32):\n'
        '    """A docstring is dropped."""\n'
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))\n"
        "    acc: T.int32 = 0\n"
        "    for i in range(8):\n"
        "        acc += A[i]\n"
        "        A[i] += 1\n"
        '    c = T.local_scalar("int32", 5)\n'
        "    c = c * 2\n"
        "    x = n + 1\n"
        "    x += 2\n"
        "    a, b = x, acc\n"
        "    if 0 <= n < 8:\n"
        "        A[n] = a + b + c + A.shape[0]\n"
    )
    assert tirx.structural_equal(built, loaded)
    a = np.arange(8, dtype="int32")
    tirx.compile(loaded, target="interp")(a, 3)
    want = np.arange(8, dtype="int32") + 1
    want[3] = (3 + 1 + 2) + 28 + 10 + 8
    np.testing.assert_array_equal(a, want)


def test_a_name_re_assigned_in_a_loop_is_the_frontends_mutable_local():
    """``x = x + i`` in a loop, read after it: the frontend's rule (``mutable_names``) makes ``x`` a
    mutable local from its first assignment; the text, read again with that rule, does the same."""
    built, loaded = _both(
        'def f(A: T.Tensor((4,), "int32"), n: T.int32):\n'
        "    x = n\n"
        "    for i in range(4):\n"
        "        x = x + A[i]\n"
        "    if n > 100:\n"
        "        x = 7\n"
        "    A[0] = x\n"
    )
    assert tirx.structural_equal(built, loaded)
    a = np.array([1, 2, 3, 4], "int32")
    tirx.compile(loaded, target="interp")(a, 5)
    assert a[0] == 5 + 1 + 2 + 3 + 4


def test_a_branch_local_binding_is_the_frontends_new_binding():
    """In an ``if`` the re-assignment is a new binding ending with the block (TIRx's and the
    frontend's rule): the read after the ``if`` sees the value from before it."""
    built, loaded = _both(
        'def f(A: T.Tensor((4,), "int32"), n: T.int32):\n'
        "    x = n + 1\n"
        "    if n > 2:\n"
        "        x = n * 10\n"
        "        A[1] = x\n"
        "    A[0] = x\n"
    )
    assert tirx.structural_equal(built, loaded)
    a = np.zeros(4, "int32")
    tirx.compile(loaded, target="interp")(a, 3)
    assert (a[0], a[1]) == (4, 30)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 parses def f[n](...): no refusal")
def test_without_a_python_parse_the_nested_re_assignment_is_refused_with_the_way_out():
    src = HEAD + (
        'def f[n](A: T.Tensor((n,), "int32")):\n'
        "    x = 0\n"
        "    for i in range(n):\n"
        "        x = x + A[i]\n"
        "    A[0] = x\n"
    )
    with pytest.raises(tirx.DiagnosticError) as e:
        tirx.loads(src, source_name="loop.tirx")
    assert "loop.tirx:7:9" in str(e.value) and "x: T.<dtype> = ..." in str(e.value)


def test_a_docstring_over_several_lines_keeps_later_positions():
    src = HEAD + (
        'def f(A: T.Tensor((4,), "int32")):\n'
        '    """Two lines\n'
        '    of docstring, with an escaped \\""" inside."""\n'
        "    A[0] = undefined_name\n"
    )
    with pytest.raises(tirx.DiagnosticError) as e:
        tirx.loads(src, source_name="doc.tirx")
    assert "doc.tirx:7:12" in str(e.value)


def test_ptx_by_text_handle_types_and_helpers_load_as_the_frontend_builds_them():
    built, loaded = _both(
        'def f(A: T.Tensor((64,), "float16"), n: T.int32):\n'
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))\n"
        '    S = T.alloc_shared((64,), "float16")\n'
        '    tx = T.cuda.thread_idx("x")\n'
        '    T.ptx["cp.async.ca.shared.global"](S.ptr_to([tx * 2]), A.ptr_to([tx * 2]), 4)\n'
        "    T.ptx.cp.async_.commit_group()\n"
        "    T.ptx.cp.async_.wait_group(0)\n"
        '    p: T.let = T.reinterpret(A.ptr_to([0]), ty=T.handle("float16", "global"))\n'
        "    A[tx] = S[T.ceildiv(tx, 2)] + T.f16(1)\n"
    )
    assert tirx.structural_equal(built, loaded)


def test_a_module_docstring_before_the_imports_is_dropped():
    src = (
        '"""What this file holds,\nover two lines."""\n'
        + HEAD
        + 'def f(A: T.Tensor((4,), "int32")):\n    A[0] = 1\n'
    )
    built, _ = _both('def f(A: T.Tensor((4,), "int32")):\n    A[0] = 1\n')
    assert tirx.structural_equal(tirx.loads(src), built)


_ENTRY = re.compile(
    r"T\.device_entry\((\w+), (\w+), (\w+), (\w+), (\w+), (\w+), attrs=\{\"cuda\.kernel_attrs\": \{\}, "
    r"\"cuda\.launch_fields\": \[\"grid\.x\", \"grid\.y\", \"grid\.z\", \"block\.x\", \"block\.y\", \"block\.z\"\]\}\)"
)


def _launch_config(m: re.Match) -> str:
    """A positional launch as ``launch=T.cuda.LaunchConfig(...)``, where that spelling can hold
    it: a block of at most 1024 threads (``LaunchConfig`` refuses more, as TIRx's does; the IR
    and the positional form take any)."""
    g, b = m.groups()[:3], m.groups()[3:]
    n = 1
    for v in b:
        n *= int(v) if v.isdigit() else 1
    if n > 1024:
        return m.group(0)
    return f"T.device_entry(launch=T.cuda.LaunchConfig(grid=({', '.join(g)}), block=({', '.join(b)})))"


def _frontend_spelling(text: str) -> str:
    """The printed text with the frontend's spellings a user writes: the launch as
    ``launch=T.cuda.LaunchConfig(grid=..., block=...)`` and a docstring in every function."""
    text = _ENTRY.sub(_launch_config, text)
    out = []
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        out.append(ln)
        if ln.lstrip().startswith("def ") and ln.rstrip().endswith(":") and i + 1 < len(lines):
            nxt = lines[i + 1]
            out.append(nxt[: len(nxt) - len(nxt.lstrip())] + '"""A docstring."""')
    return "\n".join(out) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(strategies.functions())
def test_the_frontend_spelling_of_printed_text_loads_to_the_same_ir(f):
    text = tirx.dumps(f)
    spelled = _frontend_spelling(text)
    assert tirx.structural_equal(tirx.loads(spelled), f)


def test_the_frontend_spelling_rewrites_a_launch_and_adds_docstrings():
    f = build_case("loop_unroll")
    spelled = _frontend_spelling(tirx.dumps(f))
    assert "launch=T.cuda.LaunchConfig(grid=(" in spelled and '"""A docstring."""' in spelled
    assert tirx.structural_equal(tirx.loads(spelled), f)


def test_a_module_class_docstring_loads():
    src = (
        "from tirx.script import tirx as T\n\n@T.ir_module\nclass M:\n"
        '    """A module of one kernel."""\n\n'
        '    @T.function\n    def main(A: T.Tensor((4,), "int32")):\n        """The kernel."""\n        A[0] = 1\n'
    )
    from test_frontend_util import load_module

    assert tirx.structural_equal(load_module(src, "cls_doc").M, tirx.loads(src))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # the launch spelling
        ("T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32, colour=3))", "unexpected keyword"),
        (
            "T.device_entry(7, launch=T.cuda.LaunchConfig(grid=1, block=32))",
            "either launch=... or positional",
        ),
        (
            "T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32), kernel_attrs=5)",
            "kernel_attrs must be",
        ),
        ("T.device_entry(launch=5)", "launch must be a T.cuda.LaunchConfig, got 5"),
        # PTX by its text
        ("T.ptx[3]()", "takes the instruction text as a string"),
        ('T.ptx["fennce.proxy.async"]()', "did you mean 'fence'"),
        # mutable locals, updates, unpacking, tensor fields
        ('c = T.local_scalar("int32", 0, 7)', "local_scalar() takes from 0 to 2 positional"),
        ("A += 1", "cannot update a Buffer with '+='"),
        ("a, b = n, n, n", "cannot unpack 3 value(s) into 2 names"),
        ("A[0, 0] = A.shape[5]", "index out of range"),
        # the layout DSL
        ("A[0, 0] = A[0, 0:2]", "got a slice"),
        ("A[0, 0] = n @ 3", "'@' is the layout DSL's"),
        ("A[0, 0] = n @ T.cuda.Axis.nope", "has no axis 'nope'"),
    ],
)
def test_misuse_of_the_frontend_spelling_is_a_located_error(body, message):
    src = HEAD + f'def f(A: T.Tensor((4, 4), "int32"), n: T.int32):\n    {body}\n'
    with pytest.raises(tirx.DiagnosticError) as e:
        tirx.loads(src, source_name="bad.tirx")
    assert message in str(e.value) and "bad.tirx:5:" in str(e.value)


def test_tensor_views_load_as_the_frontend_declares_them():
    built, loaded = _both(
        'def f(A: T.Tensor((64,), "float16"), B: T.Tensor((32,), "uint32")):\n'
        "    V = A.view(4, 16)\n"
        "    P = V.permute(1, 0)\n"
        '    R = A.rearrange("(a b) -> b a", b=8)\n'
        '    W = A.view("uint32")\n'
        "    P[0, 1] = V[1, 0] + R[2, 3]\n"
        "    B[0] = W[3]\n"
    )
    assert tirx.structural_equal(built, loaded)
    assert tirx.dumps(built) == tirx.dumps(loaded)


def test_the_layout_dsl_loads_as_the_frontend_evaluates_it():
    built, loaded = _both(
        'def f(n: T.int32, A: T.Tensor((4, 16), "float32", layout=T.TileLayout(T.S[(4, 16) : (1, 4)]))):\n'
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))\n"
        '    L = T.alloc_local((8,), "float32", layout=T.TileLayout(T.S[(2, 4) : (n @ T.cuda.Axis.laneid, 1)]'
        " + T.R[2 : 16 @ T.cuda.Axis.laneid]))\n"
        '    W = T.alloc_shared((8, 16), "float32", layout=T.ComposeLayout(1, 2, 3, T.TileLayout(T.S[8, 16] + 3),'
        " swizzle_inner=False))\n"
        '    tx = T.cuda.thread_idx("x")\n'
        "    W[tx // 16, tx % 16] = A[tx // 16, tx % 16] + L[tx % 8]\n"
    )
    assert tirx.structural_equal(built, loaded)
