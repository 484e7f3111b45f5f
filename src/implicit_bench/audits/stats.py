"""Small closed-form statistics used by the audits (no resampling here)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats as sps


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (scipy's ``binomtest(...).proportion_ci``);
    (nan, nan) when ``n == 0``."""
    if n <= 0:
        return (math.nan, math.nan)
    ci = sps.binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return (max(0.0, float(ci.low)), min(1.0, float(ci.high)))


def chisquare_uniform(counts: Sequence[int]) -> dict[str, float]:
    """Chi-square goodness of fit of ``counts`` against equal expected counts."""
    counts = np.asarray(counts, dtype=float)
    total = counts.sum()
    if total <= 0 or len(counts) < 2:
        return {"chi2": math.nan, "dof": max(len(counts) - 1, 0), "p_value": math.nan}
    result = sps.chisquare(counts)
    return {"chi2": float(result.statistic), "dof": len(counts) - 1, "p_value": float(result.pvalue)}


def normalised_entropy(counts: Sequence[float], n_categories: int | None = None) -> float:
    """H = -sum p log p / log |C| in [0, 1]; 0 when collapsed; nan when there is no count.

    ``n_categories`` is |C| (the taxonomy size), which may exceed the number of observed
    categories: unobserved categories contribute 0 to the sum but count in log |C|.
    """
    counts = np.asarray(counts, dtype=float)
    k = len(counts) if n_categories is None else n_categories
    total = counts.sum()
    if total <= 0:
        return math.nan
    if k < 2:
        return 0.0
    p = counts[counts > 0] / total
    return float(-(p * np.log(p)).sum() / math.log(k)) + 0.0  # + 0.0: no negative zero


def geometric_mean(values: Sequence[float]) -> float:
    """Geometric mean; 0 if any value is 0; nan if any value is nan or the list is empty."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0 or np.isnan(arr).any():
        return math.nan
    if (arr <= 0).any():
        return 0.0
    return float(np.exp(np.log(arr).mean()))


def share(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else math.nan
