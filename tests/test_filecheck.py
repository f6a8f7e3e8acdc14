"""FileCheck-style pass tests (``tirx.testing.filecheck``, ``tirx filecheck``): the built-in
passes' tests in tests/filecheck/ pass; each directive means what LLVM FileCheck says; a
failure names the directive's file:line:col and the closest output line."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tirx.testing import filecheck as fc
from tirx.testing.filecheck import FileCheckError, check_file, match, parse_checks, parse_runs
from tirx.tools.cli import main, run_captured

HERE = Path(__file__).resolve().parent
TESTS = sorted((HERE / "filecheck").glob("*.tirx"))


def test_there_are_builtin_pass_tests():
    names = {p.stem for p in TESTS}
    assert {"simplify", "cse", "infer_pointer_types", "vectorize_threads", "print_passes"} <= names


@pytest.mark.parametrize("path", TESTS, ids=[p.name for p in TESTS])
def test_builtin_pass_filecheck_tests(path):
    runs = check_file(path, execute=run_captured)
    assert runs and all(r.argv[0] == "tirx" for r in runs)


OUT = """\
@T.function
def f(A: T.Tensor((8,), T.int32), n: T.int32):
    cse_v1: T.let[T.int32] = n * 4
    A[0] = cse_v1 + cse_v1

@T.function
def g(B: T.Tensor((8,), T.int32)):
    B[0] = 1
