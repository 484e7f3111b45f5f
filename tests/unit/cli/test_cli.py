"""The command line's conventions: stage names, `stage --help`, grouped tools, hidden aliases."""

from __future__ import annotations

from click.testing import CliRunner

from implicit_bench.cli.main import main
from tests.helpers.paths import REPO_ROOT


def test_stage_help_lists_every_dvc_stage(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    result = CliRunner().invoke(main, ["stage", "--help"])
    assert result.exit_code == 0, result.output
    for name in ("sources", "kg", "triplets", "render", "judge", "select", "evaluate", "report"):
        assert f"  {name} " in result.output
    assert "select_units" not in result.output  # listed under its DVC stage name


def test_stage_select_runs_select_units_script(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    result = CliRunner().invoke(main, ["stage", "select", "--help"])
    assert result.exit_code == 0, result.output
    assert "selected_units.parquet" in result.output  # the script's own --help


def test_unknown_stage_names_the_known_ones(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    result = CliRunner().invoke(main, ["stage", "nope"])
    assert result.exit_code == 2
    assert "no stage 'nope'" in result.output and "select" in result.output


def test_llm_tools_are_grouped_with_a_hidden_old_name():
    top = CliRunner().invoke(main, ["--help"])
    assert "  llm " in top.output and "llm-export-replay" not in top.output
    grouped = CliRunner().invoke(main, ["llm", "export-replay", "--help"])
    assert grouped.exit_code == 0 and "--cache" in grouped.output
    old = CliRunner().invoke(main, ["llm-export-replay", "--help"])
    assert old.exit_code == 0 and "--cache" in old.output
