"""When the Judge Acts: a judge that selects one image from a fixed pool, audited as a decision.

A pool p has m_p candidates with reference utilities h_p1..h_pm (human ratings in the paper, the
simulated world's planted utilities here). The judge chooses one candidate under each of K
presentation orders. For a policy that acts on p and returns candidate c (§3, eqs. 1-3):

- regret R_p = h*_p - h_pc (h*_p = max_i h_pi), gain over exact random G_p = h_pc - mean_i h_pi,
  below-mean event B_p = 1[h_pc < mean_i h_pi - margin]; best-rated share counts ties;
- random choice: regret h* - mean h, gain 0, below-mean *probability* = share of candidates below
  the mean (App. O: the indicator of the expected utility would be identically zero);
- every average is over the prompts the policy acts on, beside random choice on those prompts;
- worst-group regret = max_g R_g and disparity = max_g R_g - min_g R_g over the groups with an
  accepted prompt (groups without one: zero coverage, not zero risk);
- intervals: prompt-level bootstrap (a prompt's candidates and all its order calls travel
  together), every statistic (worst group included) recomputed inside each resample; the
  worst-group statistics resample within each group (stratified, App. O); BMR of a
  deterministic policy also gets its Wilson interval (§4.5).

Arrays: ``utilities`` (P, M) with NaN beyond m_p; ``choices`` (P, K) candidate index chosen
under order k (-1: no valid answer, an abstention); ``slots`` (P, K) the presentation slot of
that choice (0 = A); ``seconds`` (P, K) the call's wall time. Candidate index = canonical
identifier order, so the majority's ties break to the lowest index (§4.4).

Optional, for the secondary outcomes and breakdowns (audits/selection_outcomes.py,
audits/selection_breakdown.py): ``outcomes`` {name: (P, M)} per-candidate secondary ratings in
[0, 1] (the cultural-error rates ``stereotype``, ``missing_explicit``, ``missing_implicit``, lower
is better; ``quality``, ``satisfaction``, higher is better); ``generators`` (P, M) each
candidate's generator; ``categories`` (P,) each pool's category; ``disagreement`` (P,) the pool's
annotator disagreement; ``positions`` (P, K, M) the slot of candidate i under order k (-1: not
shown); ``status`` (P, K) each call's outcome (``exact``, ``recovered``, ``parse_fail``,
``runtime_fail``; empty where no call was planned) and ``json_ok`` (P, K) whether its raw text
was JSON; ``pool_ids`` (P,) the pools' identifiers (a decisions file's ``pool_id``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from implicit_bench._util.closed_form import share, wilson_interval
from implicit_bench.protocol.estimate import estimate_json

# gate thresholds declared by the paper (§3, §4.4): the majority vote always acts (tau = 1/K),
# two-of-three q >= 2/3, unanimity q = 1
GATES: dict[str, float] = {"majority": 0.0, "two_of_three": 2 / 3, "unanimity": 1.0}
EPS = 1e-9
SLOTS = "ABCDEFGH"


@dataclass(frozen=True)
class Pools:
    """Candidate pools with their utilities, the judge's choices and the calls' timings."""

    utilities: np.ndarray
    choices: np.ndarray
    groups: np.ndarray
    slots: np.ndarray | None = None
    seconds: np.ndarray | None = None
    outcomes: dict[str, np.ndarray] | None = None
    generators: np.ndarray | None = None
    categories: np.ndarray | None = None
    disagreement: np.ndarray | None = None
    positions: np.ndarray | None = None
    status: np.ndarray | None = None
    json_ok: np.ndarray | None = None
    pool_ids: np.ndarray | None = None

    def __post_init__(self) -> None:
        u = np.asarray(self.utilities, dtype=float)
        c = np.asarray(self.choices, dtype=np.int64)
        if u.ndim != 2 or c.ndim != 2 or len(u) != len(c) or len(self.groups) != len(u):
            raise ValueError("utilities (P, M), choices (P, K) and groups (P,) must align")
        m = self.sizes
        if (c >= m[:, None]).any():
            raise ValueError("a choice names a candidate beyond its pool")

    @property
    def sizes(self) -> np.ndarray:
        return np.sum(~np.isnan(np.asarray(self.utilities, dtype=float)), axis=1)

    @property
    def n_orders(self) -> int:
        return int(np.asarray(self.choices).shape[1])


# ---------------------------------------------------------------------------------- policies


def agreement(choices: np.ndarray, m_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pool: all calls parsed, q = (count of the most frequent choice) / K, and that choice
    (ties to the lowest candidate index: canonical identifier order)."""
    choices = np.asarray(choices, dtype=np.int64)
    parsed = (choices >= 0).all(axis=1)
    counts = np.stack([(choices == i).sum(axis=1) for i in range(m_max)], axis=1)
    top = counts.max(axis=1)
    plurality = np.argmax(counts, axis=1)  # argmax returns the first (lowest index) maximum
    q = top / choices.shape[1]
    return parsed, q, np.where(parsed, plurality, -1)


