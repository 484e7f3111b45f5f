"""``run --report``: the outputs dvc.yaml declares for the benchmark phase's stages, and the
stage that writes a file (named by an empty-input error)."""

from __future__ import annotations

from implicit_bench.report.run_folder import stage_outputs
from implicit_bench.runtime.dvc import dvc_stages, producing_stage
from tests.helpers.paths import REPO_ROOT


def test_the_run_report_takes_the_benchmark_phase_outputs_only():
    outs = stage_outputs(REPO_ROOT / "dvc.yaml")
    assert "metrics/benchmark.json" in outs and "metrics/bench_render.json" in outs
    assert "tables" in outs and "plots/hedges_g_by_bias_type.csv" in outs
    assert not any("debias" in o or "negation" in o or o.startswith("data/") for o in outs)


def test_the_stage_that_writes_a_file_is_found_in_dvc_yaml(tmp_path, monkeypatch):
    dvc = REPO_ROOT / "dvc.yaml"
    assert producing_stage("data/judgements/bench.parquet", str(dvc)) == "bench_judge"
    assert producing_stage("metrics/lean.json", str(dvc)) == "evaluate"
    assert producing_stage("no/such/file", str(dvc)) is None
    assert dvc_stages(tmp_path / "absent.yaml") == {}
    assert {"bench_render", "bench_judge", "evaluate", "debias_render"} <= set(dvc_stages(dvc))


def test_the_run_folder_refuses_files_it_did_not_write(tmp_path):
    """runs/NAME is replaced whole (staged, then swapped in); a user's file there is refused."""
    import shutil

    import pytest

    from implicit_bench.errors import InputError
    from implicit_bench.report.run_folder import RUNS_DIR, write_run_report

    shutil.copy(REPO_ROOT / "dvc.yaml", tmp_path / "dvc.yaml")
    mine = tmp_path / RUNS_DIR / "pilot" / "notes.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("keep me")
    with pytest.raises(InputError, match="notes.txt"):
        write_run_report({}, tmp_path / "site", "pilot", root=tmp_path)
    assert mine.read_text() == "keep me"
