"""Issue 27, data loss: a command owns only the files it writes, and multi-file outputs are
replaced atomically (a temporary folder swapped in), so a kill leaves the old or the new one."""

from __future__ import annotations

import os

import pytest

from implicit_bench.dirswap import clean_stale, staged_dir, temp_dir_next_to
from implicit_bench.errors import InputError
from implicit_bench.report.inputs import ReportParams
from implicit_bench.report.stage import build_report
from tests.synthetic_project import build_synthetic_project


def test_report_refuses_a_folder_holding_other_files(tmp_path):
    build_synthetic_project(tmp_path, n_units=3, image_size=8)
    mine = {"data/raw/my_annotations.csv": b"a,b\n", "assets/logo.png": b"png", "thumbs/ab/mine.jpg": b"j"}
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


# ----- export-dataset: atomic, owns its files, malformed list cells named ---------------------------
def _dataset_frames():
    from tests.test_export_dataset import _frames

    return _frames()


def test_export_dataset_killed_part_way_leaves_the_old_dataset(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from implicit_bench import export_dataset as module

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
    from implicit_bench.export_dataset import export_dataset

    units, triplets = _dataset_frames()
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match=r"holds files it did not write \(notes.txt\)"):
        export_dataset(units, triplets, tmp_path / "ds", {})
    assert (tmp_path / "ds" / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("cell, reason", [
    ("not json", "not a JSON list of strings"),
    ("5", "not a JSON list of strings"),
    ('{"a": 1}', "not a JSON list of strings"),
    ('[["nested"]]', "not a JSON list of strings"),
])
def test_export_dataset_malformed_list_cell_names_file_row_and_column(tmp_path, cell, reason):
    from implicit_bench.export_dataset import export_dataset

    units, triplets = _dataset_frames()
    triplets = triplets.copy()
    triplets.loc[1, "stereotype_tails"] = cell
    with pytest.raises(InputError) as info:
        export_dataset(units, triplets, tmp_path / "ds", {}, sources=("kg.parquet", "triplets.parquet"))
    assert str(info.value).startswith("triplets.parquet, row 2, field 'stereotype_tails': " + reason)
    assert not (tmp_path / "ds").exists()
