"""Params that were accepted and should not be, and one-line errors for the
human-evaluation options (each case failed on 381427e)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from implicit_bench.analysis.params import EvaluateParams, SelectParams
from implicit_bench.cli.main import main as cli_main
from implicit_bench.errors import ConfigError, InputError
from implicit_bench.human_eval.bundle import HumanEvalParams, export_bundle
from implicit_bench.params import BOOTSTRAP_N_MAX, SEEDS_MAX, BootstrapParams
from implicit_bench.render.params import RenderParams
from tests.helpers.synthetic_project import build_synthetic_project


@pytest.mark.parametrize("n", [True, 0, 1e6, BOOTSTRAP_N_MAX + 1, 100_000_000, "many"])
def test_bootstrap_n_must_be_a_bounded_integer(n):
    with pytest.raises(ValidationError):
        BootstrapParams(n=n)


def test_bootstrap_n_at_the_bound_is_accepted():
    assert BootstrapParams(n=BOOTSTRAP_N_MAX).n == BOOTSTRAP_N_MAX


@pytest.mark.parametrize("seeds", [[42, 42], [1, 2, 1], [True], [1.5], list(range(SEEDS_MAX + 1))])
def test_render_seeds_repeated_or_unbounded_are_refused(seeds):
    with pytest.raises(ValidationError):
        RenderParams.model_validate({"configs": {}, "seeds": seeds})


def test_distinct_render_seeds_are_accepted():
    assert RenderParams.model_validate({"configs": {}, "seeds": [1, 2]}).seeds == [1, 2]


def test_repeated_seed_message_names_the_value():
    with pytest.raises(ValidationError, match=r"repeated value\(s\) \[42\]"):
        EvaluateParams(seeds=[42, 42])


@pytest.mark.parametrize(
    "field, value",
    [
        ("recoverability_both_max", float("nan")),
        ("recoverability_both_max", 1.5),
        ("recoverability_neither_min", float("inf")),
        ("diagnostic_types", ["not-a-type"]),
        ("n_seeds", 1e6),
        ("n_seeds", SEEDS_MAX + 1),
        ("n_seeds", True),
        ("n_seeds", 0),
    ],
)
def test_evaluate_params_refused(field, value):
    with pytest.raises(ValidationError, match=field):
        EvaluateParams(**{field: value})


def test_diagnostic_types_are_normalised():
    assert EvaluateParams(diagnostic_types=["Race_color"]).diagnostic_types == ["race-color"]


def test_select_min_seeds_bounded():
    with pytest.raises(ValidationError):
        SelectParams(min_seeds=True)


def test_generator_batch_size_zero_is_refused():
    from implicit_bench.backends.generators.sim import SimGeneratorParams

    with pytest.raises(ValidationError, match="batch_size"):
        SimGeneratorParams(model="sim:x", batch_size=0, world_fingerprint="f")


def test_evaluate_seed_absent_from_the_judgements_is_an_error(tmp_path, monkeypatch):

    import pandas as pd

    from implicit_bench.analysis.byo.core import run_analyze
    from tests.helpers.analysis_fixtures import BLIND_TYPES, blind_judgements, units

    monkeypatch.setenv("IMPLICIT_BENCH_ANALYZE_JOBS", "1")
    units(BLIND_TYPES).to_csv(tmp_path / "units.csv", index=False)
    j = blind_judgements()
    j.to_parquet(tmp_path / "j.parquet")
    present = sorted(pd.unique(j["seed"]))
    with pytest.raises(ConfigError, match=r"evaluate.seeds: seed\(s\) \[7\] not in the judgements"):
        run_analyze(
            str(tmp_path / "units.csv"),
            [str(tmp_path / "j.parquet")],
            str(tmp_path / "out"),
            {"evaluate": {"seeds": [int(present[0]), 7], "bootstrap": {"n": 10}}},
        )


# ----- human evaluation ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("he27")
    build_synthetic_project(root, n_units=12, image_size=16, debias_configs=(), with_metrics=False)
    return root


def _params(root, **kw):
    return HumanEvalParams(
        units=str(root / "data/interim/units.parquet"),
        image_roots=[str(root / "data/images")],
        selected_units=str(root / "data/processed/selected_units.parquet"),
        judgements=[str(root / "data/judgements/*.parquet")],
        **kw,
    )


def test_stratify_by_an_unknown_column_names_the_file_and_field(project, tmp_path):
    with pytest.raises(
        InputError, match=r"units.parquet, field 'no_such_column': human_eval.stratify_by"
    ):
        export_bundle(_params(project, stratify_by="no_such_column", sample_size=4), tmp_path / "b")


def test_min_per_stratum_above_the_sample_is_refused(project, tmp_path):
    with pytest.raises(ValidationError, match="min_per_stratum 1000000000 exceeds sample_size 100"):
        _params(project, min_per_stratum=10**9)
    with pytest.raises(
        ConfigError, match="min_per_stratum 3 x .* strata .* more than sample_size 4"
    ):
        export_bundle(_params(project, min_per_stratum=3, sample_size=4), tmp_path / "b")


@pytest.mark.parametrize("value", ["nan", "5", "-2", "inf"])
def test_import_threshold_outside_minus_one_to_one_is_refused(tmp_path, value):
    (tmp_path / "a.csv").write_text("x\n")
    (tmp_path / "m.json").write_text("{}")
    res = CliRunner().invoke(
        cli_main,
        [
            "human-eval",
            "import",
            "--params",
            str(tmp_path / "none.yaml"),
            "--manifest",
            str(tmp_path / "m.json"),
            "--threshold",
            value,
            str(tmp_path / "a.csv"),
        ],
    )
    assert res.exit_code != 0
    res = CliRunner().invoke(
        cli_main,
        [
            "human-eval",
            "import",
            "--manifest",
            str(tmp_path / "m.json"),
            "--threshold",
            value,
            str(tmp_path / "a.csv"),
        ],
    )
    assert res.exit_code == 1 and "screen_threshold" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "metrics").exists()


@pytest.mark.parametrize(
    "command", [["export", "--out", "b"], ["import", "--manifest", "m.json", "a.csv"]]
)
def test_human_eval_params_file_that_does_not_exist_is_an_error(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.csv").write_text("x\n")
    (tmp_path / "m.json").write_text("{}")
    res = CliRunner().invoke(
        cli_main, ["human-eval", command[0], "--params", "/no/such.yaml", *command[1:]]
    )
    assert res.exit_code == 2 and "/no/such.yaml: no such file" in res.output
    assert not (tmp_path / "b").exists()
