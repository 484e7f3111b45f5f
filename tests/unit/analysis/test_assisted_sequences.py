"""Covariate-assisted anytime-valid sequences (analysis.assisted): hand-worked small cases
(the whole population collapses to its mean; one draw gives the logical bounds), a perfect
covariate collapses the interval early, a useless one costs almost nothing, and coverage at
every look over random orders with covariates of every strength, including none and
adversarial ones."""

from __future__ import annotations

import numpy as np
import pytest

from implicit_bench.analysis.anytime import confidence_sequence
from implicit_bench.analysis.assisted import (
    assisted_sequence,
    bets,
    design_matrix,
    refit_points,
)
from implicit_bench.errors import ConfigError

ALPHA = 0.05


def _orders(rng: np.random.Generator, n: int, b: int) -> np.ndarray:
    return np.argsort(rng.random((b, n)), axis=1)


def test_design_matrix_standardises_and_flags_missing_values():
    cov = np.array([[1.0, 5.0], [3.0, np.nan], [5.0, 5.0], [7.0, np.nan]])
    x = design_matrix(cov, 4)
    # intercept, the first column standardised (mean 4, SD sqrt(5)), the second constant where
    # present (dropped) and its missing indicator (0, 1, 0, 1 -> -1, 1, -1, 1)
    assert x.shape == (4, 3)
    assert np.allclose(x[:, 0], 1.0)
    assert np.allclose(x[:, 1], (np.array([1, 3, 5, 7]) - 4) / np.sqrt(5))
    assert np.allclose(x[:, 2], [-1, 1, -1, 1])
    assert design_matrix(None, 3).shape == (3, 1)


def test_refit_points_and_bets_by_hand():
    assert refit_points(40) == [10, 15, 20, 25, 30, 35]
    s2 = np.array([0.25, 0.25, 0.1])
    # plug-in: sqrt(2 log(40) / (s2 i log(i + 1)))
    by_hand = [np.sqrt(2 * np.log(40) / (s2[i] * (i + 1) * np.log(i + 2))) for i in range(3)]
    assert np.allclose(bets(s2, 10, ALPHA, "plugin", None), by_hand)
    # target 0.05: 0.05 * N / (N - i + 1) / s2 with N = 10
    assert np.allclose(
        bets(s2, 10, ALPHA, "target", 0.05), [0.2, 0.05 * 10 / 9 / 0.25, 0.05 * 10 / 8 / 0.1]
    )
    with pytest.raises(ValueError, match="half-width"):
        bets(s2, 10, ALPHA, "target", None)


def test_one_draw_gives_the_logical_bounds_by_hand():
    """N = 4, one draw of 1: no fit yet, bets at most 3/4 / (1 + 0) on a [0, 1] residual:
    K+ <= 1.75, far below 2 / alpha = 40, so only the unseen units bound the mean: [1/4, 1]."""
    design = design_matrix(np.array([0.0, 1.0, 2.0, 3.0]), 4)
    run = assisted_sequence(np.array([1.0]), np.array([2]), design, [1], ALPHA)
    assert (run.lo[0], run.hi[0]) == (0.25, 1.0)


def test_the_whole_population_collapses_to_its_mean():
    rng = np.random.default_rng(3)
    pop = rng.random(60)
    cov = pop + rng.normal(0, 0.1, 60)
    order = rng.permutation(60)
    run = assisted_sequence(pop[order], order, design_matrix(cov, 60), [20, 60], ALPHA)
    assert run.lo[-1] == pytest.approx(pop.mean(), abs=1e-12)
    assert run.hi[-1] == pytest.approx(pop.mean(), abs=1e-12)
    assert run.estimate[-1] == pytest.approx(pop.mean(), abs=1e-12)
    assert run.fixed_half[-1] == 0.0  # the finite population correction is 0 at n = N
    assert run.lo[0] <= pop.mean() <= run.hi[0]


