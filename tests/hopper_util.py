"""The shared preamble of the Hopper kernel tests (test_hopper*.py) and other NVRTC tests: the
target they compile for, ``needs_nvrtc``, and a fresh compile cache per test (a kernel is
compiled, never served from another test's disk cache). ``examples/`` is importable through pytest's ``pythonpath`` (pyproject.toml)."""

from __future__ import annotations

import pytest

ARCH = "cuda -arch=sm_90a"


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch, tmp_path):
    """Autouse in every module that imports it."""
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))


def _nvrtc() -> bool:
    try:
        import cuda.bindings.nvrtc  # noqa: F401
    except Exception:
        return False
    return True


#: NVRTC compiles here (CI has it; a GPU is not needed)
needs_nvrtc = pytest.mark.skipif(not _nvrtc(), reason="cuda-python / NVRTC not installed")


def compile_clean(f, max_registers: int | None = None):
    """Compile ``f`` for sm_90a afresh with ptxas's report and check it: a cubin, a clean log
    (no warning), no stack frame or spills, no local memory in the PTX, and at most
    ``max_registers`` registers per thread at entry. Returns the kernel."""
    import re

    import tirx

    k = tirx.compile(f, target=ARCH, cache=False, options=("--ptxas-options=-v",))
    assert ".target sm_90a" in k.ptx and len(k.cubin) > 0
    log = k.module.log
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in log, (
        f"NVRTC log {log!r} ({len(log)} chars), options {k.module.options}, cubin {len(k.cubin)} bytes"
    )
    assert "warning" not in log.lower(), log
    assert not re.search(r"\b(ld|st)\.local\b", k.ptx), "local memory used"
    if max_registers is not None:
        assert int(re.search(r"Used (\d+) registers", log).group(1)) <= max_registers, log
    return k


def assert_round_trips(f) -> None:
    """``f`` prints as text that loads back to equal IR and prints the same."""
    import tirx

    text = tirx.dumps(f)
    g = tirx.loads(text)
    assert tirx.structural_equal(g, f)
    assert tirx.dumps(g) == text


def fake_tma_driver(monkeypatch) -> list:
    """``cuTensorMapEncodeTiled`` replaced by a recorder (no GPU): each call's pointer, dims,
    byte strides and box, innermost first; a distinct descriptor per call."""
    import ctypes

    import tirx.runtime.tma as tma
    from tirx.runtime import driver

    calls = []

    def encode(addr, dt, rank, ptr, dims, strides, box, estr, il, sw, l2, oob):
        calls.append((ptr, list(dims)[:rank], list(strides)[: rank - 1], list(box)[:rank]))
        ctypes.memmove(addr, bytes([len(calls) % 256]) * 128, 128)
        return 0

    monkeypatch.setattr(driver, "probe", lambda: (True, ""))
    monkeypatch.setattr(tma, "_libcuda_encode", lambda: encode)
    return calls
