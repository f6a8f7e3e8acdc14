"""Issue #32 leftovers: precise types of ``tirx.compile`` / ``tirx.loads`` / ``T.jit`` for type
checkers, the located error for a positional ``T.constexpr``, and the platform's cache directory."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tirx
from tirx.runtime import cache as C

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ typing
_TYPED = """\
from __future__ import annotations

from typing import Any

from typing_extensions import assert_type

import tirx
from tirx.interp.kernel import Kernel as InterpKernel
from tirx.interp.kernel import ModuleKernel
from tirx.runtime.autotune import Autotuner
from tirx.runtime.kernel import CompiledModule, HostFunction, Kernel
from tirx.script import tirx as T
from tirx.script.decorators import JitFunction


def check(m: tirx.Module, target: str) -> None:
    f = tirx.loads("")
    assert_type(f, "tirx.Function | tirx.Module")
    assert_type(tirx.load("k.tirx"), "tirx.Function | tirx.Module")
    assert isinstance(f, tirx.Function)
    assert_type(tirx.compile(f, "interp"), InterpKernel)
    assert_type(tirx.compile(f, target="interp"), InterpKernel)
    assert_type(tirx.compile(m, "interp"), ModuleKernel)
    assert_type(tirx.compile(f), "Kernel | HostFunction")
    assert_type(tirx.compile(f, "cuda -arch=sm_90a"), "Kernel | HostFunction")
    assert_type(tirx.compile(f, target), "Kernel | HostFunction")
    assert_type(tirx.compile(m, "cuda"), CompiledModule)


def body(A: Any, *, N: Any) -> None: ...


assert_type(T.jit(body), JitFunction)
assert_type(T.jit(cache_size=4)(body), JitFunction)
assert_type(T.autotune(T.jit(body), configs=[{"N": 1}]), Autotuner)
assert_type(T.autotune(configs=[{"N": 1}])(T.jit(body)), Autotuner)
tirx.compile(T.jit(body).specialize(N=1), "interp")(1, 2)
reveal_type(tirx.compile(tirx.loads(""), "interp"))  # the one report: the overloads resolve
"""


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_public_entry_points_have_precise_types(tmp_path):
    src = tmp_path / "typed_use.py"
    src.write_text(_TYPED)
    out = subprocess.run(
        [sys.executable, "-m", "mypy", f"--cache-dir={tmp_path / 'cache'}", "--follow-imports=silent", str(src)],
        capture_output=True, text=True, cwd=ROOT, timeout=900,
    ).stdout  # fmt: skip
    errors = [ln for ln in out.splitlines() if "error:" in ln]
    assert errors == [], out
    notes = [ln for ln in out.splitlines() if "Revealed type" in ln]
    assert len(notes) == 1 and "tirx.interp.kernel.Kernel" in notes[0], out


def test_the_type_only_imports_stay_out_of_import_tirx():
    code = "import sys, tirx; print(sorted(m for m in sys.modules if m.startswith('tirx.')))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    for mod in ("tirx.runtime", "tirx.interp", "tirx.target", "tirx.script"):
        assert f"'{mod}" not in out, out


# ------------------------------------------------------------------ positional constexpr
_POSITIONAL = """\
from __future__ import annotations

from tirx.script import tirx as T


@T.jit
def k(A: T.Tensor((4,), "float32"), N: T.constexpr):
    for i in range(4):
        A[i] = A[i] + 1.0
"""


def _load(tmp_path, text, name):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, path


def test_a_positional_constexpr_is_bound_by_name_or_by_position(tmp_path):
    """TIRx takes ``def k(A, N: T.constexpr)`` (probe round 9): ``.specialize(N=4)`` binds it by
    name, a call binds it by position or keyword; leaving it out names it."""
    import numpy as np

    mod, _path = _load(tmp_path, _POSITIONAL, "positional_constexpr")
    f = mod.k.specialize(N=4)
    assert [p.name for p in f.params] == ["A"]
    for call in (lambda a: mod.k(a, 4), lambda a: mod.k(a, N=4), lambda a: mod.k(A=a, N=4)):
        a = np.zeros(4, np.float32)
        call(a)
        assert (a == 1).all()
    with pytest.raises(TypeError, match=r"N"):
        mod.k.specialize()
    with pytest.raises(TypeError, match=r"^k\(\): too many positional arguments"):
        mod.k(np.zeros(4, np.float32), 4, 5)


def test_constexpr_outside_jit_still_asks_for_jit(tmp_path):
    text = _POSITIONAL.replace("@T.jit", "@T.function")
    with pytest.raises(
        tirx.DiagnosticError, match=r"T.constexpr parameters need @T.jit .*`\*, N: T.constexpr`"
    ):
        _load(tmp_path, text, "constexpr_outside_jit")


def test_keyword_only_constexpr_still_works(tmp_path):
    mod, _ = _load(
        tmp_path, _POSITIONAL.replace(", N: T.constexpr", ", *, N: T.constexpr"), "kwonly_constexpr"
    )
    assert mod.k.constexpr_params == ("N",)
    assert isinstance(mod.k.specialize(N=4), tirx.Function)


# ------------------------------------------------------------------ cache directory
@pytest.fixture
def bare_env(monkeypatch, tmp_path):
    for v in ("TIRX_CACHE_DIR", "XDG_CACHE_HOME", "TIRX_DISABLE_DISK_CACHE", "LOCALAPPDATA"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("USERPROFILE", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.mark.parametrize(
    "platform, parts",
    [
        ("linux", (".cache", "tirx")),
        ("darwin", ("Library", "Caches", "tirx")),
        ("freebsd13", (".cache", "tirx")),
    ],
)
def test_cache_dir_follows_the_platform(monkeypatch, bare_env, platform, parts):
    monkeypatch.setattr(sys, "platform", platform)
    assert C.cache_dir() == os.path.join(str(bare_env), *parts)


def test_cache_dir_on_windows(monkeypatch, bare_env, tmp_path):
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "Local"))
    assert C.cache_dir() == os.path.join(str(tmp_path / "Local"), "tirx", "Cache")
    monkeypatch.delenv("LOCALAPPDATA")  # unset: the usual place under the profile
    assert C.cache_dir() == os.path.join(str(bare_env), "AppData", "Local", "tirx", "Cache")


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_cache_dir_env_wins_everywhere(monkeypatch, bare_env, tmp_path, platform):
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert C.cache_dir() == os.path.join(str(tmp_path / "xdg"), "tirx")
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "mine"))
    assert C.cache_dir() == str(tmp_path / "mine")
    monkeypatch.setenv("TIRX_CACHE_DIR", "")
    assert C.cache_dir() is None
    monkeypatch.delenv("TIRX_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # set but empty: as if unset (XDG's rule)
    monkeypatch.setenv("TIRX_DISABLE_DISK_CACHE", "1")
    assert C.cache_dir() is None
