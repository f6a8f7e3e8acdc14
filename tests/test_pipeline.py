"""The compile pipeline (tirx/pipeline.py, issue #30): its named stages, the layout-arith
side channel carried from ``lower-layouts`` to ``codegen``, observers, and ``tirx compile
--print-after/--print-before=STAGE``. CPU: the IR stages and codegen; NVRTC where importable."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_texts import ADD

import tirx
from tirx import pipeline
from tirx.codegen.cuda import emit, generate
from tirx.passes.lowering import prepare
from tirx.script import tirx as T
from tirx.tools.cli import main

LAY = T.TileLayout(T.S[(64, 64) : (64, 1)])


@T.function
def store_at(A: T.Tensor((64, 64), "int32", layout=LAY), i: T.int32, j: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    A[i, j] = 1


class Seen:
    def __init__(self) -> None:
        self.names: list[tuple[str, str]] = []

    def before(self, stage, c) -> None:
        self.names.append(("before", stage.name))

    def after(self, stage, c) -> None:
        self.names.append(("after", stage.name))


@pytest.fixture
def add_file(tmp_path):
    p = tmp_path / "add.tirx"
    p.write_text(ADD)
    return str(p)


def test_stage_names():
    assert pipeline.stage_names("cuda") == [
        "vectorize-threads",
        "sequence-effects",
        "lower-layouts",
        "launch-thread-entries",
        "codegen",
        "nvrtc",
        "load",
    ]
    assert pipeline.stage_names("interp") == ["lower-layouts", "launch-thread-entries", "interp"]


def test_layout_arith_is_carried_from_lower_layouts_to_codegen():
    ir, arith = prepare(store_at)
    assert arith  # lower-layouts returns the offsets' arithmetic with the IR
    carried = emit(ir, layout_arith=arith).text
    assert "A[i * 64 + j] = 1;" in carried  # addressing: never wrapped
    assert carried != emit(ir).text  # without the side channel codegen would wrap it
    assert generate(store_at).text == carried
    c = pipeline.lower_cuda(pipeline.Compilation(store_at, vectorize=False))
    assert c.source.text == carried and c.func is store_at  # the kernel keeps the IR before lowering


def test_cuda_stages_through_codegen_are_observed_in_order():
    f = tirx.loads(ADD)
    seen = Seen()
    with pipeline.observe(seen):
        c = pipeline.lower_cuda(pipeline.Compilation(f))
        again = pipeline.lower_cuda(pipeline.Compilation(f))  # remembered per object: no stage runs
    names = ["vectorize-threads", "sequence-effects", "lower-layouts", "launch-thread-entries", "codegen"]
    assert seen.names == [(w, n) for n in names for w in ("before", "after")]
    assert again.source is c.source and "A_lanes" in tirx.dumps(c.func)


def test_interp_stages():
    seen = Seen()
    A = np.full((64, 64), -1, np.int32)
    with pipeline.observe(seen):
        tirx.compile(store_at, target="interp")(A, 3, 5)
    assert [n for w, n in seen.names if w == "after"] == pipeline.stage_names("interp")
    assert A[3, 5] == 1 and (A == 1).sum() == 1
    B = np.full((64, 64), -1, np.int32)
    tirx.interp.compile(store_at)(B, 3, 5)  # the same stages, run without the pipeline's observers
    np.testing.assert_array_equal(A, B)
    with pytest.raises(TypeError, match="unknown option 'nope'"):
        tirx.compile(store_at, target="interp", nope=1)


def test_cli_prints_ir_stages_and_codegen(add_file, capsys):
    main(["compile", add_file, "--print-after=lower-layouts,codegen", "--print-before=launch-thread-entries"])
    err = capsys.readouterr().err  # NVRTC may be missing here: the stages before it still print
    assert err.startswith("# IR after lower-layouts\n") and "A_lanes" in err
    assert "# IR before launch-thread-entries\n" in err
    cuda = err.split("# CUDA after codegen\n", 1)[1]
    assert "__global__" in cuda
    rc = main(["compile", add_file, "--target", "interp", "--print-after=launch-thread-entries"])
    err = capsys.readouterr().err
    assert rc == 0 and err.startswith("# IR after launch-thread-entries\n")


def test_cli_stage_names_are_checked(add_file, capsys):
    assert main(["compile", add_file, "--print-before=codegn"]) == 2
    err = capsys.readouterr().err
    assert "unknown stage in --print-before: 'codegn'" in err and "did you mean 'codegen'?" in err
    assert main(["compile", add_file, "--print-after=simplify"]) == 2  # a pass compile never runs
    assert "known: vectorize-threads, sequence-effects, lower-layouts" in capsys.readouterr().err
    assert main(["compile", add_file, "--target", "interp", "--print-after=nvrtc"]) == 2
    assert "known: lower-layouts, launch-thread-entries, interp" in capsys.readouterr().err


def test_cli_prints_ptx_after_nvrtc(add_file, capsys):
    pytest.importorskip("cuda.bindings.nvrtc")
    rc = main(
        ["compile", add_file, "--target", "cuda -arch=sm_90a", "--print-after=nvrtc", "--print-before=nvrtc"]
    )
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert err.startswith("# CUDA before nvrtc\n") and "__global__" in err.split("# PTX after nvrtc\n")[0]
    assert ".version" in err.split("# PTX after nvrtc\n", 1)[1]
    assert "__global__" in out


def test_cuda_compile_runs_every_stage(tmp_path):
    pytest.importorskip("cuda.bindings.nvrtc")
    f = tirx.loads(ADD)
    seen = Seen()
    with pipeline.observe(seen):
        k = tirx.compile(f, target="cuda -arch=sm_90a")
        tirx.compile(f, target="cuda -arch=sm_90a")  # remembered: starts at nvrtc
    after = [n for w, n in seen.names if w == "after"]
    assert after == [*pipeline.stage_names("cuda"), "nvrtc", "load"]
    assert ".version" in k.ptx and "__global__" in k.source
