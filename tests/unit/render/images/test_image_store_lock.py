"""One writer per image store, offsets from the
file, checked journal lines."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from PIL import Image

from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore, StoreLockedError
from tests.helpers.paths import REPO_ROOT
from tests.helpers.render_fixtures import units_frame


def _png(color: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buf, format="PNG")
    return buf.getvalue()


def _record(unit: str, seed: int = 42) -> ImageRecord:
    return ImageRecord(ImageKey("cfg", unit, "neutral", seed), "tiny", f"a photo of {unit}", "ok")


def test_a_second_writer_is_refused_while_the_first_holds_the_store(tmp_path):
    first = ImageStore(tmp_path / "s")
    first.put(_record("u1"), _png((1, 1, 1)))
    second = ImageStore(tmp_path / "s")
    with pytest.raises(StoreLockedError, match=f"pid {os.getpid()}"):
        second.put(_record("u2"), _png((2, 2, 2)))
    first.close()
    assert not (tmp_path / "s" / ".writer.lock").exists()  # nothing left in the DVC output
    second.put(_record("u2"), _png((2, 2, 2)))  # free again; the journal was re-read
    assert {k.unit_id for k in second.done_keys(verify=True)} == {"u1", "u2"}
    second.finalize()
    assert len(ImageStore(tmp_path / "s").index()) == 2


def test_offsets_come_from_the_shard_on_disk_not_tell(tmp_path):
    """Bytes that reach the shard behind the writer's back (a killed writer's torn tail)
    must not shift where the next image is recorded."""
    store = ImageStore(tmp_path / "s")
    store.put(_record("u1"), _png((1, 2, 3)))
    shard = next((tmp_path / "s" / "shards").glob("*.bin"))
    with open(shard, "ab") as fh:
        fh.write(b"torn tail of another writer")
    store.put(_record("u2"), _png((4, 5, 6)))
    store.close()
    again = ImageStore(tmp_path / "s")
    assert {k.unit_id for k in again.done_keys(verify=True)} == {"u1", "u2"}


@pytest.mark.parametrize(
    "line",
    [
        "[1, 2, 3]",
        '"text"',
        "null",
        '{"config": "cfg"}',
        '{"config": "cfg", "unit_id": "u9", "variant": "neutral", "seed": "x", '
        '"generator": "g", "prompt": "p", "status": "ok"}',
        '{"config": "cfg", "unit_id": "u9", "variant": "neutral", "seed": 1, '
        '"generator": "g", "prompt": "p", "status": "ok", "sha256": "ab", "location": '
        "[1, 2]}",
    ],
)
def test_journal_lines_that_are_not_entries_are_skipped_and_named(tmp_path, line):
    store = ImageStore(tmp_path / "s")
    store.put(_record("u1"), _png((1, 2, 3)))
    store.close()
    with open(tmp_path / "s" / "journal.jsonl", "a") as fh:
        fh.write(line + "\n")
    reopened = ImageStore(tmp_path / "s")
    assert {k.unit_id for k in reopened.done_keys()} == {"u1"}
    assert (
        len(reopened.journal_problems) == 1 and "journal.jsonl:2:" in reopened.journal_problems[0]
    )
    reopened.put(_record("u2"), _png((4, 5, 6)))  # writing after it still works
    reopened.close()
    assert {k.unit_id for k in ImageStore(tmp_path / "s").done_keys(verify=True)} == {"u1", "u2"}


def _workdir(tmp_path: Path) -> Path:
    units_frame().to_parquet(tmp_path / "units.parquet")
    params = {
        "generators": {"fake": {"backend": "slow_fake", "delay_s": 0.15, "batch_size": 1}},
        "render": {
            "seeds": [42, 1042, 2042],
            "variants": ["neutral", "stereotype", "anti_stereotype"],
            "executor": {"kind": "local", "progress": False},
        },
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    return tmp_path


def _start(workdir: Path, tag: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": f"{REPO_ROOT / 'src'}{os.pathsep}{REPO_ROOT}"}
    env.pop("IMPLICIT_BENCH_DEBUG", None)
    return subprocess.Popen(
        [
            sys.executable,
            str(REPO_ROOT / "tests" / "helpers" / "store_writers.py"),
            str(workdir),
            tag,
        ],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_two_render_processes_on_one_store(tmp_path):
    """Two `render` runs at once: every image readable, each item rendered once or the second
    run cleanly refused with a one-line message."""
    work = _workdir(tmp_path)
    first = _start(work, "a")
    lock = work / "images" / "fake" / ".writer.lock"
    deadline = time.monotonic() + 120
    while not lock.exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    second = _start(work, "b")
    results = [(p.wait(timeout=300), *p.communicate()) for p in (first, second)]
    codes = sorted(r[0] for r in results)
    assert codes == [0, 1], results
    refused = next(r for r in results if r[0] == 1)
    assert refused[2].strip().count("\n") == 0 and "being written by another process" in refused[2]
    assert "Traceback" not in refused[2]
    entries = [
        json.loads(line)
        for line in (work / "images" / "fake" / "journal.jsonl").read_text().splitlines()
    ]
    per_item = Counter((e["unit_id"], e["variant"], e["seed"]) for e in entries)
    assert len(per_item) == 4 * 3 * 3 and set(per_item.values()) == {1}  # each item rendered once
    store = ImageStore(work / "images" / "fake")
    assert len(store.done_keys(verify=True)) == 36
    for record in store.records():
        Image.open(io.BytesIO(store.read_bytes(record.sha256))).load()  # every image readable
    # a later run (the lock is free again) finds everything done and renders nothing
    third = _start(work, "c")
    assert third.wait(timeout=300) == 0, third.communicate()
    journal = (work / "images" / "fake" / "journal.jsonl").read_text().splitlines()
    assert len(journal) == len(entries)  # nothing rendered again
