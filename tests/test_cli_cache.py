"""``tirx cache dir|info|clear [--ready]``: the disk cache's directory, its entries (compiled
binaries and ready records) and emptying it, never touching what is not an entry."""

from __future__ import annotations

import os

from tirx.runtime import cache as C
from tirx.tools.cli import main


def _fill(d) -> None:
    for i in range(3):  # compiled binaries
        C.put(f"{i:064x}", C.CacheEntry(f"src{i}", "ptx", b"\0" * 100, meta={"arch": "sm_90a"}))
    for i in range(3, 5):  # ready records
        C.put(f"{i:064x}", C.CacheEntry("", "", b"\1" * 50, meta={"ready": 1, "name": "k"}))
    (d / "notes.txt").write_text("mine")
    os.symlink(d / "notes.txt", d / f"{9:064x}.tirxbin")  # named like an entry, but a link


def test_info_and_clear(disk_cache, capsys):
    _fill(disk_cache)
    assert main(["cache", "dir"]) == 0 and capsys.readouterr().out.strip() == str(disk_cache)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "5 entries" in out and "(2 ready records, 3 compiled binaries)" in out and "2 other names" in out
    assert main(["cache", "clear", "--ready"]) == 0
    assert "removed 2 ready records" in capsys.readouterr().out
    C.clear_memory()
    assert C.get(f"{0:064x}") is not None and C.get(f"{3:064x}") is None
    assert main(["cache", "clear"]) == 0 and "removed 3 entries" in capsys.readouterr().out
    assert sorted(os.listdir(disk_cache)) == sorted(["notes.txt", f"{9:064x}.tirxbin"])  # left alone
    assert (disk_cache / "notes.txt").read_text() == "mine"


def test_an_untrusted_or_absent_cache(disk_cache, capsys, monkeypatch):
    assert main(["cache", "info"]) == 0 and "0 entries" in capsys.readouterr().out  # not made yet
    disk_cache.mkdir(mode=0o700)
    os.chmod(disk_cache, 0o777)
    assert main(["cache", "clear"]) == 1
    assert "not using the disk cache" in capsys.readouterr().err
    monkeypatch.setenv("TIRX_DISABLE_DISK_CACHE", "1")
    assert main(["cache", "info"]) == 0 and "off" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0 and "removed 0" in capsys.readouterr().out
    assert main(["cache", "nonsense"]) == 2
