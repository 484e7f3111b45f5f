"""The atomic swap of ``_util.dirswap``: ``renameat2(RENAME_EXCHANGE)`` found in the C library
(looked up once per process) swaps two folders in one call."""

from __future__ import annotations

import sys

import pytest

from implicit_bench._util import dirswap


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_renameat2_is_found_once_and_swaps_two_folders(tmp_path):
    assert dirswap._renameat2() is not None and dirswap._renameat2() is dirswap._renameat2()
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "new.txt").write_text("new")
    (b / "old.txt").write_text("old")
    assert dirswap._exchange(a, b) is True
    assert [p.name for p in b.iterdir()] == ["new.txt"]
    assert [p.name for p in a.iterdir()] == ["old.txt"]


def test_swap_in_replaces_the_target(tmp_path):
    target, new = tmp_path / "out", tmp_path / "staged"
    target.mkdir()
    new.mkdir()
    (target / "old.txt").write_text("old")
    (new / "new.txt").write_text("new")
    dirswap.swap_in(new, target)
    assert [p.name for p in target.iterdir()] == ["new.txt"] and not new.exists()
