"""A design to a target width (analysis.design, plan --target-width): allocation, half-width and
variance components worked out by hand, the smallest design, and the plan command."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from click.testing import CliRunner

from implicit_bench.analysis.design import Components, allocation, components, design, half_width
from implicit_bench.cli.main import main as cli_main
from implicit_bench.errors import ConfigError
from tests.helpers.analysis_fixtures import BLIND_TYPES, blind_judgements, rubric_judgements, units

Z95 = 1.959963984540054


def test_proportional_allocation_by_hand():
    assert allocation(10, {"a": 60, "b": 40}) == {"a": 6, "b": 4}
    assert allocation(10, {"a": 99, "b": 1}) == {"a": 10, "b": 1}  # at least 2, at most N_h


def test_half_width_by_hand():
    """One stratum, between-unit variance 1, no seed noise, 25 units: var = 1 / 25 = 0.04;
    seed noise 3 over 3 seeds adds 1 (var 0.08); a second stratum of the same size whose mean is
    2 higher adds (1^2 + 1^2) / 2 = 1 between bias types."""
    comp = Components({"g": 1.0}, {"g": 0.0}, {"g": 0.0}, ("neutral",))
    assert half_width(comp, 25, {"g": 100}, 1, Z95) == pytest.approx(Z95 * 0.2)
    comp = Components({"g": 1.0}, {"g": 3.0}, {"g": 0.0}, ("neutral",))
    assert half_width(comp, 25, {"g": 100}, 3, Z95) == pytest.approx(Z95 * math.sqrt(0.08))
    two = Components({"g": 1.0, "h": 1.0}, {"g": 0.0, "h": 0.0}, {"g": 0.0, "h": 2.0}, ())
    assert half_width(two, 25, {"g": 50, "h": 50}, 1, Z95) == pytest.approx(Z95 * math.sqrt(0.08))


def test_components_by_hand():
    """Unit 1 images 0, 1 (mean 0.5, variance 0.5); unit 2 images 1, 1 (mean 1, variance 0):
    within = 0.25 (pooled, 1 df each); means' variance 0.125 - within / 2 = 0: between 0."""
    values = pd.DataFrame(
        {"unit_id": ["u1", "u1", "u2", "u2"], "seed": [1, 2, 1, 2], "value": [0.0, 1.0, 1.0, 1.0]}
    )
    comp = components(values, pd.Series({"u1": "g", "u2": "g"}), "bias_score/x")
    assert comp.within == {"g": 0.25} and comp.between == {"g": 0.0} and comp.means == {"g": 0.75}
    assert comp.variants == ("neutral",)


def test_design_is_the_smallest_reaching_the_target():
    comp = Components({"g": 1.0}, {"g": 0.0}, {"g": 0.0}, ("neutral",))
    target = Z95 * 0.2 + 1e-12  # reached at exactly 25 units (see above)
    best = design({"x": comp}, {"g": 100}, target, max_seeds=3)
    assert (best.units, best.seeds, best.images_per_generator) == (25, 1, 25)
    assert best.full_images_per_generator == 300  # 100 units x 3 seeds x the neutral image
    assert [c["units"] for c in best.candidates] == [25, 25, 25]  # no seed noise: seeds idle
    with pytest.raises(ConfigError, match="not reached"):
        design({"x": Components({"g": 1.0}, {"g": 9.0}, {"g": 0.0}, ())}, {"g": 3}, 0.01, 3)


def _source(tmp_path):
    folder = tmp_path / "release"
    folder.mkdir()
    units(BLIND_TYPES).to_csv(folder / "units.csv", index=False)
    pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True).to_csv(
        folder / "judgements_x.csv", index=False
    )
    return folder


def test_plan_prints_the_design_and_its_share_of_the_full_plan(tmp_path, monkeypatch):
    from tests.helpers.paths import enter_project_copy

    enter_project_copy(tmp_path, monkeypatch)
    source = _source(tmp_path)
    res = CliRunner().invoke(
        cli_main, ["plan", "--target-width", "0.5", "--variances-from", str(source), "--json"]
    )
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)["design"]
    assert set(d["estimands"]) == {
        "default_rate", "success_stereotype", "success_anti", "gap", "bias_score"
    }  # fmt: skip
    assert all(e["half_width"] <= 0.5 for e in d["estimands"].values())
    assert d["units"] == sum(d["units_per_bias_type"].values())
    assert d["cost"]["design"]["model_calls"] <= d["cost"]["full"]["model_calls"]
    text = CliRunner().invoke(
        cli_main, ["plan", "--target-width", "0.5", "--variances-from", str(source)]
    )
    assert "design to half-width 0.5" in text.output and "seed(s):" in text.output


def test_plan_target_width_errors_are_one_line(tmp_path, monkeypatch):
    from tests.helpers.paths import enter_project_copy

    enter_project_copy(tmp_path, monkeypatch)
    res = CliRunner().invoke(cli_main, ["plan", "--estimand", "gap"])
    assert res.exit_code == 2 and "go with --target-width" in res.output
    res = CliRunner().invoke(cli_main, ["plan", "--target-width", "0.1"])
    assert res.exit_code == 1 and "no pilot judgements in this workspace" in res.output
    source = _source(tmp_path)
    res = CliRunner().invoke(
        cli_main,
        ["plan", "--target-width", "0.1", "--variances-from", str(source), "--estimand", "x"],
    )
    assert res.exit_code == 1 and "--estimand x: one of" in res.output
    assert "Traceback" not in res.output


def test_sequential_sizes_by_hand():
    """Configurations a and b score the four units 0, 1, 2, 3 alike: variance 1.25, R² 1.
    Target 0.5 at level 0.95 on 100 units: fixed-n n0 = 1.96^2 1.25 / 0.25 = 19.21 -> 19.21 /
    1.1921 = 16.1 -> 17 units; anytime n0 = 2 log(40) 1.25 / 0.25 = 36.89 -> 36.89 / 1.3689 =
    26.9 -> 27; with the other configuration as covariate the residual variance is 0 -> 0."""
    import pandas as pd

    from implicit_bench.planning.target_width import sequential_sizes

    rows = [
        {
            "unit_id": f"u{i}",
            "variant": "neutral",
            "task": "rubric",
            "config": c,
            "judge": "j",
            "valid": True,
            "score": float(i),
        }
        for c in ("a", "b")
        for i in range(4)
    ]
    out = sequential_sizes(pd.DataFrame(rows), 0.5, 0.95, 100)["bias_score"]
    a = out["as_new_model"]["a"]
    assert a["r2"] == 1.0 and a["covariates"] == ["b"]
    assert (a["units_fixed_n"], a["units_anytime"], a["units_anytime_with_covariates"]) == (
        17,
        27,
        0,
    )