def _widths(pop: np.ndarray, cov: np.ndarray | None, looks: list[int], b: int = 40, seed: int = 1):
    rng = np.random.default_rng(seed)
    n = len(pop)
    orders = _orders(rng, n, b)
    run = assisted_sequence(pop[orders], orders, design_matrix(cov, n), looks, ALPHA)
    inside = (run.lo <= pop.mean() + 1e-12) & (pop.mean() <= run.hi + 1e-12)
    return np.median(run.hi - run.lo, axis=0), inside.all(axis=1).mean()


def test_a_perfect_covariate_collapses_the_interval_early():
    """Values 0 or 1 (SD 1/2) predicted exactly: the residuals are 0, so the interval shrinks
    like log(2 / alpha) / (bet x t) instead of SD / sqrt(t): at 400 of 2,000 units it is under
    a quarter of the plain sequence's width, and narrower than the plain one's at 2,000."""
    rng = np.random.default_rng(0)
    pop = (rng.random(2000) < 0.5).astype(float)
    looks = [100, 400, 1000]
    plain, _ = _widths(pop, None, looks)
    perfect, cover = _widths(pop, pop, looks)
    assert cover == 1.0
    assert perfect[1] < plain[1] / 4
    assert perfect[1] < 0.05
    assert perfect[1] < plain[2]  # 400 units with the covariate beat 1,000 without


def test_a_useless_covariate_gives_the_same_width_within_a_few_percent():
    rng = np.random.default_rng(5)
    pop = np.clip(rng.normal(0.6, 0.2, 1500), 0, 1)
    noise = rng.normal(size=(1500, 3))
    looks = [200, 400, 800]
    plain, _ = _widths(pop, None, looks)
    useless, cover = _widths(pop, noise, looks)
    assert cover >= 0.95
    assert np.all(useless <= plain * 1.05)
    assert np.all(useless >= plain * 0.95)


def test_without_covariates_it_is_no_wider_than_the_plain_sequence_of_before():
    """No covariate: a constant prediction, i.e. the plain without-replacement sequence, with
    the variance refitted at the refit points; about as wide as analysis.anytime's."""
    rng = np.random.default_rng(2)
    pop = np.clip(rng.normal(0.6, 0.2, 1500), 0, 1)
    orders = _orders(rng, 1500, 40)
    looks = [200, 400, 800]
    lo, hi = confidence_sequence(pop[orders], 1500, looks, ALPHA)
    new, _ = _widths(pop, None, looks)
    assert np.all(new <= np.median(hi - lo, axis=0) * 1.05)


@pytest.mark.parametrize(
    "case",
    ["none", "useless", "moderate", "strong", "perfect", "outliers", "sign-flip", "few-units"],
)
@pytest.mark.parametrize("rule", ["plugin", "target"])
def test_cover_the_population_mean_at_every_look_in_95_percent_of_orders(case, rule):
    rng = np.random.default_rng(11)
    n = 600
    latent = rng.normal(size=n)
    pop = np.clip(0.6 + 0.2 * latent + rng.normal(0, 0.05, n), 0, 1)
    noise = rng.normal(size=n)
    cov = {
        "none": None,
        "useless": noise,
        "moderate": latent + noise,
        "strong": latent + 0.2 * noise,
        "perfect": pop,
        "outliers": np.where(rng.random(n) < 0.02, 1e4 * rng.standard_cauchy(n), latent),
        "sign-flip": np.where(np.arange(n) % 2 == 0, latent, -latent),
        "few-units": np.where(rng.random(n) < 0.03, latent, noise),
    }[case]
    orders = _orders(rng, n, 300)
    looks = [10, 25, 50, 100, 200, 300, 450, 600]
    target = 0.02 if rule == "target" else None
    run = assisted_sequence(
        pop[orders], orders, design_matrix(cov, n), looks, ALPHA, rule, target, estimates=False
    )
    mean = pop.mean()
    covered = ((run.lo <= mean + 1e-12) & (mean <= run.hi + 1e-12)).all(axis=1)
    assert covered.mean() >= 0.95
    assert np.all(np.diff(run.hi - run.lo, axis=1) <= 1e-15)  # intersected: never wider


