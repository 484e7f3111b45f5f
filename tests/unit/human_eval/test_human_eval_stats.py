"""Statistics of the human study against values worked out by hand (and
the krippendorff package)."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest

from implicit_bench.human_eval.bundle import allocate
from implicit_bench.human_eval.stats import (
    krippendorff_alpha,
    loo_correlations,
    mae,
    mean_pairwise_by_rater,
    mean_pairwise_r,
    pearson,
    pearson_ci,
)

NAN = math.nan


def test_krippendorff_ordinal_by_hand():
    # raters x items: items {1,1}, {2,2}, {3,2}; one pair per item, weight 1/(m-1) = 1.
    # coincidences o11 = 2, o22 = 2, o23 = o32 = 1; n1 = 2, n2 = 3, n3 = 1, n = 6.
    # ordinal d2: (1,2) = (n1+n2 - (n1+n2)/2)^2 = 2.5^2 = 6.25; (2,3) = (4 - 2)^2 = 4;
    #             (1,3) = (6 - 1.5)^2 = 20.25.
    # observed sum o*d2 = 2 * 4 = 8; expected sum n_c n_k d2 = 2 * (6*6.25 + 2*20.25 + 3*4) = 180.
    # alpha = 1 - (n - 1) * 8 / 180 = 1 - 40/180 = 7/9.
    m = np.array([[1, 2, 3], [1, 2, 2]], dtype=float)
    assert krippendorff_alpha(m, "ordinal") == pytest.approx(7 / 9)
    # nominal d2 = 1 off the diagonal: observed 2, expected 2*(6 + 2 + 3) = 22 -> 1 - 5*2/22 = 6/11
    assert krippendorff_alpha(m, "nominal") == pytest.approx(6 / 11)
    # interval d2 = (c - k)^2: observed 2*1 = 2; expected 2*(6*1 +
    # 2*4 + 3*1) = 34 -> 1 - 10/34 = 12/17
    assert krippendorff_alpha(m, "interval") == pytest.approx(12 / 17)


def test_krippendorff_missing_and_unpairable_items_by_hand():
    # item 3 has one rating only (not pairable) and is ignored; items {0,0,1} and {2,2}.
    # item 1: m = 3, weight 1/2: ordered pairs (0,0) x2, (0,1) x2,
    # (1,0) x2 -> o00 = 1, o01 = o10 = 1.
    # item 2: m = 2: o22 = 2.  n0 = 2, n1 = 1, n2 = 2, n = 5.
    # ordinal d2: (0,1) = (3 - 1.5)^2 = 2.25; (1,2) = (3 - 1.5)^2 = 2.25; (0,2) = (5 - 2)^2 = 9.
    # observed = 2 * 2.25 = 4.5; expected = 2 * (2*1*2.25 + 1*2*2.25 + 2*2*9) = 2 * 45 = 90.
    # alpha = 1 - 4 * 4.5 / 90 = 0.8
    m = np.array([[0, 2, 5], [0, 2, NAN], [1, NAN, NAN]], dtype=float)
    assert krippendorff_alpha(m, "ordinal") == pytest.approx(0.8)


def test_krippendorff_matches_package_on_random_data():
    rng = np.random.default_rng(3)
    for _ in range(60):
        m = rng.integers(0, 6, size=(int(rng.integers(2, 7)), int(rng.integers(3, 15)))).astype(
            float
        )
        m[rng.random(m.shape) < 0.25] = NAN
        if (~np.isnan(m)).sum(axis=0).max() < 2 or len(np.unique(m[~np.isnan(m)])) < 2:
            continue
        for metric in ("ordinal", "interval", "nominal"):
            ref = krippendorff.alpha(reliability_data=m, level_of_measurement=metric)
            assert krippendorff_alpha(m, metric) == pytest.approx(ref, abs=1e-9)


def test_krippendorff_undefined_cases():
    assert math.isnan(krippendorff_alpha(np.array([[1, 1], [1, 1]], dtype=float)))  # one value only
    assert math.isnan(
        krippendorff_alpha(np.array([[1, NAN], [NAN, 2]], dtype=float))
    )  # nothing pairable


def test_pearson_mae_fisher_by_hand():
    # x = 1..4, y = 2,1,4,3: deviations (-1.5,-.5,.5,1.5) and
    # (-.5,-1.5,1.5,.5); cov = 3, SS = 5, 5 -> r = 0.6
    x, y = np.array([1, 2, 3, 4.0]), np.array([2, 1, 4, 3.0])
    assert pearson(x, y) == pytest.approx(0.6)
    # missing pairs are dropped: adding (nan, 9) changes nothing
    assert pearson(np.append(x, NAN), np.append(y, 9)) == pytest.approx(0.6)
    assert math.isnan(pearson(x, np.ones(4)))  # constant series
    assert math.isnan(pearson(x[:2], y[:2]))  # fewer than 3 pairs
    assert mae(x, y) == pytest.approx(1.0)  # |1-2|, |2-1|, |3-4|, |4-3|
    # Fisher: atanh(0.6) = 0.693147; half = 1.959964 / sqrt(100 - 3) = 0.199004. Data with r = 0.6
    # exactly and n = 100: a = (1,-1,1,-1,...), b = (1,1,-1,-1,...) are orthogonal, zero-mean and of
    # equal norm, so r(a, 0.6 a + 0.8 b) = 0.6.
    a = np.tile([1.0, -1.0, 1.0, -1.0], 25)
    b = np.tile([1.0, 1.0, -1.0, -1.0], 25)
    r, (lo, hi), n = pearson_ci(a, 0.6 * a + 0.8 * b)
    assert (r, n) == (pytest.approx(0.6), 100)
    assert lo == pytest.approx(math.tanh(0.6931472 - 0.1990040), abs=1e-6)
    assert hi == pytest.approx(math.tanh(0.6931472 + 0.1990040), abs=1e-6)
    assert pearson_ci(x, y)[1] == pytest.approx(
        (math.tanh(0.6931472 - 1.959964), math.tanh(0.6931472 + 1.959964)), abs=1e-6
    )  # n = 4
    assert (
        pearson_ci(x, np.ones(4))[1] is None and pearson_ci(x, x)[1] is None
    )  # undefined, |r| = 1


# raters x images; r1 = r2 = 1..4, r3 = 2,1,4,3, r4 = 4,3,2,1
FOUR = np.array([[1, 2, 3, 4], [1, 2, 3, 4], [2, 1, 4, 3], [4, 3, 2, 1]], dtype=float)


def test_leave_one_out_screening_by_hand():
    loo = loo_correlations(FOUR)
    # r1: others' mean = (7/3, 2, 3, 8/3), deviations (-1/6, -1/2, 1/2, 1/6); r1 deviations
    #     (-1.5, -.5, .5, 1.5): cov = 1, SS = 5 and 5/9 -> r = 1 / sqrt(25/9) = 0.6 (same for r2)
    # r3: others' mean = (2, 7/3, 8/3, 3) -> cov = 1, SS 5 and 5/9 -> 0.6
    # r4: others' mean = (4/3, 5/3, 10/3, 11/3), deviations (-7/6, -5/6, 5/6, 7/6):
    #     cov = -13/3, SS = 5 and 37/9 -> r = -13 / sqrt(185) = -0.95579
    assert loo == pytest.approx([0.6, 0.6, 0.6, -13 / math.sqrt(185)])


def test_mean_pairwise_by_hand():
    # pairwise r: (1,2) = 1, (1,3) = 0.6, (1,4) = -1, (2,3) = 0.6, (2,4) = -1, (3,4) = -0.6
    by_rater = mean_pairwise_by_rater(FOUR)
    assert by_rater == pytest.approx([0.2, 0.2, 0.2, -2.6 / 3])
    r, n_pairs = mean_pairwise_r(FOUR)
    assert n_pairs == 6
    assert r == pytest.approx((1 + 0.6 - 1 + 0.6 - 1 - 0.6) / 6)
    # without r4: pairs 1, 0.6, 0.6
    assert mean_pairwise_r(FOUR[:3])[0] == pytest.approx(2.2 / 3)


def test_allocation_by_hand():
    # 100 of 1000 units in strata 600/300/95/5, minimum 1: one each first (4), then 96 slots
    # shared by room 599/299/94/4 of 996: quotas 57.73, 28.82, 9.06, 0.39 -> floors 57/28/9/0
    # (94), two left by largest remainder: 0.82 (b), 0.73 (a) -> 58/29/9/0; plus minimum:
    # a 59, b 30, c 10, d 1.
    alloc = allocate({"a": 600, "b": 300, "c": 95, "d": 5}, 100, 1)
    assert alloc == {"a": 59, "b": 30, "c": 10, "d": 1}
    assert sum(allocate({"a": 3, "b": 2}, 10, 1).values()) == 5  # capped by the population
    assert allocate({"a": 3, "b": 2, "c": 1}, 2, 1) == {
        "a": 1,
        "b": 1,
        "c": 0,
    }  # fewer slots than strata