def policy(choices: np.ndarray, m_max: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(chosen candidate (P,), acts (P,)) of a policy: ``direct`` (the order-1 call), or a gate of
    ``GATES`` (acts when every call parsed and q >= tau, returns the plurality choice)."""
    choices = np.asarray(choices, dtype=np.int64)
    if name == "direct":
        return choices[:, 0], choices[:, 0] >= 0
    return threshold_policy(choices, m_max, GATES[name])


def threshold_policy(choices: np.ndarray, m_max: int, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """Acts when every call parsed and q >= tau; returns the plurality choice."""
    parsed, q, plurality = agreement(choices, m_max)
    acts = parsed & (q >= tau - EPS)
    return np.where(acts, plurality, -1), acts


# ------------------------------------------------------------------------- per-pool outcomes


def pool_outcomes(
    utilities: np.ndarray, chosen: np.ndarray, margin: float = 0.0
) -> dict[str, np.ndarray]:
    """Per pool (NaN where the policy abstains): utility of the chosen image, regret, gain,
    below-mean event, best-rated, and random choice's regret, below-mean probability and
    best-rated probability on the same pool."""
    u = np.asarray(utilities, dtype=float)
    chosen = np.asarray(chosen, dtype=np.int64)
    best = np.nanmax(u, axis=1)
    mean = np.nanmean(u, axis=1)
    acts = chosen >= 0
    h = np.where(acts, u[np.arange(len(u)), np.where(acts, chosen, 0)], np.nan)
    valid = ~np.isnan(u)
    with np.errstate(invalid="ignore"):
        below_random = np.sum(valid & (u < (mean - margin)[:, None]), axis=1) / valid.sum(axis=1)
        best_random = np.sum(valid & (u >= best[:, None] - EPS), axis=1) / valid.sum(axis=1)
        return {
            "utility": h,
            "regret": best - h,
            "gain": h - mean,
            "below_mean": np.where(acts, (h < mean - margin).astype(float), np.nan),
            "best_rated": np.where(acts, (h >= best - EPS).astype(float), np.nan),
            "random_utility": mean,
            "random_regret": best - mean,
            "random_below_mean": below_random,
            "random_best_rated": best_random,
            "range": best - np.nanmin(u, axis=1),
        }


OUTCOMES = ("utility", "regret", "gain", "below_mean", "best_rated")
RANDOM_OUTCOMES = ("random_utility", "random_regret", "random_below_mean", "random_best_rated")


def _means(w: np.ndarray, x: np.ndarray, acts: np.ndarray) -> np.ndarray:
    """Mean of x over acted pools under pool multiplicities ``w`` (rows: resamples)."""
    xa = np.where(acts, np.nan_to_num(x), 0.0)
    den = w @ acts.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (w @ xa) / np.where(den > 0, den, 1), np.nan)


def group_regrets(
    w_by_group: dict[Any, np.ndarray], regret: np.ndarray, acts: np.ndarray, groups: np.ndarray
) -> np.ndarray:
    """(R, G) mean regret per group under each group's own multiplicities (R resamples; one
    row of ones for the point estimate). NaN for a group without an acted prompt."""
    cols = []
    for g, w in w_by_group.items():
        mask = groups == g
        cols.append(_means(np.atleast_2d(w), regret[mask], acts[mask]))
    return np.stack(cols, axis=1)


def worst_and_disparity(per_group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    defined = ~np.isnan(per_group).all(axis=1)
    filled = np.where(np.isnan(per_group), -np.inf, per_group)
    worst = np.where(defined, filled.max(axis=1), np.nan)
    lowest = np.where(defined, np.where(np.isnan(per_group), np.inf, per_group).min(axis=1), np.nan)
    return worst, worst - lowest


def policy_report(
    pools: Pools,
    chosen: np.ndarray,
    acts: np.ndarray,
    boot: Any = None,
    stream: str = "selection",
    *,
    margin: float = 0.0,
    sensitivity_margin: float | None = 0.05,
    confidence: float = 0.95,
    group_weights: dict[str, np.ndarray] | None = None,
    near_best_delta: float = 0.05,
) -> dict[str, Any]:
    """The outcomes of one policy on the pools it acts on, beside random choice on the same
    pools, with prompt-level bootstrap intervals recomputed per resample (``boot``: the analysis
    ``Bootstrap``; None: point values only). ``group_weights``: a dict the stratified resamples
    of the groups are kept in between calls on the same pools (the same draws either way).
    With ``pools.outcomes``: the secondary outcomes (selection_outcomes.secondary_outcomes);
    always: Table 6's outcome definitions (``near_best_delta``, the sensitivity margin)."""
    from implicit_bench.audits.image_pick_outcomes import outcome_definitions, secondary_outcomes

    u = np.asarray(pools.utilities, dtype=float)
    groups = np.asarray(pools.groups, dtype=object)
    n = len(u)
    out_ = pool_outcomes(u, chosen, margin)
    acts = np.asarray(acts, dtype=bool)
    kept = int(acts.sum())
    ones = np.ones((1, n))
    names = (*OUTCOMES, *RANDOM_OUTCOMES)
    point = {k: float(_means(ones, out_[k], acts)[0]) for k in names}
    point["below_mean_minus_random"] = point["below_mean"] - point["random_below_mean"]
    point["coverage"] = kept / n if n else float("nan")
    reps: dict[str, np.ndarray] = {}
    if boot is not None and n:
        w = boot.weights(n, stream)
        # one product for every outcome: sums over the acted pools, then one denominator
        cols = np.column_stack([np.where(acts, np.nan_to_num(out_[k]), 0.0) for k in names])
        den = w @ acts.astype(float)
        num = w @ cols
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(den[:, None] > 0, num / np.where(den > 0, den, 1)[:, None], np.nan)
        for j, k in enumerate(names):
            reps[k] = ratio[:, j]
        reps["below_mean_minus_random"] = reps["below_mean"] - reps["random_below_mean"]
        reps["coverage"] = (w @ acts.astype(float)) / n

    def est(name: str) -> dict[str, Any]:
        if name in reps:
            return boot.interval(point[name], reps[name], f"{stream}/{name}", n)
        return estimate_json(point[name], None, n, None)

    report: dict[str, Any] = {
        "pools": n,
        "acted": kept,
        "coverage": est("coverage"),
        "mean_utility": est("utility"),
        "regret": est("regret"),
        "gain_over_random": est("gain"),
        "below_mean_rate": est("below_mean"),
        "below_mean_rate_wilson": estimate_json(
            point["below_mean"],
            wilson_interval(int(np.nansum(out_["below_mean"][acts])), kept, confidence),
            kept,
            confidence,
        ),
        "best_rated_share": est("best_rated"),
        "random": {
            "mean_utility": est("random_utility"),
            "regret": est("random_regret"),
            "below_mean_rate": est("random_below_mean"),
            "best_rated_share": est("random_best_rated"),
        },
        "below_mean_minus_random": est("below_mean_minus_random"),
        "margin": margin,
    }
    if sensitivity_margin is not None and sensitivity_margin != margin:
        alt = pool_outcomes(u, chosen, sensitivity_margin)
        report["sensitivity"] = {
            "margin": sensitivity_margin,
            "below_mean_rate": float(_means(ones, alt["below_mean"], acts)[0]),
            "random_below_mean_rate": float(_means(ones, alt["random_below_mean"], acts)[0]),
        }
    # worst-group regret and disparity, recomputed in each stratified resample
    labels = sorted({str(g) for g in groups})
    gkey = np.array([str(g) for g in groups], dtype=object)
    point_w = {g: np.ones(int((gkey == g).sum())) for g in labels}
    per_group = group_regrets(point_w, out_["regret"], acts, gkey)[0]
    rnd_group = group_regrets(point_w, out_["random_regret"], acts, gkey)[0]
    worst, disp = worst_and_disparity(per_group[None, :])
    by_group = {
        g: {
            "pools": int((gkey == g).sum()),
            "acted": int(acts[gkey == g].sum()),
            "coverage": share(int(acts[gkey == g].sum()), int((gkey == g).sum())),
            "regret": None if np.isnan(per_group[j]) else float(per_group[j]),
            "random_regret": None if np.isnan(rnd_group[j]) else float(rnd_group[j]),
        }
        for j, g in enumerate(labels)
    }
    worst_est = estimate_json(float(worst[0]), None, n, None)
    disp_est = estimate_json(float(disp[0]), None, n, None)
    if boot is not None and n and kept:
        cache = {} if group_weights is None else group_weights
        for g in labels:
            if g not in cache:
                cache[g] = boot.weights(int((gkey == g).sum()), f"{stream}/group/{g}")
        w_g = {g: cache[g] for g in labels}
        reps_g = group_regrets(w_g, out_["regret"], acts, gkey)
        w_rep, d_rep = worst_and_disparity(reps_g)
        worst_est = boot.interval(float(worst[0]), w_rep, f"{stream}/worst_group", n)
        disp_est = boot.interval(float(disp[0]), d_rep, f"{stream}/disparity", n)
    if pools.outcomes:
        report["secondary"] = secondary_outcomes(u, pools.outcomes, chosen, acts, boot, stream)
    report["outcome_definitions"] = outcome_definitions(
        u,
        chosen,
        acts,
        near_best_delta,
        0.05 if sensitivity_margin is None else sensitivity_margin,
        (pools.outcomes or {}).get("satisfaction"),
    )
    report["worst_group_regret"] = worst_est
    report["worst_group"] = (
        None if np.all(np.isnan(per_group)) else labels[int(np.nanargmax(per_group))]
    )
    report["group_disparity"] = disp_est
    report["by_group"] = by_group
    return report