def test_the_regression_estimate_and_its_fixed_n_interval_by_hand():
    """y = 2 x exactly (x known for all units): after 12 draws the regression estimator is the
    population mean of 2 x; the residual SD is 0, so the fixed-n half-width is 0."""
    x = np.linspace(0.0, 0.5, 30)
    y = 2 * x
    order = np.arange(30)[::-1]
    design = design_matrix(x, 30)
    run = assisted_sequence(y[order], order, design, [12], ALPHA)
    assert run.estimate[0] == pytest.approx(y.mean(), abs=1e-9)
    assert run.fixed_half[0] == pytest.approx(0.0, abs=1e-9)


def test_bad_inputs_are_refused():
    design = design_matrix(None, 4)
    with pytest.raises(ValueError, match="population"):
        assisted_sequence(np.zeros(5), np.arange(5), design, [5], ALPHA)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        assisted_sequence(np.array([0.5, 1.5]), np.arange(2), design, [2], ALPHA)
    with pytest.raises(ValueError, match="looks"):
        assisted_sequence(np.zeros(3), np.arange(3), design, [2, 2], ALPHA)
    with pytest.raises(ValueError, match="bet rule"):
        assisted_sequence(np.zeros(3), np.arange(3), design, [2], ALPHA, "kelly")


# ---- analyze --order --looks --covariates ----------------------------------------------------


def _analyze_with(tmp_path, *extra: str):
    import json

    import pandas as pd
    from click.testing import CliRunner

    from implicit_bench.cli.main import main as cli_main
    from tests.helpers.analysis_fixtures import (
        BLIND_TYPES,
        blind_judgements,
        rows,
        rubric_judgements,
        units,
    )

    units(BLIND_TYPES).to_csv(tmp_path / "units.csv", index=False)
    j = pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True)
    j.to_parquet(tmp_path / "judgements.parquet")
    cov = tmp_path / "earlier"
    cov.mkdir(exist_ok=True)
    units(BLIND_TYPES).to_csv(cov / "units.csv", index=False)
    ref = {
        u: {"N": [s, s, s], "S": [s, s, s], "A": [s, s, s]}
        for u, s in {"u1": 2, "u2": 3, "u3": 1, "u4": 4}.items()
    }
    pd.DataFrame(rows("ref", "A", "rubric", ref)).to_csv(cov / "judgements.csv", index=False)
    (tmp_path / "order.txt").write_text("u3\nu1\nu4\nu2\n")
    args = ["analyze", "--units", str(tmp_path / "units.csv"), "--judgements"]
    args += [str(tmp_path / "judgements.parquet"), "--out", str(tmp_path / "out")]
    args += ["--bootstrap-n", "20", "--order", str(tmp_path / "order.txt"), "--looks", "1,2,4"]
    res = CliRunner().invoke(cli_main, [*args, *[a.replace("COV", str(cov)) for a in extra]])
    report = None
    if res.exit_code == 0:
        report = json.loads((tmp_path / "out" / "anytime.json").read_text())
    return res, report


def test_analyze_reports_the_covariates_used_and_the_width_ratio(tmp_path):
    res, report = _analyze_with(tmp_path, "--covariates", "COV", "--target-width", "0.5")
    assert res.exit_code == 0, res.output
    assert report["covariates"].endswith("earlier")
    assert report["bets"] == {"rule": "target", "target_half_width": 0.5}
    bias = report["estimands"]["bias_score/gen"]
    assert bias["covariates"] == ["ref"]  # the earlier run's configuration
    assert report["estimands"]["default_rate"]["covariates"] == []  # headline rates: none
    # the whole population: both intervals collapse to the population value
    value = bias["population_value"]
    assert bias["looks"][-1]["anytime"] == [value, value]
    assert bias["looks"][-1]["estimate"] == value
    for look in bias["looks"]:
        assert set(look) >= {"anytime", "fixed_n", "width_ratio", "estimate", "n"}


