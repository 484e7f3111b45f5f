"""``run --sequential`` (implicit_bench.planning.sequential): rounds over one random order, stopping
on anytime-valid targets, a budget, resuming after a kill; the order of ``subset.order: random``.

The rounds run through a stand-in for ``dvc exp run`` that writes the tables the pipeline would
(the triplets of every unit; units and judgements of the first N of the order), so the stopping
logic is tested without rendering."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from implicit_bench.cli.main import main as cli_main
from implicit_bench.construction.triplets.subset import random_order, stratified_subset
from implicit_bench.errors import ConfigError
from implicit_bench.planning import sequential
from tests.helpers.sequential_fixtures import ROUNDS, Pipeline, params
from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(pipeline, target=None, pairs=(), budget=None, names=()):
    return sequential.run_sequential(
        params, ROUNDS, target, list(names), list(pairs), budget, "t", run_round=pipeline
    )


def test_random_order_is_a_nested_permutation_fixed_by_the_seed():
    units = synthetic_units(50).assign(check_ok=True)
    ids = units["unit_id"].tolist()
    order = random_order(ids, 42)
    assert sorted(order) == sorted(ids) and order != sorted(ids)
    assert random_order(list(reversed(ids)), 42) == order  # independent of row order
    assert random_order(ids, 43) != order
    small = stratified_subset(units, 10, 42, "random")["unit_id"].tolist()
    large = stratified_subset(units, 20, 42, "random")["unit_id"].tolist()
    assert set(small) == set(order[:10]) and set(small) <= set(large)


def test_a_loose_target_stops_before_the_last_round(workspace):
    pipeline = Pipeline(workspace)
    state = _run(pipeline, target=0.45, names=["default_rate"])
    assert state["stopped"]["why"] == "every target holds"
    assert pipeline.calls == ROUNDS[: state["stopped"]["round"]] and len(pipeline.calls) < 4
    saved = json.loads((workspace / "logs" / "sequential-t.json").read_text())
    assert saved["anytime_valid"] is True and saved["stopped"] == state["stopped"]
    last = saved["rounds"][-1]["targets"]["default_rate"]
    assert last["holds"] and (last["anytime"][1] - last["anytime"][0]) / 2 <= 0.45


def test_a_tight_target_runs_every_round(workspace):
    pipeline = Pipeline(workspace)
    state = _run(pipeline, target=0.001, names=["default_rate", "bias_score/gen"])
    assert pipeline.calls == ROUNDS
    assert state["stopped"] == {"round": 4, "why": "last round: every unit judged"}
    final = state["last_report"]["estimands"]["default_rate"]
    assert final["looks"][-1]["anytime"][0] == final["looks"][-1]["anytime"][1]  # collapsed


def test_a_killed_run_resumes_after_its_last_finished_round(workspace):
    with pytest.raises(KeyboardInterrupt):
        _run(Pipeline(workspace, fail_at=3), target=0.001, names=["default_rate"])
    saved = json.loads((workspace / "logs" / "sequential-t.json").read_text())
    assert [r["units"] for r in saved["rounds"]] == [30, 60] and "stopped" not in saved
    again = Pipeline(workspace)
    state = _run(again, target=0.001, names=["default_rate"])
    assert again.calls == [120, 240]  # rounds 1 and 2 are not run again
    assert [r["units"] for r in state["rounds"]] == ROUNDS
    done = Pipeline(workspace)
    _run(done, target=0.001, names=["default_rate"])
    assert done.calls == []  # stopped already: nothing to do


def test_resolving_a_pair_stops_once_the_difference_excludes_zero(workspace):
    pipeline = Pipeline(workspace, shift=2)
    state = _run(pipeline, pairs=[("gen", "gen2")])
    assert state["stopped"]["why"] == "every target holds" and len(pipeline.calls) < 4
    ((name, held),) = state["rounds"][-1]["targets"].items()
    assert name == "bias_score/gen-gen2" and held["anytime"][1] < 0


def test_the_budget_stops_before_a_round_that_would_pass_it(workspace, monkeypatch):
    monkeypatch.setattr(sequential, "next_round_gpu_hours", lambda params, units: 1.0)
    pipeline = Pipeline(workspace)
    state = _run(pipeline, target=0.001, names=["default_rate"], budget=2.5)
    assert pipeline.calls == [30, 60]
    assert state["stopped"]["round"] == 2 and state["stopped"]["why"].startswith("budget")


def test_rounds_and_pairs_are_checked():
    # every 1831 / 16 = 114.4 units, floored: 114, 228, 343, ...; the doubling rounds among them
    default = sequential.parse_rounds(None, 1831)
    assert default[:4] == [114, 228, 343, 457] and default[-2:] == [1716, 1831]
    assert len(default) == 16 and {228, 457, 915, 1831} <= set(default)
    assert sequential.parse_rounds(None, 5) == [1, 2, 3, 4, 5]
    assert sequential.parse_rounds("100,500,5000", 1831) == [100, 500, 1831]
    with pytest.raises(ConfigError, match="--rounds"):
        sequential.parse_rounds("500,100", 1831)
    with pytest.raises(ConfigError, match="--resolve"):
        sequential.parse_pairs(("gen",))


def test_run_sequential_options_go_together(tmp_path, monkeypatch):
    from tests.helpers.paths import enter_project_copy

    enter_project_copy(tmp_path, monkeypatch)
    args = ["run", "--generator", "sim_local", "--judge", "qwen3vl", "--no-preflight"]
    res = CliRunner().invoke(cli_main, [*args, "--target-width", "0.1"])
    assert res.exit_code == 2 and "go with --sequential" in res.output
    res = CliRunner().invoke(cli_main, [*args, "--sequential"])
    assert res.exit_code == 2 and "needs --target-width or --resolve" in res.output
    res = CliRunner().invoke(
        cli_main, [*args, "--sequential", "--target-width", "0.1", "--rounds", "20,40", "--dry-run"]
    )
    assert res.exit_code == 0, res.output
    assert "sequential rounds (units): 20, 40" in res.output
    overlay = (tmp_path / "profiles" / "run.yaml").read_text()
    assert "order: random" in overlay and "max_units: 20" in overlay


def test_rounds_that_end_before_every_unit_say_so(workspace):
    pipeline = Pipeline(workspace)
    state = sequential.run_sequential(
        params, [30, 60], 0.001, ["default_rate"], [], None, "t", run_round=pipeline
    )
    assert pipeline.calls == [30, 60] and state["stopped"] == {"round": 2, "why": "last round"}


def test_run_sequential_switches_params_yaml_to_the_random_order(tmp_path, monkeypatch):
    """Not a dry run: params.yaml gets the overlay (subset.order random, the first round's units;
    profiles/default.yaml records both keys) and the rounds start."""
    from tests.helpers.paths import enter_project_copy

    enter_project_copy(tmp_path, monkeypatch)
    seen = {}
    monkeypatch.setattr(
        sequential,
        "run_sequential",
        lambda params_of, rounds, *a, **kw: seen.update(
            rounds=rounds,
            subset=params_of()["subset"],
            targets=kw["run_round"].keywords["targets"],
        ),
    )
    args = ["run", "--generator", "sim_local", "--judge", "qwen3vl", "--no-preflight"]
    res = CliRunner().invoke(
        cli_main, [*args, "--sequential", "--target-width", "0.2", "--rounds", "12,24"]
    )
    assert res.exit_code == 0, res.output
    assert seen == {
        "rounds": [12, 24],
        "subset": {"max_units": 12, "seed": 42, "order": "random"},
        "targets": ["evaluate"],  # each round: evaluate and what it needs (run --stages)
    }
    res = CliRunner().invoke(cli_main, ["profile", "default"])
    assert res.exit_code == 0, res.output
    assert "order: stratified" in (tmp_path / "params.yaml").read_text()


def test_covariates_of_an_earlier_run_are_used_and_recorded(workspace):
    """An earlier run's tables (every unit, configuration ``ref``) as covariates: the rounds'
    Table 4 scores use them, the bets are tuned to the target, and the state says so."""
    pipeline = Pipeline(workspace)
    earlier = workspace / "earlier"
    earlier.mkdir()
    pipeline.units.to_csv(earlier / "units.csv", index=False)
    ref = synthetic_judgements(pipeline.units, judges=("judge-a",), config="ref", seed=3)
    ref.to_csv(earlier / "judgements.csv", index=False)
    state = sequential.run_sequential(
        params, ROUNDS, 0.5, [], [], None, "c", run_round=pipeline, covariates=str(earlier)
    )
    assert state["settings"]["covariates"] == str(earlier)
    report = state["last_report"]
    assert report["covariates"] == str(earlier)
    assert report["bets"] == {"rule": "target", "target_half_width": 0.5}
    assert report["estimands"]["bias_score/gen"]["covariates"] == ["ref"]
    assert "width_ratio" in report["estimands"]["bias_score/gen"]["looks"][-1]
    assert state["stopped"]["round"] <= len(ROUNDS)


def test_covariates_default_to_none_without_a_release(workspace):
    state = _run(Pipeline(workspace), target=0.5)
    assert state["settings"]["covariates"] == "none"
    assert state["last_report"]["covariates"] is None
