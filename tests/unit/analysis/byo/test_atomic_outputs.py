"""A command owns only the files it writes, and multi-file outputs are
replaced atomically (a temporary folder swapped in), so a kill leaves the old or the new one."""

from __future__ import annotations

import os

import pytest

from implicit_bench._util.dirswap import clean_stale, staged_dir, temp_dir_next_to
from implicit_bench.errors import InputError
from implicit_bench.report.params import ReportParams
from implicit_bench.report.stage import build_report
from tests.helpers.paths import REPO_ROOT
from tests.helpers.synthetic_project import build_synthetic_project


def test_report_refuses_a_folder_holding_other_files(tmp_path):
    build_synthetic_project(tmp_path, n_units=3, image_size=8)
    mine = {
        "data/raw/my_annotations.csv": b"a,b\n",
        "assets/logo.png": b"png",
        "thumbs/ab/mine.jpg": b"j",
    }
    for rel, data in mine.items():
        (tmp_path / "site" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "site" / rel).write_bytes(data)
    with pytest.raises(InputError, match="holds files it did not write"):
        build_report(ReportParams(out="site"), tmp_path)
    for rel, data in mine.items():
        assert (tmp_path / "site" / rel).read_bytes() == data


def test_report_rebuild_replaces_its_own_previous_report(tmp_path):
    build_synthetic_project(tmp_path, n_units=3, image_size=8)
    first = build_report(ReportParams(), tmp_path)
    (tmp_path / "report/data/chunk-0099.js").write_text("stale")  # a file the report once wrote
    second = build_report(ReportParams(), tmp_path)
    assert first["n_thumbnails"] == second["n_thumbnails"] > 0
    assert not (tmp_path / "report/data/chunk-0099.js").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report.")]  # no staging left


