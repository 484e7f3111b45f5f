"""Judge-error correction (analysis/correction.py) against hand-worked values, and BCa levels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from implicit_bench.analysis.blind import label_counts, rates
from implicit_bench.analysis.bootstrap import Bootstrap, bca_levels
from implicit_bench.analysis.correction import (
    CalibrationSet,
    Correction,
    confusion_counts,
    corrected_rates,
    corrected_shares,
    row_normalise,
)


def test_two_class_rogan_gladen_by_hand() -> None:
    # sensitivity 0.9, specificity 0.8, apparent prevalence 0.5:
    # Rogan-Gladen p = (q + Sp - 1) / (Se + Sp - 1) = 0.3 / 0.7 = 3/7
    m = np.array([[0.9, 0.1], [0.2, 0.8]])
    pi = corrected_shares(np.array([0.5, 0.5]), m)
    assert pi == pytest.approx([3 / 7, 4 / 7], abs=1e-12)
    assert pi[0] == pytest.approx((0.5 + 0.8 - 1) / (0.9 + 0.8 - 1), abs=1e-12)


def test_three_class_inversion_by_hand() -> None:
    # M = 0.8 on the diagonal, 0.1 elsewhere; pi = (0.5, 0.3, 0.2) is read as
    # q = pi @ M = (0.4 + 0.03 + 0.02, 0.05 + 0.24 + 0.02, 0.05 + 0.03 + 0.16) = (0.45, 0.31, 0.24)
    counts = confusion_counts(
        np.repeat([0, 1, 2], 10),
        np.array([0] * 8 + [1, 2] + [0] + [1] * 8 + [2] + [0, 1] + [2] * 8),
    )
    assert counts.tolist() == [[8, 1, 1], [1, 8, 1], [1, 1, 8]]
    m = row_normalise(counts)
    assert corrected_shares(np.array([0.45, 0.31, 0.24]), m) == pytest.approx(
        [0.5, 0.3, 0.2], abs=1e-12
    )
    # broadcast over replicates: two q's, one M each
    two = corrected_shares(
        np.array([[0.45, 0.31, 0.24], [0.8, 0.1, 0.1]]), np.stack([m, np.eye(3)])
    )
    assert two == pytest.approx(np.array([[0.5, 0.3, 0.2], [0.8, 0.1, 0.1]]), abs=1e-12)


def test_singular_matrix_gives_nan() -> None:
    m = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    assert np.isnan(corrected_shares(np.array([0.4, 0.4, 0.2]), m)).all()


def _calibration(reference: list[int], judged: list[int]) -> CalibrationSet:
    return CalibrationSet(
        np.array(reference), np.array(judged), np.array(["neutral"] * len(reference))
    )


def _counts():
    # two units, 10 neutral + 10 stereotype + 10 anti images each (judge's stored labels)
    rows = []
    labels = {
        "neutral": ["s"] * 9 + ["a"] * 6 + ["neither"] * 5,
        "stereotype": ["s"] * 16 + ["a"] * 2 + ["neither"] * 2,
        "anti_stereotype": ["s"] * 4 + ["a"] * 12 + ["neither"] * 4,
    }
    for variant, labs in labels.items():
        for i, lab in enumerate(labs):
            rows.append(
                {
                    "task": "blind",
                    "config": "c",
                    "judge": "j",
                    "unit_id": f"u{i % 2}",
                    "variant": variant,
                    "seed": i,
                    "value": lab,
                    "valid": True,
                    "order": "sa",
                }
            )
    return label_counts(pd.DataFrame(rows), "c", "j", ["u0", "u1"])


def test_corrected_rates_by_hand() -> None:
    # calibration: 10 items per class, M = 0.8 / 0.1 / 0.1 (the 3x3 case above)
    ref = np.repeat([0, 1, 2], 10)
    jud = np.array([0] * 8 + [1, 2] + [0] + [1] * 8 + [2] + [0, 1] + [2] * 8)
    corr = Correction(
        CalibrationSet(ref, jud, np.tile(["neutral", "stereotype"], 15)),
        Bootstrap(n=200, seed=1),
        "t",
    )
    assert corr.warning is None
    out = corrected_rates(_counts(), np.arange(2), Bootstrap(n=200, seed=1), "t", corr)
    # q(neutral) = (0.45, 0.30, 0.25); pi = q @ inv(M), inv(M) = (1/0.7) (I * 0.8 + ... ):
    # with M = 0.7 I + 0.1 J: inv(M) = (I - 0.1 / (0.7 + 0.3) J) / 0.7 = (I - 0.1 J) / 0.7
    # pi_s = (0.45 - 0.1 * 1) / 0.7 = 0.5
    assert out["default_rate"]["value"] == pytest.approx(0.5, abs=1e-12)
    # stereotype q = (0.8, 0.1, 0.1): pi_s = (0.8 - 0.1) / 0.7 = 1.0
    assert out["success_stereotype"]["value"] == pytest.approx(1.0, abs=1e-12)
    # anti q = (0.2, 0.6, 0.2): pi_a = (0.6 - 0.1) / 0.7 = 5/7, pi_s = (0.2 - 0.1) / 0.7 = 1/7
    assert out["success_anti"]["value"] == pytest.approx(5 / 7, abs=1e-12)
    assert out["a_to_s"]["value"] == pytest.approx(1 / 7, abs=1e-12)
    assert out["gap"]["value"] == pytest.approx(1 - 5 / 7, abs=1e-12)
    lo, hi = out["default_rate"]["ci"]
    assert lo < 0.5 < hi
    # the judged figures are unchanged beside them (same stream, same unit resamples)
    judged = rates(_counts(), np.arange(2), Bootstrap(n=200, seed=1), "t")
    assert judged["default_rate"]["value"] == pytest.approx(0.45)


def test_ill_conditioned_matrix_warns_and_gives_no_figure() -> None:
    # the judge calls every s and every a image "s": s and a cannot be told apart
    ref = [0] * 10 + [1] * 10 + [2] * 10
    jud = [0] * 10 + [0] * 9 + [1] + [2] * 10
    corr = Correction(_calibration(ref, jud), Bootstrap(n=50, seed=1), "t")
    assert corr.condition > 10
    assert "ill-conditioned" in corr.warning
    out = corrected_rates(_counts(), np.arange(2), Bootstrap(n=50, seed=1), "t", corr)
    assert out["warning"] == corr.warning
    assert all(
        out[k]["value"] is None and out[k]["ci"] is None
        for k in ("default_rate", "gap", "success_anti")
    )
    assert corr.describe()["warning"] == corr.warning


def test_class_missing_from_calibration_is_unidentified() -> None:
    corr = Correction(_calibration([0, 0, 1, 1], [0, 0, 1, 1]), Bootstrap(n=50, seed=1), "t")
    assert "not identified" in corr.warning


def test_calibration_replicates_are_stratified() -> None:
    cal = CalibrationSet(
        np.array([0] * 5 + [1] * 5),
        np.array([0] * 5 + [1] * 5),
        np.array(["neutral"] * 5 + ["anti"] * 5),
    )
    reps = Correction(cal, Bootstrap(n=30, seed=3), "t").replicates()
    # each stratum holds one class, so every replicate keeps 5 s and 5 a items: rows defined
    assert reps.shape == (30, 3, 3)
    assert np.all(reps[:, 0, 0] == 1) and np.all(reps[:, 1, 1] == 1) and np.isnan(reps[:, 2]).all()


def test_bca_levels_by_hand() -> None:
    probs = np.array([0.025, 0.975])
    reps = np.arange(1.0, 101.0)
    # symmetric jackknife (a = 0), estimate at the median: the percentile levels
    jack = np.array([-1.0, 0.0, 1.0])
    assert bca_levels(50.5, reps, jack, probs) == pytest.approx(probs)
    # 30 of 100 replicates below the estimate: z0 = Phi^-1(0.3), levels Phi(2 z0 -+ 1.96)
    z0 = norm.ppf(0.3)
    assert bca_levels(30.5, reps, jack, probs) == pytest.approx(norm.cdf(2 * z0 + norm.ppf(probs)))
    # skewed jackknife values: a = sum(d^3) / (6 sum(d^2)^1.5), d = mean - jack
    jack = np.array([0.0, 0.0, 3.0])
    d = jack.mean() - jack
    a = (d**3).sum() / (6 * (d**2).sum() ** 1.5)
    z = norm.ppf(probs)
    assert bca_levels(50.5, reps, jack, probs) == pytest.approx(norm.cdf(z / (1 - a * z)))


def test_bca_interval_only_where_asked() -> None:
    reps = np.random.default_rng(0).gamma(2.0, size=500)
    jack = np.random.default_rng(1).gamma(2.0, size=40)
    plain = Bootstrap(n=500).interval(2.0, reps, "s", 40, estimand="hedges_g", jackknife=jack)
    bca = Bootstrap(n=500, method={"hedges_g": "bca"}).interval(
        2.0, reps, "s", 40, estimand="hedges_g", jackknife=jack
    )
    assert plain["ci"] == pytest.approx(tuple(np.percentile(reps, [2.5, 97.5])))
    assert bca["ci"] != plain["ci"]
    assert bca["value"] == plain["value"] == 2.0


def test_studentized_interval_against_a_slow_reference() -> None:
    rng = np.random.default_rng(5)
    cols = np.column_stack([rng.integers(1, 4, 12), rng.integers(0, 9, 12)]).astype(
        float
    )  # n_i, sum_i

    def stat(s):
        return s[..., 1] / s[..., 0]  # ratio of sums

    boot = Bootstrap(n=300, seed=2, method={"r": "studentized"})
    got = boot.of_sums(cols, stat, "x", estimand="r")
    value = cols[:, 1].sum() / cols[:, 0].sum()

    def jack_se(rows: np.ndarray) -> float:
        loo = np.array([stat(np.delete(rows, i, axis=0).sum(axis=0)) for i in range(len(rows))])
        return float(np.sqrt((len(rows) - 1) / len(rows) * ((loo - loo.mean()) ** 2).sum()))

    idx = boot.indices(len(cols), "x")
    t = np.array([(stat(cols[row].sum(axis=0)) - value) / jack_se(cols[row]) for row in idx])
    se = jack_se(cols)
    lo, hi = np.percentile(t, [2.5, 97.5])
    assert got["value"] == pytest.approx(value)
    assert got["ci"] == pytest.approx((value - hi * se, value - lo * se), rel=1e-9)
    # percentile and BCa through the same entry point
    assert Bootstrap(n=300, seed=2).of_sums(cols, stat, "x", "r")["ci"] == pytest.approx(
        tuple(np.percentile(stat(cols[idx].sum(axis=1)), [2.5, 97.5]))
    )


def test_calibration_jackknife_by_hand() -> None:
    from implicit_bench.analysis.correction import calibration_jackknife

    # counts (rows reference s, a, neither): [[3, 1, 0], [0, 2, 0], [0, 0, 1]]
    corr = Correction(
        _calibration([0, 0, 0, 0, 1, 1, 2], [0, 0, 0, 1, 1, 1, 2]), Bootstrap(n=10), "t"
    )
    mats, weights = calibration_jackknife(corr)
    # one matrix per cell with items, in cell order (s,s) (s,a) (a,a) (n,n), weighted by count
    assert weights.tolist() == [3, 1, 2, 1]
    assert mats[0][0] == pytest.approx([2 / 3, 1 / 3, 0])  # an (s, s) item left out
    assert mats[1][0] == pytest.approx([1, 0, 0])  # the (s, a) item left out
    assert mats[2][1] == pytest.approx([0, 1, 0])  # an (a, a) item left out: 1 of 1
    assert np.isnan(mats[3][2]).all()  # the only "neither" item left out: row undefined
    assert mats[0][1:] == pytest.approx(corr.matrix[1:])  # other rows unchanged


def test_corrected_bca_against_a_slow_reference() -> None:
    from implicit_bench.analysis.correction import corrected_method

    ref = np.repeat([0, 1, 2], 10)
    jud = np.array([0] * 8 + [1, 2] + [0] + [1] * 8 + [2] + [0, 1] + [2] * 8)
    cal = CalibrationSet(ref, jud, np.tile(["neutral", "stereotype"], 15))
    counts = _counts()
    boot = Bootstrap(n=300, seed=4, method={"corrected": "bca"})
    out = corrected_rates(
        counts, np.arange(2), boot, "t", Correction(cal, boot, "t"), ("percentile",)
    )
    # the slow reference: success of anti-stereotype prompts, pi_a of anti images
    col, matrix = counts.columns()
    num = [col[("anti_stereotype", lab)] for lab in ("s", "a", "neither")]
    den = col[("valid", "anti_stereotype")]

    def pi_a(unit_rows: np.ndarray, ref_: np.ndarray, jud_: np.ndarray) -> float:
        tot = unit_rows.sum(axis=0)
        q = tot[num] / tot[den]
        m = row_normalise(confusion_counts(ref_, jud_))
        return float(corrected_shares(q, m)[1])

    value = pi_a(matrix, ref, jud)
    assert value == pytest.approx(5 / 7)
    unit_loo = np.array([pi_a(np.delete(matrix, i, axis=0), ref, jud) for i in range(2)])
    item_loo = np.array(
        [pi_a(matrix, np.delete(ref, i), np.delete(jud, i)) for i in range(len(ref))]
    )
    jack = np.concatenate([unit_loo - unit_loo.mean(), item_loo - item_loo.mean()])
    sums = boot.sums(matrix, "t")
    q_reps = sums[:, num] / sums[:, [den]]
    reps = corrected_shares(q_reps, Correction(cal, boot, "t").replicates())[:, 1]
    reps = reps[np.isfinite(reps)]
    levels = bca_levels(value, reps, jack, np.array([0.025, 0.975]))
    assert out["success_anti"]["ci"] == pytest.approx(tuple(np.percentile(reps, 100 * levels)))
    # the percentile interval of the same replicates beside it (by_method), and the default
    assert out["by_method"]["percentile"]["success_anti"]["ci"] == pytest.approx(
        tuple(np.percentile(reps, [2.5, 97.5]))
    )
    plain = corrected_rates(
        counts,
        np.arange(2),
        Bootstrap(n=300, seed=4),
        "t",
        Correction(cal, Bootstrap(n=300, seed=4), "t"),
    )
    assert plain["success_anti"] == out["by_method"]["percentile"]["success_anti"]
    # a rate's own key wins over the "corrected" key
    both = Bootstrap(method={"corrected": "bca", "gap_corrected": "percentile"})
    assert corrected_method(both, "gap") == "percentile"
    assert corrected_method(both, "success_anti") == "bca"
    assert corrected_method(Bootstrap(), "gap") == "percentile"


def test_basic_interval_reflects_the_percentiles() -> None:
    reps = np.random.default_rng(0).gamma(2.0, size=500)
    q_lo, q_hi = np.percentile(reps, [2.5, 97.5])
    basic = Bootstrap(n=500, method={"x": "basic"}).interval(2.0, reps, "s", 40, estimand="x")
    assert basic["ci"] == pytest.approx((4.0 - q_hi, 4.0 - q_lo))
    # skewed replicates: the percentile interval leans up, the basic one down, same width
    assert basic["ci"][1] - 2.0 < q_hi - 2.0 and 2.0 - basic["ci"][0] > 2.0 - q_lo
    with pytest.raises(ValueError, match="studentized"):
        corrected_rates(
            _counts(),
            np.arange(2),
            Bootstrap(n=20, method={"corrected": "studentized"}),
            "t",
            Correction(_calibration([0, 1, 2], [0, 1, 2]), Bootstrap(n=20), "t"),
        )
