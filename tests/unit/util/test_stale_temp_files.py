"""Temporary files never outlive their process: a SIGKILL of the ``summary`` /
``recovery`` stage at the rename left ``metrics/.summary.json.*.tmp`` for good; the next
atomic write of that file removes the temps of writers that are gone, never a live one's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from implicit_bench._util.files import write_json, write_table
from tests.helpers.paths import REPO_ROOT

SRC = str(REPO_ROOT / "src")
KILLED_AT_RENAME = """
import os, sys, time
from implicit_bench._util import files as io
def stuck(src, dst):
    print("renaming", flush=True)
    time.sleep(600)
io.os.replace = stuck
io.write_json(sys.argv[1], {"gap_pct": 1.0})
"""


def _killed_at_rename(target: Path) -> Path:
    """Run a writer of ``target`` and SIGKILL it between writing its temp and the rename."""
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_AT_RENAME, str(target)], stdout=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"renaming"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    (left,) = target.parent.glob(f".{target.name}.*.tmp")
    assert f".tmp-{proc.pid}-" in left.name
    return left


@pytest.mark.parametrize("name", ["summary.json", "recovery.json"])
def test_the_next_write_removes_the_temp_of_a_writer_killed_at_the_rename(tmp_path, name):
    target = tmp_path / "metrics" / name
    left = _killed_at_rename(target)
    assert not target.exists()
    write_json(target, {"gap_pct": 2.0})
    assert not left.exists() and not list(target.parent.glob(".*.tmp"))
    assert target.read_text(encoding="utf-8").strip().startswith("{")


def test_a_live_writers_temp_is_left_alone(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = tmp_path / f".summary.json.tmp-{sleeper.pid}-abcd1234.tmp"
        live.write_text("half")
        write_json(tmp_path / "summary.json", {})
        assert live.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
    write_json(tmp_path / "summary.json", {})  # now its writer is gone
    assert not live.exists()


def test_old_form_temps_go_once_older_than_an_hour_and_others_stay(tmp_path):
    old = tmp_path / ".summary.json.k2j4h5g6.tmp"
    fresh = tmp_path / ".summary.json.q9w8e7r6.tmp"
    other = tmp_path / ".recovery.json.k2j4h5g6.tmp"  # another file's temp
    for f in (old, fresh, other):
        f.write_text("half")
    hours_ago = time.time() - 2 * 3600
    for f in (old, other):
        os.utime(f, (hours_ago, hours_ago))
    write_json(tmp_path / "summary.json", {})
    assert not old.exists() and fresh.exists() and other.exists()


def test_table_writes_clean_their_leftovers_too(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = tmp_path / f".units.parquet.tmp-{dead.pid}-zz99yy88.tmp"
    left.write_bytes(b"PAR1")
    write_table(pd.DataFrame({"a": [1]}), tmp_path / "units.parquet")
    assert not left.exists() and (tmp_path / "units.parquet").exists()


def test_gitignore_ignores_temp_files():
    root = REPO_ROOT
    res = subprocess.run(
        ["git", "check-ignore", "-q", "metrics/.summary.json.tmp-1-abcd1234.tmp"],
        cwd=root,
        check=False,
    )
    assert res.returncode == 0