"""


def _fails(checks: str, *words: str) -> str:
    with pytest.raises(FileCheckError) as ei:
        match(OUT, checks, path="t.tirx")
    msg = str(ei.value)
    for w in words:
        assert w in msg, msg
    return msg


def test_check_matches_in_order_and_anywhere_in_a_line():
    match(OUT, "# CHECK: def f\n# CHECK: n * 4\n# CHECK: B[0]")
    _fails("# CHECK: B[0]\n# CHECK: def f", "t.tirx:2:10: error: CHECK: expected string not found",
           "it does match here, before the previous match")  # fmt: skip


def test_whitespace_runs_match_any_run_and_patterns_are_stripped():
    match(OUT, "# CHECK:    A[0]   =  cse_v1 +\tcse_v1   ")
    _fails("# CHECK: A[0]=cse_v1", "expected string not found")


def test_check_next_same_and_empty():
    match(OUT, "# CHECK: def f\n# CHECK-NEXT: cse_v1:\n# CHECK-SAME: n * 4\n# CHECK-NEXT: A[0]")
    match(OUT, "# CHECK: A[0]\n# CHECK-EMPTY:\n# CHECK-NEXT: @T.function")
    _fails("# CHECK: def f\n# CHECK-NEXT: A[0]", "t.tirx:2:15", "not on the line after the previous match",
           "found here")  # fmt: skip
    _fails("# CHECK: cse_v1:\n# CHECK-NEXT: n * 4", "on the same line as the previous match")
    _fails("# CHECK: n * 4\n# CHECK-SAME: A[0]", "not on the same line as the previous match")
    _fails("# CHECK: def f\n# CHECK-EMPTY:", "expected an empty line", "this line is not empty")


def test_check_not_between_matches_and_to_the_end():
    match(OUT, "# CHECK: def f\n# CHECK-NOT: B[0]\n# CHECK: A[0]")
    _fails("# CHECK: def f\n# CHECK-NOT: cse_v1\n# CHECK: A[0]", "t.tirx:2:14: error: CHECK-NOT: excluded string",
           "<output>:3: note: found here")  # fmt: skip
    _fails("# CHECK: def g\n# CHECK-NOT: = 1", "excluded string found")
    match(OUT, "# CHECK-NOT: def h")


def test_labels_cut_the_output_into_blocks():
    # a CHECK-NOT between two labels covers one function only
    match(OUT, "# CHECK-LABEL: def f(\n# CHECK-NOT: B[0]\n# CHECK-LABEL: def g(\n# CHECK: B[0]")
    # a CHECK after a label cannot match past the next label
    _fails("# CHECK-LABEL: def f(\n# CHECK: B[0]\n# CHECK-LABEL: def g(", "expected string not found")
    # CHECK-NEXT right after a label is next to the label's line
    match(OUT, "# CHECK-LABEL: def g(\n# CHECK-NEXT: B[0] = 1")
    _fails("# CHECK-LABEL: def h(", "CHECK-LABEL: expected string not found")


def test_regexes_and_variables():
    match(OUT, "# CHECK: A[{{[0-9]+}}] = [[V:cse_v[0-9]+]] + [[V]]")
    match(OUT, "# CHECK: [[V:cse_v[0-9]+]]: T.let\n# CHECK: A[0] = [[V]] + [[V]]")
    match(OUT, "# CHECK: {{^}}def g")
    _fails("# CHECK: {{^}}B[0]", "expected string not found")  # indented: not at a line start
    _fails("# CHECK: [[V:n]] * 4\n# CHECK: A[0] = [[V]]", "expected string not found")


def test_closest_output_line_is_named():
    msg = _fails("# CHECK: A[0] = cse_v1 - cse_v1", "<output>:4: note: closest output line",
                 "A[0] = cse_v1 + cse_v1", "<output>:1: note: scanning from here")  # fmt: skip
    assert "the output (<output>):" in msg and "  4|     A[0] = cse_v1 + cse_v1" in msg


@pytest.mark.parametrize(
    "checks, words",
    [
        ("# CHECK-NXT: x", "unknown directive 'CHECK-NXT:' (did you mean CHECK-NEXT?"),
        ("# CHECK-next: x", "unknown directive"),
        ("# CHECK:", "empty pattern; CHECK-EMPTY: matches an empty line"),
        ("# CHECK: a\n# CHECK-EMPTY: x", "takes no pattern"),
        ("# CHECK-NEXT: x", "no CHECK or CHECK-LABEL before it"),
        ("# CHECK: [[X]]", "variable [[X]] is used before"),
        ("# CHECK: {{[}}", "bad regular expression"),
        ("# CHECK: [[#N]]", "numeric and pseudo variables are not supported"),
        ("# CHECK-LABEL: [[X:a]]", "a label cannot define or use variables"),
        ("# CHECK-NOT: [[X:a]]", "cannot define a variable"),
    ],
)
def test_bad_directives_are_located_errors(checks, words):
    with pytest.raises(FileCheckError, match=r"^k\.tirx:\d+:\d+: error: ") as ei:
        parse_checks(checks, "k.tirx")
    assert words in str(ei.value)


def test_no_directives_is_an_error_and_prefixes_select():
    with pytest.raises(FileCheckError, match="no check directives"):
        match(OUT, "# nothing here")
    match(OUT, "# CHECK: nothing like this\n# MINE: def g", prefixes=["MINE"])
    with pytest.raises(ValueError, match="check prefix"):
        parse_checks("x", prefixes=["bad prefix"])


def test_run_lines(tmp_path):
    path = str(tmp_path / "t.tirx")
    runs = parse_runs(
        "# RUN: tirx opt %s -p simplify\n"
        "# RUN: not tirx opt %s \\\n"
        "# RUN:   -p nope 2>&1 | tirx filecheck %s --check-prefix=ERR\n"
        "# RUN: tirx opt %S/other.tirx -p cse | FileCheck %s --check-prefixes=A,B\n"
        "# 100%% sure\n",
        path,
    )
    assert [r.line for r in runs] == [1, 2, 4]
    assert runs[0].argv == ("tirx", "opt", path, "-p", "simplify") and not runs[0].expect_failure
    assert runs[1].argv == ("tirx", "opt", path, "-p", "nope") and runs[1].expect_failure
    assert runs[1].merge_stderr and runs[1].prefixes == ("ERR",)
    assert runs[2].argv[2] == str(tmp_path / "other.tirx") and runs[2].prefixes == ("A", "B")


@pytest.mark.parametrize(
    "line, words",
    [
        ("# RUN: rm -rf %s", "tirx commands only"),
        ("# RUN: tirx opt %s > out", "no shell here"),
        ("# RUN: tirx opt %s | grep x", "only '| tirx filecheck %s' may follow"),
        ("# RUN: tirx filecheck %s", "goes after a '|'"),
        ("# RUN: tirx opt %s | tirx filecheck %s --dump-input", "unsupported filecheck option"),
        ("# RUN: tirx opt %s \\", "no RUN: line follows"),
    ],
)
def test_bad_run_lines(line, words):
    with pytest.raises(FileCheckError, match=r"^t\.tirx:1: error: ") as ei:
        parse_runs(line + "\n", "t.tirx")
    assert words in str(ei.value)


KERNEL = """\
@T.function
def f(A: T.Tensor((8,), T.int32), n: T.int32):
    A[0] = n * 4 + 0
