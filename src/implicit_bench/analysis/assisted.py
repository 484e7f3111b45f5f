"""Covariate-assisted anytime-valid confidence sequences for a finite population's mean.

What is known about every unit before a new model renders anything (other generators' per-unit
scores, a user's earlier runs) predicts the new model's per-unit value; the units are drawn in
a uniformly random order without replacement, and the sequence bets on the part of each value
the prediction misses.

After draw ``i`` of ``N`` (values ``y`` rescaled to [0, 1], covariate rows ``x`` known for all
``N`` units), the prediction ``f_k(x) = clip(x b_k, 0, 1)`` uses coefficients ``b_k`` fitted
(ridge least squares, intercept unpenalised) on the draws before it only: the fit is refreshed
at fixed draw counts (``refit_points``), so every quantity of draw ``i`` is known before it is
drawn (predictable). Under a candidate population mean ``m``, the next unit is uniform over the
``N - i + 1`` units not yet seen, so its residual ``Z_i = y_i - f(x_i)`` has the conditional mean

    c_i(m) = (N m - S_{i-1}) / (N - i + 1) - F_i,

``S_{i-1}``: the sum of the values drawn so far, ``F_i``: the mean prediction over the unseen
units (computable: the covariates of every unit are known). The capital processes
``K+_t(m) = prod (1 + l+_i (Z_i - c_i(m)))`` and ``K-_t(m) = prod (1 - l-_i (Z_i - c_i(m)))``
are nonnegative martingales at the true mean whatever the prediction is worth (Waudby-Smith &
Ramdas, "Confidence sequences for sampling without replacement", NeurIPS 2020, Section 3, with
the prediction as a predictable control variate; Waudby-Smith & Ramdas, "Estimating means of
bounded random variables by betting", JRSS-B 2024, for the bets), so by Ville's inequality
``m`` is excluded once ``K+ >= 2 / alpha`` or ``K- >= 2 / alpha`` with probability at most
``alpha`` over every draw at once. A useless covariate leaves the residuals as wide as the
values (a little width lost to fitting noise, never coverage); a predictive one shrinks their
variance and the bets grow with it.

- **Bets** (nonnegative, the same for every ``m``, so the set kept is an interval found by
  bisection): ``plugin``, the predictable plug-in of the 2020 paper,
  ``l_i = sqrt(2 log(2 / alpha) / (s2_i i log(i + 1)))``; ``target``, tuned to a half-width
  ``w`` fixed in advance, ``l_i = w a_i / s2_i`` with ``a_i = N / (N - i + 1)`` (the log-optimal
  bet against a candidate ``w`` away from the truth: a mean ``w`` off moves the unseen units'
  mean by ``w a_i``; the sequence then reaches ``w`` after about ``2 log(2/alpha) s2 / w^2``
  draws, against ``z^2 s2 / w^2`` for a fixed-n interval). ``s2_i``: the residual variance of
  the latest fit, ``(1/4 + RSS) / (1 + draws - columns)`` (1/4 before any fit).
- **Caps** keep every factor at least ``1 - THETA`` for any value the unseen units can take
  and every candidate still evaluated: ``l+_i <= THETA / (c_i(hi) + max f)``,
  ``l-_i <= THETA / (1 - min f - c_i(lo))`` (max, min over every unit: a superset of the
  unseen ones; ``[lo, hi]``: the running interval at the last refit point before draw ``i``,
  which holds every candidate evaluated later; a denominator below ``CAP_FLOOR`` counts as
  ``CAP_FLOOR``, a smaller cap). A candidate outside it was excluded already, so the process
  of the true mean is a nonnegative martingale up to its first exclusion.
- The interval is intersected with the values the unseen units can still give
  (``[S_t, S_t + N - t] / N``: at ``t = N`` it is the population mean, the finite-population
  correction at the end) and with every earlier look's interval.

Without covariates (an intercept only) the prediction is a constant, which cancels in
``Z_i - c_i(m)``: the sequence is the plain without-replacement betting sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

THETA = 0.75  # the largest share of the capital one draw may lose
CAP_FLOOR = 0.05  # a cap's denominator at least this (a smaller cap: still valid)
RIDGE = 1.0  # ridge penalty on the standardised covariates' coefficients (in draws)
FIRST_FIT = 10  # draws before the first fit (before it: a constant prediction)
PRIOR_VARIANCE = 0.25  # the largest variance of a [0, 1] value: the bets' prior
BET_RULES = ("plugin", "target")
TOLERANCE = 2.0**-40  # each end to this (the bracket's outer point: never narrower)


@dataclass
class AssistedLooks:
    """Per look (``... x looks``): the anytime-valid ends, the regression estimate and the
    fixed-n normal half-width (finite population correction), all on the [0, 1] scale."""

    lo: np.ndarray
    hi: np.ndarray
    estimate: np.ndarray
    fixed_half: np.ndarray
    residual_sd: np.ndarray


def design_matrix(covariates: np.ndarray | None, n_units: int) -> np.ndarray:
    """``N x q``: an intercept, then each covariate column standardised over the population
    (its known mean and SD); a column with missing values (NaN) gets 0 there and a missing
    indicator column beside it. Constant columns are dropped (the intercept holds them)."""
    columns = [np.ones(n_units)]
    if covariates is not None:
        cov = np.asarray(covariates, dtype=float).reshape(n_units, -1)
        for col in cov.T:
            missing = np.isnan(col)
            if missing.all():
                continue
            present = col[~missing]
            sd = present.std()
            if sd > 0:
                columns.append(np.where(missing, 0.0, (col - present.mean()) / sd))
            if missing.any() and not missing.all():
                indicator = missing.astype(float)
                columns.append((indicator - indicator.mean()) / indicator.std())
    return np.column_stack(columns)


def refit_points(n_draws: int) -> list[int]:
    """Draw counts after which the coefficients are refitted: 10, then every eighth more
    (10, 15, 20, ..., about 40 fits to 2,000 draws)."""
    points, s = [], FIRST_FIT
    while s < n_draws:
        points.append(s)
        s += max(5, s // 8)
    return points


def _fit(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE) -> tuple[np.ndarray, np.ndarray]:
    """Ridge least squares per leading row (``x``: ``... x t x q``; ``y``: ``... x t``):
    coefficients ``... x q`` and residual sums of squares ``...``."""
    q = x.shape[-1]
    penalty = ridge * np.eye(q)
    penalty[0, 0] = 0.0  # the intercept is not shrunk
    gram = np.einsum("...ti,...tj->...ij", x, x) + penalty
    beta = np.linalg.solve(gram, np.einsum("...ti,...t->...i", x, y)[..., None])[..., 0]
    resid = y - np.einsum("...ti,...i->...t", x, beta)
    return beta, np.einsum("...t,...t->...", resid, resid)


def _predictions(
    y: np.ndarray, drawn: np.ndarray, design: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per draw ``i`` (``B x T``), from the fit on the draws before it: the residual ``Z_i``,
    the mean prediction ``F_i`` over the unseen units, the largest and smallest prediction over
    the population and the residual variance ``s2_i``."""
    b, t_all = y.shape
    n, q = design.shape
    z = np.empty((b, t_all))
    f_unseen = np.empty((b, t_all))
    f_max = np.empty((b, t_all))
    f_min = np.empty((b, t_all))
    s2 = np.empty((b, t_all))
    starts = [0, *refit_points(t_all)]
    ends = [*starts[1:], t_all]
    for start, end in zip(starts, ends, strict=True):
        if start == 0:  # no fit yet: a constant prediction (cancels: the plain sequence)
            f_all = np.full((b, n), 0.5)
            var = np.full(b, PRIOR_VARIANCE)
        else:
            x_seen = design[drawn[:, :start]]
            beta, rss = _fit(x_seen, y[:, :start])
            f_all = np.clip(design @ beta.T, 0.0, 1.0).T  # B x N
            var = (PRIOR_VARIANCE + rss) / (1 + max(start - q, 1))
        f_seen = np.take_along_axis(f_all, drawn[:, :end], axis=1)
        # mean prediction over the units unseen before draw i (i = start+1 .. end)
        before = np.cumsum(f_seen, axis=1) - f_seen  # sum over draws 1 .. i-1
        left = n - np.arange(start, end, dtype=float)
        f_unseen[:, start:end] = (f_all.sum(axis=1)[:, None] - before[:, start:end]) / left
        z[:, start:end] = y[:, start:end] - f_seen[:, start:end]
        f_max[:, start:end] = f_all.max(axis=1)[:, None]
        f_min[:, start:end] = f_all.min(axis=1)[:, None]
        s2[:, start:end] = var[:, None]
    return z, f_unseen, f_max, f_min, s2