def test_analyze_covariates_errors(tmp_path):
    res, _ = _analyze_with(tmp_path, "--covariates", "release")
    assert res.exit_code != 0 and "--covariates release: no release in the params" in res.output
    assert "Traceback" not in res.output
    res, _ = _analyze_with(tmp_path, "--covariates", "/no/such")
    assert res.exit_code != 0 and "--covariates /no/such: no such file or folder" in res.output


def test_release_covariates_are_the_table4_unit_means_by_hand(tmp_path):
    """The release fixture's Table 4 files: Qwen-Image a1 (4 + 2) / 2 = 3, 007 (1 + 3) / 2 = 2;
    GPT Image 2 a1 (5 + 3) / 2 = 4, 007 1 (seed 0 not returned); Nano Banana 2 a1 (4 + 5) / 2
    = 4.5, 007 none; Qwen-Image alignment 007 (false + true) / 2 = 0.5."""
    from implicit_bench.analysis.byo.covariates import load_covariates
    from tests.helpers.release_fixtures import write_release

    root = write_release(tmp_path / "IMPLICIT-Bench")
    cov = load_covariates(str(root))
    assert cov is not None and cov.source.startswith("authors' release")
    bias = cov.columns["bias_score"]
    table4 = ["gpt_image_2", "nano_banana_2", "qwen_image"]
    assert bias.loc["a1", table4].to_dict() == {
        "gpt_image_2": 4.0,
        "nano_banana_2": 4.5,
        "qwen_image": 3.0,
    }
    assert bias.loc["007", "gpt_image_2"] == 1.0 and bias.loc["007", "qwen_image"] == 2.0
    assert np.isnan(bias.loc["007", "nano_banana_2"])
    assert cov.columns["alignment"].loc["007", "qwen_image"] == 0.5
    # an estimand never uses its own configuration
    assert list(cov.for_estimand("bias_score", {"gpt_image_2"}).columns) == [
        "nano_banana_2",
        "qwen_image",
        "qwen_image_gemma4",
        "qwen_image_debias_runs",
    ]
    assert load_covariates("none") is None
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "units.csv").write_text("unit_id\n")
    with pytest.raises(ConfigError, match="no judgements"):
        load_covariates(str(tmp_path / "bare"))


def test_release_covariates_add_two_columns_of_qwen_images_by_hand(tmp_path):
    """The fixture's construction scores: Gemma-4 on Qwen-Image's neutral images, a1 3.0 (seed
    1 blank: invalid), 007 (2 + 4) / 2 = 3.0; its debiasing runs (experiment 7 with and without
    alpha 1): a1 ((2 + 1) / 2 + (3 + 3) / 2) / 2 = 2.25, 007 ((0 + 2) / 2 + (1 + 1) / 2) / 2 =
    1.0. A Qwen-Image estimand never uses them; any other does."""
    from implicit_bench.analysis.byo.covariates import load_covariates
    from tests.helpers.release_fixtures import write_release

    cov = load_covariates(str(write_release(tmp_path / "IMPLICIT-Bench")))
    bias = cov.columns["bias_score"]
    assert bias.loc["a1", "qwen_image_gemma4"] == 3.0
    assert bias.loc["007", "qwen_image_gemma4"] == 3.0
    assert bias.loc["a1", "qwen_image_debias_runs"] == 2.25
    assert bias.loc["007", "qwen_image_debias_runs"] == 1.0
    assert list(cov.for_estimand("bias_score", {"qwen_image"}).columns) == [
        "gpt_image_2",
        "nano_banana_2",
    ]
    # an import of the debiasing runs names Qwen-Image `unmodified` (experiment 0)
    assert list(cov.for_estimand("bias_score", {"unmodified"}).columns) == [
        "gpt_image_2",
        "nano_banana_2",
        "qwen_image",
    ]
    assert list(cov.for_estimand("bias_score", {"gpt_image_2", "nano_banana_2"}).columns) == [
        "qwen_image",
        "qwen_image_gemma4",
        "qwen_image_debias_runs",
    ]
    assert list(cov.columns["alignment"].columns) == ["gpt_image_2", "qwen_image"]