"""


def _test_file(tmp_path, checks: str, name: str = "k.tirx") -> Path:
    p = tmp_path / name
    p.write_text(checks + KERNEL)
    return p


def test_check_file_failures_name_the_run_line_and_exit_codes(tmp_path):
    p = _test_file(tmp_path, "# RUN: tirx opt %s -p simplify\n# CHECK: A[0] = n * 5\n")
    with pytest.raises(FileCheckError) as ei:
        check_file(p, execute=run_captured)
    msg = str(ei.value)
    assert msg.startswith(f"{p}:2:10: error: CHECK: expected string not found")
    assert "closest output line" in msg and "A[0] = n * 4" in msg
    assert f"(from {p}:1: RUN: tirx opt {p} -p simplify)" in msg
    p = _test_file(tmp_path, "# RUN: tirx opt %s -p nope\n# CHECK: x\n")
    with pytest.raises(FileCheckError, match="exited with 2, expected it to succeed") as ei:
        check_file(p, execute=run_captured)
    assert "unknown pass 'nope'" in str(ei.value)
    p = _test_file(tmp_path, "# RUN: not tirx opt %s -p simplify\n# CHECK: x\n")
    with pytest.raises(FileCheckError, match="exited with 0, expected it to fail"):
        check_file(p, execute=run_captured)
    p = _test_file(tmp_path, "# CHECK: x\n")
    with pytest.raises(FileCheckError, match="no RUN: lines"):
        check_file(p, execute=run_captured)


def test_checks_from_another_file_and_a_plugin(tmp_path):
    (tmp_path / "plug.py").write_text(
        "from tirx.passes import function_pass, register_pass\n"
        "@register_pass('filecheck-test-identity')\n"
        "@function_pass\n"
        "def ident(f):\n"
        "    return f\n"
    )
    (tmp_path / "checks.txt").write_text("OTHER: A[0] = {{.*}}n * 4{{.*}}0\n")
    p = _test_file(
        tmp_path,
        "# RUN: tirx opt %s --plugin %S/plug.py -p filecheck-test-identity | tirx filecheck %S/checks.txt "
        "--check-prefix OTHER\n",
    )
    check_file(p, execute=run_captured)


def test_subprocess_executor(tmp_path):
    p = _test_file(tmp_path, "# RUN: tirx opt %s -p simplify\n# CHECK: A[0] = n * 4\n# CHECK-NOT: + 0\n")
    assert len(check_file(p)) == 1  # the default executor: python -m tirx.tools.cli


def test_cli_filecheck(tmp_path, capsys, monkeypatch):
    good = _test_file(tmp_path, "# RUN: tirx opt %s -p simplify\n# CHECK: A[0] = n * 4\n", "good.tirx")
    bad = _test_file(tmp_path, "# RUN: tirx opt %s -p simplify\n# CHECK: A[0] = n * 5\n", "bad.tirx")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "plain.tirx").write_text(KERNEL)  # no RUN line: not a test
    assert main(["filecheck", str(good)]) == 0
    assert capsys.readouterr().out == f"{good}: ok\n"
    assert main(["filecheck", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert f"{good}: ok" in out and f"{bad}:2:10: error: CHECK:" in err and "1 of 2 test(s) failed" in err
    assert main(["filecheck", "-q", str(good)]) == 0 and capsys.readouterr().out == ""
    assert main(["filecheck", str(tmp_path / "sub")]) == 2
    assert "no .tirx file with a RUN: line" in capsys.readouterr().err
    assert main(["filecheck", str(tmp_path / "missing.tirx")]) == 2
    # --input: LLVM's `FileCheck CHECKS < INPUT`, no RUN lines run
    monkeypatch.setattr(sys, "stdin", io.StringIO("def f(A):\n    A[0] = n * 4\n"))
    assert main(["filecheck", str(good), "--input", "-"]) == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO("nothing\n"))
    assert main(["filecheck", str(good), "--input", "-"]) == 1
    assert f"{good}:2:10: error: CHECK: expected string not found" in capsys.readouterr().err
    assert main(["filecheck", str(good), "--input", "-", "--check-prefix", "bad prefix"]) == 2


def test_the_module_documents_each_directive():
    doc = fc.__doc__ or ""
    for d in ("CHECK:", "CHECK-NEXT:", "CHECK-SAME:", "CHECK-NOT:", "CHECK-LABEL:", "CHECK-EMPTY:", "RUN:"):
        assert d in doc