def test_staged_dir_keeps_the_old_output_on_error_and_swaps_on_success(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with pytest.raises(RuntimeError), staged_dir(target) as tmp:
        (tmp / "new.txt").write_text("new")
        raise RuntimeError("killed half way")
    assert sorted(p.name for p in target.iterdir()) == ["old.txt"]
    with staged_dir(target) as tmp:
        (tmp / "new.txt").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_stale_staging_of_a_dead_process_is_removed(tmp_path):
    target = tmp_path / "out"
    dead = tmp_path / ".out.tmp-999999999-abc"
    dead.mkdir()
    alive = temp_dir_next_to(target)
    clean_stale(target)
    assert not dead.exists() and alive.exists()
    assert str(os.getpid()) in alive.name


# ----- export-dataset: atomic, owns its files, malformed list cells named
def _dataset_frames():
    from tests.helpers.release_fixtures import export_frames

    return export_frames()


def test_export_dataset_killed_part_way_leaves_the_old_dataset(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from implicit_bench.release import export as module

    units, triplets = _dataset_frames()
    out = tmp_path / "ds"
    module.export_dataset(units, triplets, out, {})
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    calls = {"n": 0}
    real = pq.write_table

    def dies_on_the_second(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # a kill between the triplets and the units file
        return real(*args, **kwargs)

    monkeypatch.setattr(module.pq, "write_table", dies_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        module.export_dataset(units, triplets.iloc[:1], out, {})
    after = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # the old triplets, units and card, untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]  # no staging left


def test_export_dataset_refuses_a_folder_with_other_files(tmp_path):
    from implicit_bench.release.export import export_dataset

    units, triplets = _dataset_frames()
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match=r"holds files it did not write \(notes.txt\)"):
        export_dataset(units, triplets, tmp_path / "ds", {})
    assert (tmp_path / "ds" / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize(
    "cell, reason",
    [
        ("not json", "not a JSON list of strings"),
        ("5", "not a JSON list of strings"),
        ('{"a": 1}', "not a JSON list of strings"),
        ('[["nested"]]', "not a JSON list of strings"),
    ],
)
def test_export_dataset_malformed_list_cell_names_file_row_and_column(tmp_path, cell, reason):
    from implicit_bench.release.export import export_dataset

    units, triplets = _dataset_frames()
    triplets = triplets.copy()
    triplets.loc[1, "stereotype_tails"] = cell
    with pytest.raises(InputError) as info:
        export_dataset(
            units, triplets, tmp_path / "ds", {}, sources=("kg.parquet", "triplets.parquet")
        )
    assert str(info.value).startswith(
        "triplets.parquet, row 2, field 'stereotype_tails': " + reason
    )
    assert not (tmp_path / "ds").exists()


# ----- analyze: atomic, no stale files, the extensions' child dies with its parent
def _analyze_inputs(tmp_path):

    import pandas as pd

    from tests.helpers.analysis_fixtures import (
        BLIND_TYPES,
        blind_judgements,
        rubric_judgements,
        units,
    )

    units(BLIND_TYPES).to_csv(tmp_path / "units.csv", index=False)
    both = pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True)
    both.to_parquet(tmp_path / "both.parquet")
    blind_judgements().to_parquet(tmp_path / "blind.parquet")
    return (
        str(tmp_path / "units.csv"),
        str(tmp_path / "both.parquet"),
        str(tmp_path / "blind.parquet"),
    )


def test_analyze_rerun_leaves_no_file_of_the_previous_run(tmp_path, monkeypatch):
    from implicit_bench.analysis.byo.core import run_analyze

    monkeypatch.setenv("IMPLICIT_BENCH_ANALYZE_JOBS", "1")
    u, both, blind = _analyze_inputs(tmp_path)
    out = tmp_path / "out"
    run_analyze(u, [both], str(out), {"evaluate": {"bootstrap": {"n": 20}}})
    assert (out / "metrics" / "selection.json").exists()
    run_analyze(
        u, [blind], str(out), {"evaluate": {"bootstrap": {"n": 20}}}
    )  # no rubric: no selection
    assert not (out / "metrics" / "selection.json").exists()
    assert (out / "metrics" / "benchmark.json").exists()


def test_analyze_killed_part_way_leaves_the_previous_run(tmp_path, monkeypatch):
    from implicit_bench.analysis.byo import core

    u, both, blind = _analyze_inputs(tmp_path)
    out = tmp_path / "out"
    core.run_analyze(u, [both], str(out), {"evaluate": {"bootstrap": {"n": 20}}})
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(
        core, "write_evaluation", killed
    )  # after selection.json, before benchmark.json
    with pytest.raises(KeyboardInterrupt):
        core.run_analyze(u, [blind], str(out), {"evaluate": {"bootstrap": {"n": 20}}})
    after = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert (
        sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    )  # no staging left


def test_analyze_refuses_an_out_folder_with_other_files(tmp_path):
    from implicit_bench.analysis.byo.core import run_analyze

    u, both, _ = _analyze_inputs(tmp_path)
    with pytest.raises(InputError, match="holds files it did not write"):
        run_analyze(u, [both], str(tmp_path), {})  # the inputs themselves sit in that folder
    assert (tmp_path / "units.csv").exists()


CHILD_SCRIPT = """
import sys, time
from pathlib import Path
from implicit_bench.analysis.load import load_tables
from implicit_bench.analysis.byo.extensions import start_extensions
tables = load_tables({u!r}, [{j!r}], (), "reject", "report", "hash")
start_extensions(
    tables, Path({out!r}), {{}},
    {{"sleepy": "tests.helpers.analysis_fixtures:sleepy_extension"}},
)
print("started", flush=True)
time.sleep(60)
"""


def test_the_extensions_child_dies_with_its_parent(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the extensions run in-process on one CPU")
    u, both, _ = _analyze_inputs(tmp_path)
    repo = REPO_ROOT
    script = CHILD_SCRIPT.format(u=u, j=both, out=str(tmp_path / "out"))
    env = {**os.environ, "PYTHONPATH": f"{repo / 'src'}:{repo}"}
    env.pop("IMPLICIT_BENCH_ANALYZE_JOBS", None)
    parent = subprocess.Popen(
        [sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout.readline().strip() == "started"
        pid_file = tmp_path / "child.pid"
        for _ in range(200):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.05)
        child = int(pid_file.read_text())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the extensions' child outlived its killed parent")
    # the staging folder the killed run left is removed by the next run into the same --out
    from implicit_bench._util.dirswap import clean_stale

    assert [p for p in tmp_path.iterdir() if ".extensions-" in p.name]
    clean_stale(tmp_path / "out")
    assert not [p for p in tmp_path.iterdir() if ".extensions-" in p.name]