def bets(
    s2: np.ndarray,
    population: int,
    alpha: float,
    rule: str,
    target: float | None,
) -> np.ndarray:
    """The uncapped predictable bets of draws ``1 .. T`` (``... x T``) from the variances."""
    t = np.arange(1, s2.shape[-1] + 1, dtype=float)
    if rule == "plugin":
        return np.sqrt(2 * np.log(2 / alpha) / (s2 * t * np.log(t + 1)))
    if rule == "target":
        if target is None or not target > 0:
            raise ValueError("the target rule needs a positive half-width")
        return target * population / (population - t + 1) / s2
    raise ValueError(f"bet rule {rule!r}: one of {BET_RULES}")


def assisted_sequence(
    y: np.ndarray,
    drawn: np.ndarray,
    design: np.ndarray,
    looks: Sequence[int],
    alpha: float,
    rule: str = "plugin",
    target: float | None = None,
    estimates: bool = True,
    tolerance: float = TOLERANCE,
) -> AssistedLooks:
    """The covariate-assisted confidence sequence at ``looks`` (draw counts).

    ``y``: ``B x T`` (or ``T``) values in [0, 1] of the units drawn, in order; ``drawn``: their
    rows in ``design`` (the ``N x q`` matrix of ``design_matrix``, one row per population unit),
    every row at most once per order; ``target``: the half-width on the [0, 1] scale (``rule``
    ``target``)."""
    y = np.asarray(y, dtype=float)
    single = y.ndim == 1
    y2 = y[None] if single else y
    drawn2 = np.asarray(drawn)[None] if single else np.asarray(drawn)
    n = design.shape[0]
    t_all = y2.shape[1]
    looks = [int(t) for t in looks]
    if t_all > n:
        raise ValueError(f"{t_all} draws from a population of {n}")
    if drawn2.shape != y2.shape:
        raise ValueError("drawn and y differ in shape")
    if np.any(~((y2 >= 0) & (y2 <= 1))):
        raise ValueError("values must lie in [0, 1]")
    if looks != sorted(set(looks)) or not looks or not 1 <= looks[0] <= looks[-1] <= t_all:
        raise ValueError(f"looks must be increasing draw counts within 1..{t_all}: {looks}")
    z, f_unseen, f_max, f_min, s2 = _predictions(y2, drawn2, design)
    lam = bets(s2, n, alpha, rule, target)
    sums = np.cumsum(y2, axis=1)
    left = n - np.arange(t_all, dtype=float)  # N - i + 1 for draw i = 1..T
    # Z_i - c_i(m) = (Z_i + S_{i-1} / left_i + F_i) - m N / left_i = offset_i - m slope_i
    offset = z + (sums - y2) / left + f_unseen
    slope = n / left
    threshold = np.log(2 / alpha)
    b = y2.shape[0]
    lam_up, lam_down = np.empty((b, t_all)), np.empty((b, t_all))
    shape = (b, len(looks))
    lo_out, hi_out = np.empty(shape), np.empty(shape)
    est, half, sd = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    lo_run, hi_run = np.zeros(b), np.ones(b)  # intersected over every look and checkpoint
    lo_cap, hi_cap = lo_run, hi_run  # the running interval at the last checkpoint: the caps'
    from scipy.special import ndtri  # scipy only when a sequence is computed (analyze --looks)

    zq = float(ndtri(1 - alpha / 2))
    checkpoints = set(refit_points(t_all))
    capped = 0  # draws whose bets are capped so far
    for t in sorted(checkpoints | set(looks)):
        if t > capped:  # the caps of draws capped+1 .. t, from the range at the last checkpoint
            seg = slice(capped, t)
            # the largest / smallest c_i(m) over the candidates still in the range
            c_hi = (n * hi_cap[:, None] - (sums - y2)[:, seg]) / left[seg] - f_unseen[:, seg]
            c_lo = (n * lo_cap[:, None] - (sums - y2)[:, seg]) / left[seg] - f_unseen[:, seg]
            lam_up[:, seg] = np.minimum(
                lam[:, seg], THETA / np.maximum(c_hi + f_max[:, seg], CAP_FLOOR)
            )
            lam_down[:, seg] = np.minimum(
                lam[:, seg], THETA / np.maximum(1 - f_min[:, seg] - c_lo, CAP_FLOOR)
            )
            capped = t
        # the logical bounds (unseen all 0 / all 1) within the running interval: an end past
        # the running one would be cut by the intersection anyway
        floor = np.maximum(sums[:, t - 1] / n, lo_run)
        ceiling = np.minimum((sums[:, t - 1] + (n - t)) / n, hi_run)
        up = (lam_up[:, :t] * offset[:, :t], lam_up[:, :t] * slope[:t])
        down = (-lam_down[:, :t] * offset[:, :t], -lam_down[:, :t] * slope[:t])
        lo = _end(floor, ceiling, *up, threshold, True, tolerance)
        hi = _end(floor, ceiling, *down, threshold, False, tolerance)
        lo_run, hi_run = np.maximum(lo_run, lo), np.minimum(hi_run, hi)
        if t in checkpoints:  # every candidate evaluated later lies in this range
            lo_cap, hi_cap = lo_run, hi_run
        if t in looks:
            k = looks.index(t)
            lo_out[:, k], hi_out[:, k] = lo_run, hi_run
            if estimates:
                est[:, k], half[:, k], sd[:, k] = _regression_estimate(
                    y2[:, :t], drawn2[:, :t], design, zq
                )
    if single:
        return AssistedLooks(lo_out[0], hi_out[0], est[0], half[0], sd[0])
    return AssistedLooks(lo_out, hi_out, est, half, sd)


