"""``implicit-bench report DIR`` reads nothing outside DIR (docs/errors.md, "A command reads
nothing outside the folders it was given"): another lab's ``params.yaml`` pointing at a file
outside, or a file of the folder that is a symbolic link out, is one line naming the path in
DIR, never the content of what it points at; nothing is written. The files named by
``--units`` / ``--judgements`` stay readable wherever they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from implicit_bench.cli.main import main
from tests.helpers.synthetic_tables import synthetic_units

PRIVATE = "PRIVATE-LAB-NOTE-7731"
EST = {"value": 0.5, "ci": [0.4, 0.6], "n": 3, "level": 0.95}
BENCHMARK = {"leaderboard": {"rows": [{"config": "g", "n_units": 3, "default_rate": EST}]}}


def _private(tmp_path: Path) -> Path:
    """A units table outside every folder given, holding a private string in a prompt."""
    units = synthetic_units(3)
    units["prompt_neutral"] = PRIVATE
    path = tmp_path / "private" / "units.csv"
    path.parent.mkdir()
    units.to_csv(path, index=False)
    return path


def _lab(tmp_path: Path, report: dict | None = None) -> Path:
    lab = tmp_path / "lab"
    (lab / "metrics").mkdir(parents=True)
    (lab / "metrics/benchmark.json").write_text(json.dumps(BENCHMARK))
    if report is not None:  # a repository root: its params.yaml's report section is used
        (lab / "dvc.yaml").write_text("stages: {}\n")
        (lab / "params.yaml").write_text(json.dumps({"report": report}))
    return lab


def _report(*args: str):
    return CliRunner().invoke(main, ["report", *args])


def _assert_refused(result, out: Path, named: str) -> None:
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "outside" in lines[0], result.output
    assert PRIVATE not in result.output
    site = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file()) if out.exists() else b""
    assert PRIVATE.encode() not in site


def test_params_yaml_paths_outside_the_lab_folder_are_refused(tmp_path):
    private = _private(tmp_path)
    for name, units in (("relative", "../private/units.csv"), ("absolute", str(private))):
        lab = _lab(tmp_path, {"units": units})
        out = tmp_path / f"site-{name}"
        _assert_refused(_report(str(lab), "--out", str(out)), out, "report.units")
        lab.rename(tmp_path / f"lab-{name}")


def test_a_units_table_linked_out_of_the_lab_folder_is_refused(tmp_path):
    private = _private(tmp_path)
    lab = _lab(tmp_path, {"units": "units.csv"})
    (lab / "units.csv").symlink_to(private)
    out = tmp_path / "site"
    _assert_refused(_report(str(lab), "--out", str(out)), out, "report.units")


@pytest.mark.parametrize("which", ["first", "other"])
def test_a_benchmark_json_linked_out_is_refused_and_never_echoed(tmp_path, which):
    """A lab's ``metrics/benchmark.json`` linking to a file outside: refused unread (its
    content was echoed in the error)."""
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"leaderboard": {"rows": [{"config": PRIVATE}]}}))
    mine = _lab(tmp_path / "mine")
    other = _lab(tmp_path / "other")
    linked = mine if which == "first" else other
    (linked / "metrics/benchmark.json").unlink()
    (linked / "metrics/benchmark.json").symlink_to(outside)
    out = tmp_path / "site"
    result = _report(str(mine), str(other), "--out", str(out))
    _assert_refused(result, out, "metrics/benchmark.json")


def test_another_metrics_file_linked_out_is_refused(tmp_path):
    outside = tmp_path / "notes.json"
    outside.write_text(json.dumps({"note": PRIVATE}))
    lab = _lab(tmp_path)
    (lab / "metrics/notes.json").symlink_to(outside)
    out = tmp_path / "site"
    _assert_refused(_report(str(lab), "--out", str(out)), out, "report.metrics_dir")


def test_units_named_on_the_command_line_are_read_wherever_they_are(tmp_path):
    private = _private(tmp_path)
    lab = _lab(tmp_path)
    out = tmp_path / "site"
    result = _report(str(lab), "--out", str(out), "--units", str(private))
    assert result.exit_code == 0, result.output
    assert "3 units in the browser" in result.output
