"""Statistics of the human study: Pearson, MAE, pairwise inter-rater r, Krippendorff's alpha,
rater screening. Vectorised numpy; NaN marks a missing rating."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np


def pearson(x: np.ndarray, y: np.ndarray, min_n: int = 3) -> float:
    """Pearson r over the pairs where both are present; NaN if fewer than ``min_n`` pairs or a
    constant series."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < min_n:
        return math.nan
    dx, dy = x - x.mean(), y - y.mean()
    denom = math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum()))
    return math.nan if denom == 0 else float((dx * dy).sum() / denom)


def fisher_ci(r: float, n: int, z: float = 1.959963984540054) -> tuple[float, float] | None:
    """95% interval of a Pearson r by the Fisher z transform (needs n > 3)."""
    if math.isnan(r) or n <= 3 or abs(r) >= 1:
        return None
    centre, half = math.atanh(r), z / math.sqrt(n - 3)
    return math.tanh(centre - half), math.tanh(centre + half)


def mae(x: np.ndarray, y: np.ndarray) -> float:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    return float(np.abs(x[keep] - y[keep]).mean()) if keep.any() else math.nan


def mean_pairwise_r(matrix: np.ndarray, min_n: int = 3) -> tuple[float, int]:
    """Mean Pearson r over rater pairs of a raters x items matrix (NaN = not rated).

    Pairs with an undefined r (fewer than ``min_n`` shared items, or a constant series) are
    left out; returns (mean r, number of pairs used)."""
    values = [pearson(matrix[i], matrix[j], min_n) for i, j in combinations(range(matrix.shape[0]), 2)]
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


def _delta2(values: np.ndarray, counts: np.ndarray, metric: str) -> np.ndarray:
    """Squared distance between the ordered category values (Krippendorff 2011)."""
    if metric == "nominal":
        return 1.0 - np.eye(len(values))
    if metric == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if metric == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(counts)])
        # sum_{g=c}^{k} n_g - (n_c + n_k) / 2, for c <= k (symmetric)
        lo = np.minimum.outer(np.arange(len(values)), np.arange(len(values)))
        hi = np.maximum.outer(np.arange(len(values)), np.arange(len(values)))
        between = cum[hi + 1] - cum[lo]
        return (between - (counts[:, None] + counts[None, :]) / 2.0) ** 2
    raise ValueError(f"unknown metric {metric!r}")


def krippendorff_alpha(matrix: np.ndarray, metric: str = "ordinal") -> float:
    """Krippendorff's alpha of a raters x items matrix (NaN = missing).

    Items with fewer than two ratings are not pairable and are left out. Coincidences
    o_ck = sum_u (number of ordered pairs (c, k) in item u) / (m_u - 1); n_c = sum_k o_ck;
    alpha = 1 - (n - 1) * sum o_ck d2_ck / sum n_c n_k d2_ck.
    """
    data = np.asarray(matrix, dtype=float)
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    data = data[:, pairable]
    if data.size == 0:
        return math.nan
    values = np.unique(data[~np.isnan(data)])
    if len(values) < 2:
        return math.nan
    # per item counts of each value: items x categories
    idx = np.searchsorted(values, np.nan_to_num(data, nan=values[0]))
    onehot = (idx[..., None] == np.arange(len(values))) & ~np.isnan(data)[..., None]
    per_item = onehot.sum(axis=0).astype(float)  # items x categories
    m = per_item.sum(axis=1)
    coincidence = np.einsum("uc,uk->ck", per_item, per_item / (m - 1)[:, None])
    coincidence -= np.diag((per_item / (m - 1)[:, None]).sum(axis=0))  # remove self-pairs
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    d2 = _delta2(values, n_c, metric)
    expected = float((np.outer(n_c, n_c) * d2).sum())
    if expected == 0:
        return math.nan
    return 1.0 - (n - 1) * float((coincidence * d2).sum()) / expected
