"""Small closed-form statistics used by the audits (no resampling here), and ``safe_div``,
the project's one guarded division (``num / den`` where ``den > 0``, NaN elsewhere).

``wilson_interval`` and ``chisquare_uniform`` repeat scipy.stats' arithmetic step for step
(``binomtest(...).proportion_ci(method="wilson")``, ``chisquare``) on ``scipy.special``, so
the results are bit-for-bit scipy.stats' (tests/unit/util/test_audit_stats.py) without importing
scipy.stats (about 0.4 s) on the ``analyze`` path (docs/analysis.md, "Speed").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (scipy's ``binomtest(...).proportion_ci``);
    (nan, nan) when ``n == 0``."""
    if n <= 0:
        return (math.nan, math.nan)
    from scipy.special import ndtri

    k, n = int(successes), int(n)
    if not 0 <= k <= n:
        raise ValueError(f"successes must be in 0..{n}, got {k}")
    # scipy.stats._binomtest._binom_wilson_conf_int, two-sided, no continuity correction
    p = k / n
    z = ndtri(0.5 + 0.5 * confidence)
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    q = 1 - p
    delta = z / denom * math.sqrt(4 * n * p * q + z**2)
    low = 0.0 if k == 0 else center - delta
    high = 1.0 if k == n else center + delta
    return (max(0.0, float(low)), min(1.0, float(high)))


def chisquare_uniform(counts: Sequence[int]) -> dict[str, float]:
    """Chi-square goodness of fit of ``counts`` against equal expected counts."""
    counts = np.asarray(counts, dtype=float)
    total = counts.sum()
    if total <= 0 or len(counts) < 2:
        return {"chi2": math.nan, "dof": max(len(counts) - 1, 0), "p_value": math.nan}
    from scipy.special import chdtrc

    # scipy.stats._stats_py._power_divergence with lambda_ = 1 and equal expected counts
    expected = np.mean(counts, keepdims=True)
    statistic = np.sum((counts - expected) ** 2 / expected)
    p_value = chdtrc(np.float64(len(counts) - 1), statistic)
    return {"chi2": float(statistic), "dof": len(counts) - 1, "p_value": float(p_value)}


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


def fisher_z_test(r1: float, n1: int, r2: float, n2: int) -> dict[str, float | None]:
    """Two-sided test that two independent Pearson correlations are equal (Fisher 1921):
    ``z = (atanh r1 - atanh r2) / sqrt(1 / (n1 - 3) + 1 / (n2 - 3))``, ``p = 2 (1 - Phi(|z|))``.

    ``n1`` / ``n2`` are the numbers of independent sampling units behind each r: images for the
    plain test, clusters (cases) for the case-clustered one (paper Appendix D.4). ``z`` and ``p``
    are None when either r is undefined or +-1, or an n is 3 or less."""
    from scipy.special import ndtr

    undefined = {
        "z": None,
        "p": None,
        "r1": _or_none(r1),
        "r2": _or_none(r2),
        "n1": int(n1),
        "n2": int(n2),
    }
    if (
        any(x is None or not math.isfinite(x) or abs(x) >= 1 for x in (r1, r2))
        or n1 <= 3
        or n2 <= 3
    ):
        return undefined
    z = (math.atanh(r1) - math.atanh(r2)) / math.sqrt(1 / (n1 - 3) + 1 / (n2 - 3))
    return {**undefined, "z": float(z), "p": float(2 * ndtr(-abs(z)))}


def _or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def safe_div(num: Any, den: Any) -> Any:
    """``num / den`` where ``den > 0``, NaN elsewhere (an empty denominator is "undefined", never
    0 or inf); arrays elementwise, a scalar pair gives a ``float``."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    return out if out.ndim else float(out)