def test_a_derived_column_follows_the_configuration_it_came_from():
    import pandas as pd

    from implicit_bench.analysis.covariates import Covariates

    frame = pd.DataFrame({"a": [1.0], "b": [2.0], "a_judge2": [3.0]}, index=["u"])
    cov = Covariates("hand", {"bias_score": frame}, {"a_judge2": ("a", "a_other_name")})
    assert list(cov.for_estimand("bias_score", {"a"}).columns) == ["b"]
    assert list(cov.for_estimand("bias_score", {"a_other_name"}).columns) == ["a", "b"]
    assert list(cov.for_estimand("bias_score", {"b"}).columns) == ["a", "a_judge2"]
    assert cov.for_estimand("bias_score", {"a", "b"}) is None
    assert cov.for_estimand("alignment", set()) is None


def test_an_end_to_a_coarser_tolerance_is_the_outer_point_within_it():
    """One draw, K+ = 1 + 119.5 - 100 m: kept (below 40) exactly for m > 0.805, so the lower
    end is 0.805; to 2^-4 it is a bracket point at most 1/16 below it, never above."""
    from implicit_bench.analysis.assisted import _end

    args = (np.array([0.0]), np.array([1.0]), np.array([[119.5]]), np.array([[100.0]]))
    exact = _end(*args, np.log(2 / ALPHA), True)[0]
    coarse = _end(*args, np.log(2 / ALPHA), True, 2.0**-4)[0]
    assert exact == pytest.approx(0.805, abs=1e-11)
    assert 0.805 - 1 / 16 <= coarse <= 0.805


@pytest.mark.parametrize("tolerance", [2.0**-40, 2.0**-24])
def test_the_bench_tolerance_keeps_the_hand_worked_properties(tolerance):
    """With the benchmark's tolerance (2^-24) as with the default: the whole population gives
    its mean; a perfect covariate with bets tuned to 0.02 reaches it long before the plain
    sequence (within 400 of 1,000 units); the ends move by less than 1e-6 from the default's."""
    rng = np.random.default_rng(3)
    pop = (rng.random(1000) < 0.5).astype(float)
    orders = _orders(rng, 1000, 20)
    looks = [100, 200, 400, 1000]
    runs = {
        name: assisted_sequence(
            pop[orders],
            orders,
            design_matrix(cov, 1000),
            looks,
            ALPHA,
            "target",
            0.02,
            estimates=False,
            tolerance=tolerance,
        )
        for name, cov in (("plain", None), ("perfect", pop))
    }
    for run in runs.values():
        assert np.allclose(run.lo[:, -1], pop.mean(), atol=1e-12)
        assert np.allclose(run.hi[:, -1], pop.mean(), atol=1e-12)
    half = {k: np.median((r.hi - r.lo) / 2, axis=0) for k, r in runs.items()}
    assert half["perfect"][2] <= 0.02 < half["plain"][2]
    default = assisted_sequence(
        pop[orders], orders, design_matrix(pop, 1000), looks, ALPHA, "target", 0.02, False
    )
    assert np.abs(default.lo - runs["perfect"].lo).max() < 1e-6
    assert np.abs(default.hi - runs["perfect"].hi).max() < 1e-6


def test_a_release_copy_without_construction_scores_leaves_that_column_out(tmp_path):
    from implicit_bench.analysis.byo.covariates import load_covariates
    from tests.helpers.release_fixtures import write_release

    root = write_release(tmp_path / "IMPLICIT-Bench")
    (root / "data" / "benchmark_scores.csv").unlink()
    bias = load_covariates(str(root)).columns["bias_score"]
    assert list(bias.columns) == [
        "gpt_image_2",
        "nano_banana_2",
        "qwen_image",
        "qwen_image_debias_runs",
    ]
    assert bias.loc["a1", "qwen_image_debias_runs"] == 2.25
