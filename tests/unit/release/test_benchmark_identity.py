"""A result names the benchmark it ran on, and nothing mixes two: the multi-run report refuses
a run of another benchmark however its folder is named, and a release edited after the units
were written from it is refused beside the run (docs/errors.md, "Records of multi-round runs
and benchmarks")."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from implicit_bench.cli.report import report_command
from implicit_bench.errors import ConfigError
from implicit_bench.release.benchmark import benchmark_units
from implicit_bench.report.runs import labels_of
from tests.helpers.release_fixtures import write_release
from tests.unit.release.test_beside_release import _analyze, _inputs


def _other_benchmark(tmp_path, judgements, images, name):
    """A lab folder ``name`` on another benchmark (one prompt differs)."""
    root = write_release(tmp_path / "other-release")
    prompts = root / "data/benchmark_prompts.csv"
    prompts.write_text(prompts.read_text().replace("a nurse at work", "a nurse at rest"))
    units = tmp_path / "other_units.csv"
    benchmark_units(root).units.to_csv(units, index=False)
    return _analyze(tmp_path, name, root, units, judgements, images)


def test_report_refuses_another_benchmark_in_a_folder_named_like_a_third(tmp_path):
    root, units, judgements, images = _inputs(tmp_path)
    base = _analyze(tmp_path, "base", root, units, judgements, images)
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    other = _other_benchmark(tmp_path, judgements, images, "x/out")  # another benchmark
    same = _analyze(tmp_path, "y/out", root, units, judgements, images)  # base's benchmark
    site = tmp_path / "site"
    # x/out first, y/out second: keyed by the folder's name, y/out hid x/out (rc 0)
    args = [str(base), str(other), str(same), "--out", str(site)]
    result = CliRunner().invoke(report_command, args)
    assert result.exit_code == 1, result.output
    (line,) = result.output.strip().splitlines()
    sha = benchmark_units(root).sha256
    assert "different benchmarks" in line and "x/out:" in line and "y/out:" in line
    assert f"base: {sha[:12]}" in line
    assert not site.exists()  # refused before anything is written
    # one benchmark in two folders named out: merged, each labelled with its parent
    (tmp_path / "z").mkdir()
    again = _analyze(tmp_path, "z/out", root, units, judgements, images)
    result = CliRunner().invoke(
        report_command, [str(base), str(same), str(again), "--out", str(site)]
    )
    assert result.exit_code == 0, result.output
    assert "report: base, y/out, z/out ->" in result.output


def test_default_labels_are_unique_and_given_labels_are_too(tmp_path):
    dirs = [tmp_path / "a" / "x" / "out", tmp_path / "b" / "x" / "out", tmp_path / "c"]
    assert labels_of(dirs, ()) == ["a/x/out", "b/x/out", "c"]
    assert labels_of(dirs, ("mine",)) == ["mine", "out", "c"]
    assert labels_of(dirs[:1], ("out",)) == ["out"]
    assert labels_of(dirs[:2], ("out",)) == ["out", "x/out"]  # never the given one again
    with pytest.raises(ConfigError, match="--label lab: given to two directories"):
        labels_of(dirs, ("lab", "lab"))


def test_a_release_edited_after_its_units_were_written_is_refused_beside_the_run(tmp_path):
    root, units, judgements, images = _inputs(tmp_path)  # the units carry the release's SHA-256
    before = benchmark_units(root).sha256
    prompts = root / "data/benchmark_prompts.csv"
    prompts.write_text(prompts.read_text().replace("a nurse at work", "a nurse at rest"))
    after = benchmark_units(root).sha256
    with pytest.raises(ConfigError) as caught:
        _analyze(tmp_path, "lab", root, units, judgements, images)
    message = str(caught.value)
    assert "\n" not in message and "changed since the run's units were written" in message
    assert before[:12] in message and after[:12] in message
    assert not (tmp_path / "lab").exists()  # refused before the metrics are written
    # the release as it was: beside the run as before
    prompts.write_text(prompts.read_text().replace("a nurse at rest", "a nurse at work"))
    out = _analyze(tmp_path, "lab", root, units, judgements, images)
    assert (out / "metrics" / "benchmark.json").exists()
