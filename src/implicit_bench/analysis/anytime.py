"""Anytime-valid confidence sequences for a finite population's mean, sampled without replacement.

The units of a unit set are rendered and judged in a fixed, uniformly random order; after
``t`` of the population's ``N`` units, the mean ``m`` of a bounded per-unit value over all
``N`` is covered by the hedged betting confidence sequence of Waudby-Smith and Ramdas
("Confidence sequences for sampling without replacement", NeurIPS 2020, Section 3) uniformly
over every ``t`` with probability at least ``1 - alpha``, so a user may look after every round
and stop when an interval is narrow enough without losing the level.

For a candidate mean ``m`` (values rescaled to [0, 1]), the mean of the units not yet seen
before the i-th draw is ``m_i(m) = (N m - S_{i-1}) / (N - i + 1)``; two capital processes bet
on the draws exceeding it or falling short of it,
``K+_t(m) = prod (1 + l_i (x_i - m_i(m)))`` and ``K-_t(m) = prod (1 - l_i (x_i - m_i(m)))``,
with the predictable plug-in bet ``l_i = min(c, sqrt(2 log(2 / alpha) / (s2_{i-1} i log(i+1))))``
(``s2``: the paper's regularised running variance, ``c = 1/2``). ``m`` is excluded once
``K+ / 2 >= 1 / alpha`` or ``K- / 2 >= 1 / alpha`` (the hedged process, ``theta = 1/2``). The
bet does not depend on ``m``, so ``K+`` falls and ``K-`` rises with ``m`` and the set left is an
interval, whose ends are found by bisection at each look. It is intersected with the values the
unseen units can still give (``[S_t, S_t + N - t] / N``: at ``t = N`` the interval is the
population mean itself) and with the interval of every earlier look (the running
intersection; still valid, since the coverage holds at every look at once).

Validity needs the order to be a uniformly random permutation of the population, drawn
independently of the values (``triplets.subset.random_order``); a stratified order would need
stratified sequences (docs/analysis.md, "Anytime-valid intervals").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

BET_CAP = 0.5  # c: the largest bet, below 1 so every factor stays positive
BISECTIONS = 48  # each end to 2^-48 of the value range


def bets(x: np.ndarray, alpha: float, cap: float = BET_CAP) -> np.ndarray:
    """The predictable plug-in bets of draws ``x`` (``... x T``, in [0, 1]): bet ``i`` uses only
    ``x_1 .. x_{i-1}`` (Waudby-Smith & Ramdas 2020, with their regularised estimates
    ``mu_i = (1/2 + sum x) / (i + 1)``, ``s2_i = (1/4 + sum (x - mu_{i-1})^2) / (i + 1)``)."""
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    start = np.ones(x.shape[:-1] + (1,))
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    mu_before = np.concatenate([0.5 * start, mu[..., :-1]], axis=-1)
    s2 = (0.25 + np.cumsum((x - mu_before) ** 2, axis=-1)) / (t + 1)
    s2_before = np.concatenate([0.25 * start, s2[..., :-1]], axis=-1)
    return np.minimum(cap, np.sqrt(2 * np.log(2 / alpha) / (s2_before * t * np.log(t + 1))))


def confidence_sequence(
    x: np.ndarray, population: int, looks: Sequence[int], alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ends (``... x len(looks)``) of the confidence sequence for the mean of
    ``population`` values in [0, 1] after the first ``looks[k]`` draws of ``x`` (``... x T``;
    leading axes: independent orders or estimands), intersected over the looks."""
    x = np.asarray(x, dtype=float)
    n_draws = x.shape[-1]
    looks = [int(t) for t in looks]
    if n_draws > population:
        raise ValueError(f"{n_draws} draws from a population of {population}")
    if np.any(~((x >= 0) & (x <= 1))):
        raise ValueError("values must lie in [0, 1]")
    if looks != sorted(set(looks)) or not looks or not 1 <= looks[0] <= looks[-1] <= n_draws:
        raise ValueError(f"looks must be increasing draw counts within 1..{n_draws}: {looks}")
    lam = bets(x, alpha)
    sums = np.cumsum(x, axis=-1)
    before = np.concatenate([np.zeros(x.shape[:-1] + (1,)), sums[..., :-1]], axis=-1)
    left = population - np.arange(n_draws, dtype=float)  # N - i + 1 for draw i = 1..T
    threshold = np.log(2 / alpha)
    lo_out = np.empty(x.shape[:-1] + (len(looks),))
    hi_out = np.empty_like(lo_out)
    lo_run, hi_run = np.zeros(x.shape[:-1]), np.ones(x.shape[:-1])
    for k, t in enumerate(looks):
        draws = (x[..., :t], lam[..., :t], before[..., :t], left[:t], population)
        floor = sums[..., t - 1] / population  # the unseen units all 0 ...
        ceiling = (sums[..., t - 1] + (population - t)) / population  # ... or all 1
        lo = _end(floor, ceiling, lambda m, d=draws: _log_capital(m, *d, 1) < threshold, True)
        hi = _end(floor, ceiling, lambda m, d=draws: _log_capital(m, *d, -1) < threshold, False)
        lo_run, hi_run = np.maximum(lo_run, lo), np.minimum(hi_run, hi)
        lo_out[..., k], hi_out[..., k] = lo_run, hi_run
    return lo_out, hi_out


def _log_capital(
    m: np.ndarray,
    x: np.ndarray,
    lam: np.ndarray,
    before: np.ndarray,
    left: np.ndarray,
    population: int,
    sign: int,
) -> np.ndarray:
    """log K+ (``sign`` 1) or log K- (-1) of the candidate means ``m`` (one per row of ``x``):
    each draw bets on its distance from the mean of the units not yet seen."""
    remaining_mean = (population * m[..., None] - before) / left
    return np.log1p(sign * lam * (x - remaining_mean)).sum(axis=-1)


def _end(
    floor: np.ndarray,
    ceiling: np.ndarray,
    kept: Callable[[np.ndarray], np.ndarray],
    lower: bool,
) -> np.ndarray:
    """The lower (``lower``) or upper end of the kept part of ``[floor, ceiling]``, where
    ``kept`` holds on one side of the end only; the bracket's outer point is returned, so the
    interval is never narrower than the exact one."""
    outer, inner = (floor, ceiling) if lower else (ceiling, floor)
    whole = kept(outer)  # this side kept up to the logical bound
    for _ in range(BISECTIONS):
        mid = (outer + inner) / 2
        keep = kept(mid)
        inner = np.where(keep, mid, inner)
        outer = np.where(keep, outer, mid)
    return np.where(whole, floor if lower else ceiling, outer)
