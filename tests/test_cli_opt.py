"""`tirx opt` / `tirx passes` (the pass registry, passes/registry.py) and `tirx compile -o`."""

from __future__ import annotations

import io
import sys

import pytest

import tirx
from tirx.passes import build_pipeline, parse_pipeline, register_pass, registered_passes
from tirx.tools.cli import main

SRC = """\
@T.function
def f(A: T.Tensor((8,), T.int32), n: T.int32):
    x: T.let[T.int32] = n * 4 + 0
    y: T.let[T.int32] = n * 4 + 0
    A[0] = x + y
"""


def _write(tmp_path, name="k.tirx", text=SRC):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_pipeline_strings_parse_with_typed_options():
    assert parse_pipeline("convert-ssa,cse , verify{require_ssa=true,raising=0}") == [
        ("convert-ssa", {}),
        ("cse", {}),
        ("verify", {"require_ssa": True, "raising": False}),
    ]
    p = build_pipeline("convert-ssa,simplify")
    assert [type(x).__name__ for x in p.passes] == ["ConvertSSA", "Simplify"]


@pytest.mark.parametrize(
    "bad, words",
    [
        ("", "at least one pass"),
        ("cse,,simplify", "empty pass name"),
        ("nope", "unknown pass 'nope'"),
        ("cse{x=1}", "has no option 'x'"),
        ("verify{require_ssa=maybe}", "expected true or false"),
        ("verify{require_ssa}", "must be name=value"),
        ("verify{require_ssa=true", "unclosed brace"),
    ],
)
def test_bad_pipelines_name_the_problem(bad, words):
    with pytest.raises(ValueError, match=words):
        parse_pipeline(bad)


def test_opt_runs_the_pipeline_and_matches_the_api(tmp_path, capsys):
    p = _write(tmp_path)
    assert main(["opt", str(p), "--passes", "simplify,cse"]) == 0
    out = capsys.readouterr().out
    want = tirx.dumps(build_pipeline("simplify,cse")(tirx.load(str(p))))
    assert out == want and "n * 4 + 0" not in out


def test_opt_output_file_stdin_timing_and_print_after_all(tmp_path, capsys, monkeypatch):
    p = _write(tmp_path)
    o = tmp_path / "out.tirx"
    assert main(["opt", str(p), "-p", "simplify", "-o", str(o), "--timing", "--print-after-all"]) == 0
    err = capsys.readouterr().err
    assert "simplify" in err and " ms" in err and "@T.function" in err  # timing and the IR after
    assert tirx.structural_equal(tirx.load(str(o)), build_pipeline("simplify")(tirx.load(str(p))))
    monkeypatch.setattr(sys, "stdin", io.StringIO(SRC))
    assert main(["opt", "-", "-p", "simplify", "--verify-each"]) == 0
    assert capsys.readouterr().out == o.read_text()


def test_opt_usage_errors_exit_2(tmp_path, capsys):
    p = _write(tmp_path)
    assert main(["opt", str(p), "-p", "nope"]) == 2
    assert "unknown pass 'nope'" in capsys.readouterr().err
    assert main(["opt", str(p), str(p), "-p", "cse", "-o", str(tmp_path / "x.tirx")]) == 2
    assert main(["opt", str(tmp_path / "missing.tirx"), "-p", "cse"]) == 2


def test_opt_bad_file_is_a_located_diagnostic(tmp_path, capsys):
    p = _write(tmp_path, text="@T.function\ndef f(A: T.Tensor((8,), T.int32)):\n    A[0] = q\n")
    assert main(["opt", str(p), "-p", "cse"]) == 1
    err = capsys.readouterr().err
    assert f"{p}:3:12" in err and "Traceback" not in err


def test_plugin_registers_a_user_pass(tmp_path, capsys):
    plug = tmp_path / "plug.py"
    plug.write_text(
        "from tirx.passes import function_pass, register_pass\n"
        "@register_pass('identity-twice')\n"
        "@function_pass\n"
        "def ident(f, mod):\n"
        "    '''Return the function unchanged.'''\n"
        "    return f\n"
    )
    p = _write(tmp_path)
    assert main(["passes", "--plugin", str(plug)]) == 0
    assert "identity-twice" in capsys.readouterr().out
    assert main(["opt", str(p), "-p", "identity-twice", "--plugin", str(plug)]) == 0
    assert capsys.readouterr().out == tirx.dumps(tirx.load(str(p)))
    assert "identity-twice" in registered_passes()


def test_register_pass_rejects_bad_names_and_duplicates():
    with pytest.raises(ValueError, match="a word"):
        register_pass("a,b", lambda: None)
    with pytest.raises(ValueError, match="registered already"):
        register_pass("cse", lambda: None)


def test_passes_lists_options(capsys):
    assert main(["passes"]) == 0
    out = capsys.readouterr().out
    assert "verify{require_ssa=false raising=true}" in out and "convert-ssa" in out


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("tirx ")


#: a one-block kernel in tirx's printed form (the compile tests' input)
_KERNEL_64 = (
    "@T.function\ndef f(A: T.Tensor((64,), T.float32)):\n"
    '    with T.device_entry(1, 1, 1, 64, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
    '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):\n'
    '        A[T.cuda.thread_idx("x")] = T.float32(1)\n'
)


def test_compile_writes_output_file(tmp_path):
    pytest.importorskip("cuda.bindings.nvrtc")
    p = _write(tmp_path, text=_KERNEL_64)
    out = tmp_path / "k.cu"
    assert main(["compile", str(p), "-o", str(out)]) == 0
    assert "__global__" in out.read_text()
    ptx = tmp_path / "k.ptx"
    assert main(["compile", str(p), "--ptx", "-o", str(ptx), "--target", "cuda -arch=sm_90a"]) == 0
    assert ".target sm_90a" in ptx.read_text()
    cub = tmp_path / "k.cubin"
    assert main(["compile", str(p), "--cubin", "-o", str(cub), "--target", "cuda -arch=sm_90a"]) == 0
    assert cub.read_bytes()[:4] == b"\x7fELF"


def test_compile_sass_disassembles_the_cubin(tmp_path, capsys, monkeypatch):
    pytest.importorskip("cuda.bindings.nvrtc")
    from tirx.tools import cli

    p = _write(tmp_path, text=_KERNEL_64)
    args = ["compile", str(p), "--sass", "--target", "cuda -arch=sm_90a"]
    if cli.find_nvdisasm() is None:  # the [cuda] extra installs NVIDIA's nvdisasm wheel
        pytest.skip("no nvdisasm here")
    assert main(args) == 0
    sass = capsys.readouterr().out
    assert "STG.E" in sass and "EXIT" in sass  # the store and the return, as SASS
    monkeypatch.setattr(cli, "find_nvdisasm", lambda: None)
    assert main(args) == 1
    assert "--sass needs nvdisasm" in capsys.readouterr().err
