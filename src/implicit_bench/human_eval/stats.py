"""Statistics of the human study: Pearson, MAE, pairwise inter-rater r, Krippendorff's alpha,
rater screening. NaN marks a missing rating. Pearson r and its Fisher interval come from
``scipy.stats.pearsonr``, Krippendorff's alpha from the ``krippendorff`` package; this module
only handles missing values and the undefined cases."""

from __future__ import annotations

import math
import warnings
from itertools import combinations

import krippendorff
import numpy as np
from scipy import stats as sps


def _paired(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def _pearsonr(x: np.ndarray, y: np.ndarray, min_n: int):
    """scipy's PearsonRResult over the complete pairs, or None when r is undefined."""
    x, y = _paired(x, y)
    if len(x) < min_n or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sps.pearsonr(x, y)


def pearson(x: np.ndarray, y: np.ndarray, min_n: int = 3) -> float:
    """Pearson r over the pairs where both are present; NaN if fewer than ``min_n`` pairs or a
    constant series."""
    res = _pearsonr(x, y, min_n)
    return math.nan if res is None else float(res.statistic)


def pearson_ci(
    x: np.ndarray, y: np.ndarray, confidence: float = 0.95, min_n: int = 3
) -> tuple[float, tuple[float, float] | None, int]:
    """(r, Fisher-z interval, n pairs): ``scipy.stats.pearsonr(...).confidence_interval()``.

    The interval is None when r is undefined, ``n <= 3`` or ``|r| = 1`` (as the Fisher
    transform is then degenerate)."""
    n = len(_paired(x, y)[0])
    res = _pearsonr(x, y, min_n)
    if res is None:
        return math.nan, None, n
    r = float(res.statistic)
    if n <= 3 or abs(r) >= 1:
        return r, None, n
    ci = res.confidence_interval(confidence_level=confidence)
    return r, (float(ci.low), float(ci.high)), n


def mae(x: np.ndarray, y: np.ndarray) -> float:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    return float(np.abs(x[keep] - y[keep]).mean()) if keep.any() else math.nan


def mean_pairwise_r(matrix: np.ndarray, min_n: int = 3) -> tuple[float, int]:
    """Mean Pearson r over rater pairs of a raters x items matrix (NaN = not rated).

    Pairs with an undefined r (fewer than ``min_n`` shared items, or a constant series) are
    left out; returns (mean r, number of pairs used)."""
    values = [
        pearson(matrix[i], matrix[j], min_n) for i, j in combinations(range(matrix.shape[0]), 2)
    ]
    values = [v for v in values if not math.isnan(v)]
    return (float(np.mean(values)) if values else math.nan), len(values)


def loo_correlations(matrix: np.ndarray, min_n: int = 3) -> np.ndarray:
    """Per rater: Pearson r between the rater's ratings and the mean of the other raters'
    ratings of the same items (leave-one-out mean; items nobody else rated are skipped)."""
    out = np.full(matrix.shape[0], math.nan)
    present = ~np.isnan(matrix)
    sums = np.where(present, matrix, 0.0).sum(axis=0)
    counts = present.sum(axis=0)
    for i in range(matrix.shape[0]):
        other_n = counts - present[i]
        other_sum = sums - np.where(present[i], matrix[i], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            other_mean = np.where(other_n > 0, other_sum / np.maximum(other_n, 1), math.nan)
        out[i] = pearson(matrix[i], other_mean, min_n)
    return out


def mean_pairwise_by_rater(matrix: np.ndarray, min_n: int = 3) -> np.ndarray:
    """Per rater: mean of the rater's pairwise Pearson r with each other rater."""
    k = matrix.shape[0]
    out = np.full(k, math.nan)
    for i in range(k):
        values = [pearson(matrix[i], matrix[j], min_n) for j in range(k) if j != i]
        values = [v for v in values if not math.isnan(v)]
        if values:
            out[i] = float(np.mean(values))
    return out


def krippendorff_alpha(matrix: np.ndarray, metric: str = "ordinal") -> float:
    """Krippendorff's alpha of a raters x items matrix (NaN = missing), by the ``krippendorff``
    package; NaN when undefined (no item rated twice, or a single value in the data)."""
    data = np.asarray(matrix, dtype=float)
    data = data[:, (~np.isnan(data)).sum(axis=0) >= 2]  # items rated once are not pairable
    if data.size == 0 or len(np.unique(data[~np.isnan(data)])) < 2:
        return math.nan
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=metric))