def _end(
    floor: np.ndarray,
    ceiling: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    threshold: float,
    lower: bool,
    tolerance: float = TOLERANCE,
) -> np.ndarray:
    """The lower (``lower``: K+) or upper (K-) end of the candidates of ``[floor, ceiling]``
    whose log capital ``sum log(1 + a_i - m b_i)`` stays below ``threshold`` (it falls with
    ``m`` for K+ and rises for K-, so the kept set is an interval). The bracket's outer point
    is returned: never narrower than the exact end. An empty bracket (``floor > ceiling``: the
    running interval is already empty) is returned as it is."""

    def kept(m: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):  # only past the range: see above
            return np.log1p(a - m[:, None] * b).sum(axis=1) < threshold

    outer, inner = (floor, ceiling) if lower else (ceiling, floor)
    width = float(np.max(np.abs(ceiling - floor), initial=0.0))
    steps = int(np.ceil(np.log2(width / tolerance))) if width > tolerance else 0
    whole = kept(outer)
    for _ in range(steps):
        mid = (outer + inner) / 2
        keep = kept(mid)
        inner = np.where(keep, mid, inner)
        outer = np.where(keep, outer, mid)
    return np.where(whole, floor if lower else ceiling, outer)


def _regression_estimate(
    y: np.ndarray, drawn: np.ndarray, design: np.ndarray, zq: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The regression (difference) estimator of the population mean from the ``t`` draws of
    each row (fitted on all of them), its fixed-n normal half-width with the finite population
    correction and the residual SD (predictions clipped to [0, 1])."""
    n, q = design.shape
    t = y.shape[1]
    q_used = q if t > q + 1 else 1
    x_seen = design[drawn][..., :q_used]
    beta, _ = _fit(x_seen, y, 1e-9)  # the regression estimator: least squares
    f_all = np.clip(design[:, :q_used] @ beta.T, 0.0, 1.0).T
    resid = y - np.take_along_axis(f_all, drawn, axis=1)
    estimate = np.clip(f_all.mean(axis=1) + resid.mean(axis=1), 0.0, 1.0)
    if t < 2:
        nan = np.full(y.shape[0], np.nan)
        return estimate, nan, nan
    dof = max(t - q_used, 1)
    sd = np.sqrt(((resid - resid.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) / dof)
    fpc = np.sqrt((n - t) / (n - 1)) if n > 1 else 0.0
    return estimate, zq * sd / np.sqrt(t) * fpc, sd
