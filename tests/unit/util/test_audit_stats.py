"""implicit_bench._util.closed_form (was audits.stats) repeats scipy.stats' Wilson interval and
chi-square test bit for bit, without
importing scipy.stats (docs/analysis.md, "Speed")."""

from __future__ import annotations

import math

import pytest
from scipy import stats as sps

from implicit_bench._util.closed_form import chisquare_uniform, wilson_interval


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
def test_wilson_interval_is_scipys_bit_for_bit(confidence):
    for n in (1, 2, 3, 7, 10, 99, 1000, 16479):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            ci = sps.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
            assert wilson_interval(k, n, confidence) == (
                max(0.0, float(ci.low)),
                min(1.0, float(ci.high)),
            )


def test_wilson_interval_by_hand():
    # 6 of 9, z = 1.959964: centre (12 + z^2) / (2 (9 + z^2)),
    # half-width z / (2 (9 + z^2)) sqrt(8 + z^2)
    z2 = 1.959963984540054**2
    centre, half = (
        (12 + z2) / (2 * (9 + z2)),
        1.959963984540054 / (2 * (9 + z2)) * math.sqrt(8 + z2),
    )
    low, high = wilson_interval(6, 9)
    assert low == pytest.approx(centre - half, abs=1e-12) and high == pytest.approx(
        centre + half, abs=1e-12
    )
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0
    with pytest.raises(ValueError):
        wilson_interval(6, 5)


@pytest.mark.parametrize(
    "counts", [[6, 3], [50, 50], [0, 7], [1, 2, 3], [10, 0, 0], [1234, 987, 1500], [3, 1, 4, 1, 5]]
)
def test_chisquare_uniform_is_scipys_bit_for_bit(counts):
    ref = sps.chisquare([float(c) for c in counts])
    out = chisquare_uniform(counts)
    assert out == {
        "chi2": float(ref.statistic),
        "dof": len(counts) - 1,
        "p_value": float(ref.pvalue),
    }


def test_chisquare_uniform_by_hand():
    # [6, 3]: expected 4.5 each, chi2 = 2 * 1.5^2 / 4.5 = 1.0, p = P(chi2_1 > 1) = erfc(sqrt(1/2))
    out = chisquare_uniform([6, 3])
    assert out["chi2"] == pytest.approx(1.0) and out["p_value"] == pytest.approx(
        math.erfc(math.sqrt(0.5))
    )


def test_holm_as_statsmodels_and_bootstrap_p_by_hand():
    import numpy as np
    from statsmodels.stats.multitest import multipletests

    from implicit_bench.analysis.bootstrap import bootstrap_p, holm

    # sorted 0.01, 0.02, 0.04 (m = 3): 3 x 0.01 = 0.03, 2 x 0.02 = 0.04, 1 x 0.04 = 0.04
    assert holm([0.04, 0.01, 0.02, None]) == pytest.approx([0.04, 0.03, 0.04, None])
    rng = np.random.default_rng(3)
    p = rng.uniform(0, 0.2, size=9)
    assert holm([float(v) for v in p]) == pytest.approx(list(multipletests(p, method="holm")[1]))
    # 2 of 10 replicates at or below 0: 2 x (2 + 1) / 11; none: 2 x (0 + 1) / 3 (never 0)
    assert bootstrap_p(np.array([-1, 0, 1, 2, 3, 4, 5, 6, 7, 8.0])) == pytest.approx(6 / 11)
    assert bootstrap_p(np.array([1.0, 2.0])) == pytest.approx(2 / 3)
    assert bootstrap_p(np.array([np.nan])) is None