def _difference(
    pools: Pools, chosen: np.ndarray, acts: np.ndarray, boot: Any, stream: str, margin: float
) -> dict[str, Any]:
    """Selective regret minus matched random regret on the kept prompts (paired = -gain)."""
    u = np.asarray(pools.utilities, dtype=float)
    out_ = pool_outcomes(u, chosen, margin)
    diff = out_["regret"] - out_["random_regret"]
    n = len(u)
    value = float(_means(np.ones((1, n)), diff, acts)[0])
    if boot is None or not n:
        return estimate_json(value, None, n, None)
    return boot.interval(value, _means(boot.weights(n, stream), diff, acts), stream, n)


# --------------------------------------------------------------------- order diagnostics


def order_entropy(choices: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """H_p = -sum_i f_pi log f_pi / log m_p over the K orders' choices (App. O); NaN unless every
    call parsed. With K = 3 calls it reaches 1 for three candidates, at most log 3 / log 4 for
    four: not comparable across pool sizes."""
    choices = np.asarray(choices, dtype=np.int64)
    k = choices.shape[1]
    m_max = int(max(sizes.max(), choices.max() + 1)) if len(choices) else 1
    f = np.stack([(choices == i).sum(axis=1) for i in range(m_max)], axis=1) / k
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(f > 0, f * np.log(np.where(f > 0, f, 1)), 0.0)
        h = -terms.sum(axis=1) / np.log(sizes)
    h = h + 0.0
    h[~(choices >= 0).all(axis=1)] = np.nan
    return h


def near_ties(utilities: np.ndarray, delta: float) -> np.ndarray:
    """Per pool, how many candidates are rated within ``delta`` of the best (1 = a clear best)."""
    u = np.asarray(utilities, dtype=float)
    best = np.nanmax(u, axis=1)
    with np.errstate(invalid="ignore"):
        return np.sum(u >= (best - delta - EPS)[:, None], axis=1)


def tertiles(values: np.ndarray) -> np.ndarray:
    """low / mid / high by the 1/3 and 2/3 quantiles of ``values`` (numpy's linear rule); a value
    on a boundary goes to the lower stratum."""
    q1, q2 = np.quantile(values, [1 / 3, 2 / 3])
    return np.where(values <= q1 + EPS, "low", np.where(values <= q2 + EPS, "mid", "high"))


def _flip_block(flip: np.ndarray, mask: np.ndarray, confidence: float) -> dict[str, Any]:
    k, n = int(flip[mask].sum()), int(mask.sum())
    return estimate_json(share(k, n), wilson_interval(k, n, confidence), n, confidence)


def order_diagnostics(
    pools: Pools, near_tie_delta: float = 0.05, confidence: float = 0.95
) -> dict[str, Any]:
    """Slot shares against uniform choice given the pool sizes, the order-flip rate (overall, by
    tertile of the pool's rating range and by number of near-ties, T17) and H_p."""
    from scipy.special import chdtrc

    choices = np.asarray(pools.choices, dtype=np.int64)
    sizes = pools.sizes
    parsed = (choices >= 0).all(axis=1)
    flip = parsed & (choices != choices[:, :1]).any(axis=1)
    out: dict[str, Any] = {
        "orders": pools.n_orders,
        "pools_all_parsed": int(parsed.sum()),
        "flip_rate": _flip_block(flip, parsed, confidence),
    }
    if pools.slots is not None:
        slots = np.asarray(pools.slots, dtype=np.int64)
        valid = slots >= 0
        m_calls = np.broadcast_to(sizes[:, None], slots.shape)[valid]
        s = slots[valid]
        n_slots = int(sizes.max())
        counts = np.array([(s == j).sum() for j in range(n_slots)], dtype=float)
        expected = np.array([np.sum((j < m_calls) / m_calls) for j in range(n_slots)])
        calls = int(valid.sum())
        out["calls"] = int(slots.size)
        out["valid_calls"] = calls
        out["slot_shares"] = {SLOTS[j]: share(int(counts[j]), calls) for j in range(n_slots)}
        out["uniform_shares"] = {
            SLOTS[j]: float(expected[j] / calls) if calls else None for j in range(n_slots)
        }
        out["first_slot_share"] = estimate_json(
            share(int(counts[0]), calls),
            wilson_interval(int(counts[0]), calls, confidence),
            calls,
            confidence,
        )
        if calls:
            # Pearson's goodness of fit against the uniform-given-pool-size counts (scipy.stats'
            # chisquare arithmetic, without importing scipy.stats)
            exp = expected * counts.sum() / expected.sum()
            keep = exp > 0
            chi2 = float(np.sum((counts[keep] - exp[keep]) ** 2 / exp[keep]))
            out["chi_square"] = {
                "chi2": chi2,
                "dof": int(keep.sum()) - 1,
                "p_value": float(chdtrc(int(keep.sum()) - 1, chi2)),
            }
        out["slot_shares_by_pool_size"] = {
            str(int(m)): {
                SLOTS[j]: share(int((slots[sizes == m] == j).sum()), int(valid[sizes == m].sum()))
                for j in range(int(m))
            }
            for m in np.unique(sizes)
        }
    h = order_entropy(choices, sizes)
    out["order_entropy"] = {
        "note": "normalised by log m_p; not comparable across pool sizes (App. O)",
        "by_pool_size": {
            str(int(m)): {
                "pools": int((parsed & (sizes == m)).sum()),
                "mean": float(np.nanmean(h[sizes == m])) if (parsed & (sizes == m)).any() else None,
                "max_reachable": float(min(np.log(pools.n_orders), np.log(m)) / np.log(m)),
            }
            for m in np.unique(sizes)
        },
        "mean": float(np.nanmean(h)) if parsed.any() else None,
    }
    u = np.asarray(pools.utilities, dtype=float)
    rng = np.nanmax(u, axis=1) - np.nanmin(u, axis=1)
    strata = tertiles(rng[parsed]) if parsed.any() else np.array([], dtype=object)
    full = np.full(len(u), "", dtype=object)
    full[parsed] = strata
    out["flip_by_range_tertile"] = {
        t: {
            "range": [float(rng[full == t].min()), float(rng[full == t].max())]
            if (full == t).any()
            else None,
            "flip_rate": _flip_block(flip, full == t, confidence),
        }
        for t in ("low", "mid", "high")
    }
    ties = near_ties(u, near_tie_delta)
    out["near_tie_delta"] = near_tie_delta
    out["flip_by_near_ties"] = {
        str(int(t)): _flip_block(flip, parsed & (ties == t), confidence)
        for t in np.unique(ties[parsed])
    }
    return out


def timing(pools: Pools) -> dict[str, Any] | None:
    """Seconds per call, and per prompt for one order against all K (T16)."""
    if pools.seconds is None:
        return None
    sec = np.asarray(pools.seconds, dtype=float)
    one = sec[:, 0]
    allk = sec.sum(axis=1)
    return {
        "calls": int(np.isfinite(sec).sum()),
        "median_s_per_call": float(np.nanmedian(sec)),
        "mean_s_per_call": float(np.nanmean(sec)),
        "one_order_s_per_prompt": float(np.nanmean(one)),
        f"{pools.n_orders}_order_s_per_prompt": float(np.nanmean(allk)),
        "ratio": float(np.nanmean(allk) / np.nanmean(one)) if np.nanmean(one) > 0 else None,
        "one_order_hours": float(np.nansum(one) / 3600),
        f"{pools.n_orders}_order_hours": float(np.nansum(allk) / 3600),
    }


def selection_audit(
    pools: Pools,
    boot: Any = None,
    stream: str = "selection",
    margin: float = 0.0,
    sensitivity_margin: float | None = 0.05,
    near_tie_delta: float = 0.05,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Every policy (direct order-1 choice, majority vote, 2-of-3 and unanimity gates; the
    gates of K orders with q = count / K), the oracle and random choice, with the gates' rejected
    prompts, order diagnostics and timing (the breakdowns: audits/selection_breakdown.py)."""
    u = np.asarray(pools.utilities, dtype=float)
    m_max = u.shape[1]
    policies: dict[str, Any] = {}
    kw = {
        "margin": margin,
        "sensitivity_margin": sensitivity_margin,
        "confidence": confidence,
        "group_weights": {},
        "near_best_delta": near_tie_delta,
    }
    direct_choice, direct_acts = policy(pools.choices, m_max, "direct")
    for name in ("direct", *GATES):
        chosen, acts = policy(pools.choices, m_max, name)
        block = policy_report(pools, chosen, acts, boot, f"{stream}", **kw)
        if name != "direct":
            block["threshold"] = GATES[name]
            # a gate is audited on the prompts it rejects too: the direct policy there
            rejected = direct_acts & ~acts
            block["direct_on_rejected"] = policy_report(
                pools, direct_choice, rejected, boot, f"{stream}", **kw
            )
            block["direct_on_kept"] = policy_report(
                pools, direct_choice, direct_acts & acts, boot, f"{stream}", **kw
            )
        policies[name] = block
    # risk-coverage operating points q >= k/K (Table 22: 1/3..3/3, 1/4..4/4)
    k_n = pools.n_orders
    rc = []
    for k in range(1, k_n + 1):
        chosen, acts = threshold_policy(pools.choices, m_max, k / k_n)
        r = policy_report(pools, chosen, acts, boot, f"{stream}", **kw)
        rc.append(
            {
                "threshold": f"{k}/{k_n}",
                "kept": r["acted"],
                "coverage": r["coverage"],
                "regret": r["regret"],
                "random_regret": r["random"]["regret"],
                "regret_minus_random": _difference(pools, chosen, acts, boot, stream, margin),
            }
        )
    oracle = np.nanargmax(np.where(np.isnan(u), -np.inf, u), axis=1)
    policies["oracle"] = policy_report(pools, oracle, np.ones(len(u), bool), boot, stream, **kw)
    return {
        "pools": len(u),
        "pool_sizes": {str(int(m)): int((pools.sizes == m).sum()) for m in np.unique(pools.sizes)},
        "policies": policies,
        "risk_coverage": rc,
        "orders": order_diagnostics(pools, near_tie_delta, confidence),
        "timing": timing(pools),
    }


def cross_model_gate(
    first: Pools,
    second: Pools,
    boot: Any = None,
    stream: str = "selection",
    margin: float = 0.0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The cross-model gate (§3, §5.3): acts when two judges make the same order-1 choice on the
    same pools, and returns it; reported like the order gates (kept, and the first judge on the
    prompts it rejects), with the second judge's direct policy and the agreement rate."""
    if first.utilities.shape != second.utilities.shape or not np.allclose(
        first.utilities, second.utilities, equal_nan=True
    ):
        raise ValueError("the cross-model gate needs both judges on the same pools")
    if (
        first.pool_ids is not None
        and second.pool_ids is not None
        and list(first.pool_ids) != list(second.pool_ids)
    ):
        raise ValueError("the cross-model gate needs both judges on the same pools (pool_id)")
    m_max = first.utilities.shape[1]
    c1, a1 = policy(first.choices, m_max, "direct")
    c2, a2 = policy(second.choices, m_max, "direct")
    both = a1 & a2
    acts = both & (c1 == c2)
    kw = {"margin": margin, "sensitivity_margin": None, "confidence": confidence}
    kw["group_weights"] = {}
    return {
        "agreement": share(int(acts.sum()), int(both.sum())),
        "gate": policy_report(first, np.where(acts, c1, -1), acts, boot, stream, **kw),
        "first_on_rejected": policy_report(first, c1, a1 & ~acts, boot, stream, **kw),
        "second_on_kept": policy_report(second, c2, acts, boot, stream, **kw),
        "second_on_rejected": policy_report(second, c2, a2 & ~acts, boot, stream, **kw),
        "second_direct": policy_report(second, c2, a2, boot, stream, **kw),
    }


def scorer_report(
    pools: Pools,
    chosen: np.ndarray,
    boot: Any = None,
    stream: str = "selection",
    margin: float = 0.0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """A content-only scorer's picks (one per pool, the same in every order: §5.4's CLIP
    baseline) on the judge's pools, with its gain minus the judge's order-1 gain, paired on the
    pools where both act (the same resamples)."""
    u = np.asarray(pools.utilities, dtype=float)
    chosen = np.asarray(chosen, dtype=np.int64)
    acts = chosen >= 0
    kw = {"margin": margin, "sensitivity_margin": None, "confidence": confidence}
    report = policy_report(pools, chosen, acts, boot, stream, group_weights={}, **kw)
    judge, judge_acts = policy(pools.choices, u.shape[1], "direct")
    both = acts & judge_acts
    diff = pool_outcomes(u, chosen, margin)["gain"] - pool_outcomes(u, judge, margin)["gain"]
    n = len(u)
    value = float(_means(np.ones((1, n)), diff, both)[0])
    if boot is None or not n:
        report["gain_minus_judge"] = estimate_json(value, None, n, None)
    else:
        reps = _means(boot.weights(n, stream), diff, both)
        report["gain_minus_judge"] = boot.interval(value, reps, f"{stream}/scorer_diff", n)
    report["agreement_with_judge"] = share(int((both & (chosen == judge)).sum()), int(both.sum()))
    return report
