"""Printing the IR around passes: `tirx opt` / `tirx compile` --print-after=PASS,
--print-before=PASS, --print-changed, --print-diff (PrintIR's diff); pipeline names are the
printed labels; an unknown name gets the closest names (did you mean)."""

from __future__ import annotations

import io

import pytest
from kernel_texts import ADD

import tirx
from tirx.passes import PassContext, PrintIR, Sequential, Simplify, build_pipeline, parse_pipeline
from tirx.passes.registry import check_pass_names, closest_passes, pass_label
from tirx.tools.cli import main

SRC = """\
@T.function
def f(A: T.Tensor((8,), T.int32), n: T.int32):
    x: T.let[T.int32] = n * 4 + 0
    y: T.let[T.int32] = n * 4 + 0
    A[0] = x + y
"""


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "k.tirx"
    p.write_text(SRC)
    return str(p)


def _opt(capsys, *args):
    rc = main(["opt", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_pipeline_passes_carry_their_pipeline_names():
    p = build_pipeline("convert-ssa,simplify,cse,verify{require_ssa=false}")
    assert [x.name for x in p.passes] == ["convert-ssa", "simplify", "cse", "verify"]
    assert [type(x).__name__ for x in p.passes] == [
        "ConvertSSA",
        "Simplify",
        "CommonSubexprElim",
        "VerifyWellFormed",
    ]
    # a built-in pass made in Python keeps its class name, and is labelled by its pipeline name
    assert Simplify().name == "Simplify" and pass_label(Simplify()) == "simplify"


def test_unknown_pass_names_get_the_closest_names():
    for typo, want in (("simplfy", "simplify"), ("Simplify", "simplify"), ("convert_ssa", "convert-ssa"),
                       ("CommonSubexprElim", "cse"), ("vectorise-threads", "vectorize-threads")):  # fmt: skip
        assert closest_passes(typo)[0] == want
        with pytest.raises(ValueError, match=f"unknown pass '{typo}' \\(did you mean '{want}'"):
            parse_pipeline(f"cse,{typo}")
    with pytest.raises(ValueError, match=r"unknown pass 'zzz' \(known: "):
        parse_pipeline("zzz")
    with pytest.raises(ValueError, match="did you mean 'cse'"):
        check_pass_names(["cse", "cce"])


def test_print_after_prints_only_those_passes(src, capsys):
    rc, out, err = _opt(capsys, src, "-p", "convert-ssa,simplify,cse", "--print-after=simplify")
    assert rc == 0 and err.count("# IR after") == 1 and "# IR after simplify\n" in err
    assert "x: T.let[T.int32] = n * 4\n" in err and "Simplify" not in err
    assert out == tirx.dumps(build_pipeline("convert-ssa,simplify,cse")(tirx.load(src)))
    # repeatable and comma lists
    rc, _, err = _opt(capsys, src, "-p", "convert-ssa,simplify,cse", "--print-after", "simplify,cse",
                      "--print-after=convert-ssa")  # fmt: skip
    assert [line for line in err.splitlines() if line.startswith("# IR")] == [
        "# IR after convert-ssa",
        "# IR after simplify",
        "# IR after cse",
    ]


def test_print_before(src, capsys):
    rc, _, err = _opt(capsys, src, "-p", "simplify,cse", "--print-before=cse", "--print-after=simplify")
    assert rc == 0
    assert [line for line in err.splitlines() if line.startswith("# IR")] == [
        "# IR after simplify",
        "# IR before cse",
    ]
    rc, _, err = _opt(capsys, src, "-p", "simplify,cse", "--print-before-all")
    assert [line for line in err.splitlines() if line.startswith("# IR")] == [
        "# IR before simplify",
        "# IR before cse",
    ]


def test_print_changed_skips_passes_that_changed_nothing(src, capsys):
    rc, _, err = _opt(capsys, src, "-p", "convert-ssa,simplify,simplify,cse", "--print-changed")
    assert rc == 0
    assert [line for line in err.splitlines() if line.startswith("# IR")] == [
        "# IR after simplify",
        "# IR after cse",
    ]
    rc, _, err = _opt(capsys, src, "-p", "simplify,cse", "--print-changed", "--print-after=cse")
    assert [line for line in err.splitlines() if line.startswith("# IR")] == ["# IR after cse"]


def test_print_diff_is_print_irs_diff(src, capsys):
    rc, _, err = _opt(capsys, src, "-p", "convert-ssa,simplify", "--print-diff")
    assert rc == 0
    buf = io.StringIO()
    with PassContext([PrintIR(stream=buf, label=pass_label)]):
        build_pipeline("convert-ssa,simplify")(tirx.load(src))
    assert err == buf.getvalue()
    assert err.startswith("# convert-ssa: unchanged\n--- before simplify\n+++ after simplify\n@@")
    assert "+    x: T.let[T.int32] = n * 4\n" in err
    # --print-changed leaves out the unchanged note; names restrict it
    rc, _, err = _opt(capsys, src, "-p", "convert-ssa,simplify", "--print-diff", "--print-changed")
    assert err.startswith("--- before simplify\n")
    rc, _, err = _opt(capsys, src, "-p", "convert-ssa,simplify", "--print-diff", "--print-after=convert-ssa")
    assert err == "# convert-ssa: unchanged\n"


def test_print_name_errors(src, capsys):
    rc, out, err = _opt(capsys, src, "-p", "simplify", "--print-after=simplfy")
    assert rc == 2 and out == ""
    assert "tirx opt: error: unknown pass in --print-after: 'simplfy' (did you mean 'simplify'?" in err
    rc, _, err = _opt(capsys, src, "-p", "simplify", "--print-before=Simplify")
    assert rc == 2 and "did you mean 'simplify'?" in err
    rc, _, err = _opt(capsys, src, "-p", "simplify", "--print-after=cse")
    assert rc == 0 and "warning: --print-after names cse, which the pipeline does not run" in err


def test_print_ir_api_options():
    f = tirx.loads(SRC)
    buf = io.StringIO()
    with PassContext([PrintIR(diff=False, stream=buf, before=(), after=["Simplify"])]):
        Sequential([Simplify(), Simplify()])(f)
    text = buf.getvalue()
    assert text.count("# IR after Simplify") == 2 and "# IR before" not in text
    buf = io.StringIO()
    with PassContext([PrintIR(diff=False, stream=buf, before=(), changed_only=True, label=pass_label)]):
        Sequential([Simplify(), Simplify()])(f)
    assert buf.getvalue().count("# IR after simplify") == 1  # the second one changed nothing


def test_compile_prints_the_passes_it_runs(tmp_path, capsys):
    pytest.importorskip("cuda.bindings.nvrtc")
    p = tmp_path / "add.tirx"
    p.write_text(ADD)
    rc = main(["compile", str(p), "--target", "cuda -arch=sm_90a", "--print-after=vectorize-threads"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert err.startswith("# IR after vectorize-threads\n") and "A_lanes" in err
    assert "__global__" in out
    rc = main(["compile", str(p), "--target", "cuda -arch=sm_90a", "--print-diff"])
    out, err = capsys.readouterr()
    assert rc == 0 and err.startswith("--- before vectorize-threads\n+++ after vectorize-threads\n")
    assert main(["compile", str(p), "--print-after=vectorize-thread"]) == 2
    assert "did you mean 'vectorize-threads'?" in capsys.readouterr().err
