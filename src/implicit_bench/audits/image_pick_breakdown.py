"""When the Judge Acts' breakdowns of a selection audit (App. C, G, I, J, L).

- Generators (Tables 4, 21): each generator's images and mean utility, the share of valid calls
  (all orders pooled) that pick its images against the share uniform choice given the pool
  sizes would give; and by presentation slot, its choice rate per presentation.
- Stereotype decomposition by the chosen image's generator (Table 19): choice share against
  uniform, the generator's mean stereotype rating, its mean within-pool deviation (rating minus
  its pool's mean), the stereotype difference from random when it is chosen, and the contribution
  share x difference (the contributions sum to the overall difference).
- Near-tie vs unique best (Table 20): pools where several candidates tie for the best utility
  against those with one best, for the direct policy and the oracle.
- Strata (Tables 8, 9, 14 lower half): per country group or category the direct policy's regret,
  gain, BMR, the unanimity gate's kept prompts and regret, the first-slot share against uniform
  and the order-flip rate.
- Annotation consensus (Table 14): pools split at the median annotator disagreement (high
  consensus: strictly below the median), and the unique-best pools, for the direct policy and the
  unanimity gate.
- Output validity (Table 10): calls by outcome (exact schema, recovered, parse failure, runtime
  failure), non-JSON answers and inference hours.

The subsets reuse ``policy_report`` with the policy's acts restricted to the subset: the same
prompt-level resamples as the main estimates (a ratio over the subset's pools per resample).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from implicit_bench._util.closed_form import share
from implicit_bench.audits.image_pick import SLOTS, Pools, policy, policy_report
from implicit_bench.protocol.estimate import estimate_json

EPS = 1e-9
STATUSES = ("exact", "recovered", "parse_fail", "runtime_fail")


def compact(report: dict[str, Any]) -> dict[str, Any]:
    """The columns of the papers' subset tables from one ``policy_report``."""
    row = {
        "n": report["acted"],
        "coverage": report["coverage"],
        "regret": report["regret"],
        "random_regret": report["random"]["regret"],
        "gain_over_random": report["gain_over_random"],
        "below_mean_rate": report["below_mean_rate"],
        "random_below_mean_rate": report["random"]["below_mean_rate"],
        "best_rated_share": report["best_rated_share"],
    }
    secondary = report.get("secondary", {})
    for name, block in secondary.items():
        if name != "bonferroni":
            row[f"delta_{name}"] = block["difference"]
    return row


def _report(pools: Pools, chosen: np.ndarray, acts: np.ndarray, boot: Any, stream: str, kw: dict):
    return compact(policy_report(pools, chosen, acts, boot, stream, **kw))


def _candidate_counts(gen: np.ndarray, g: str) -> np.ndarray:
    return (gen == g).sum(axis=1)


def generator_shares(pools: Pools) -> dict[str, Any] | None:
    """Table 4: per generator images, mean utility, uniform and judge shares over valid calls."""
    if pools.generators is None:
        return None
    gen = np.asarray(pools.generators, dtype=object)
    u = np.asarray(pools.utilities, dtype=float)
    c = np.asarray(pools.choices, dtype=np.int64)
    valid = c >= 0
    calls = int(valid.sum())
    m = pools.sizes
    picked = gen[np.arange(len(c))[:, None], np.where(valid, c, 0)]
    out: dict[str, Any] = {"valid_calls": calls, "generators": {}}
    for g in sorted({str(x) for x in gen[~np.isnan(u)]}):
        mask = gen == g
        per_pool = _candidate_counts(gen, g) / m
        out["generators"][g] = {
            "images": int(mask.sum()),
            "mean_utility": float(np.mean(u[mask])),
            "uniform_share": float(np.sum(valid * per_pool[:, None]) / calls) if calls else None,
            "judge_share": share(int(np.sum(valid & (picked == g))), calls),
        }
    return out


def generator_by_slot(pools: Pools) -> dict[str, Any] | None:
    """Table 21: each generator's choice rate per presentation slot over valid calls (all
    orders pooled), with the number of presentations."""
    if pools.generators is None or pools.positions is None:
        return None
    gen = np.asarray(pools.generators, dtype=object)
    pos = np.asarray(pools.positions, dtype=np.int64)
    c = np.asarray(pools.choices, dtype=np.int64)
    m_max = pos.shape[2]
    shown = (c >= 0)[:, :, None] & (pos >= 0)
    picked = c[:, :, None] == np.arange(m_max)[None, None, :]
    gens = np.broadcast_to(gen[:, None, :], pos.shape)
    out: dict[str, Any] = {}
    for g in sorted({str(x) for x in gens[shown]}):
        row: dict[str, Any] = {}
        mine = shown & (gens == g)
        for j in range(int(pos.max()) + 1):
            at = mine & (pos == j)
            row[SLOTS[j]] = {
                "presentations": int(at.sum()),
                "choice_rate": share(int((at & picked).sum()), int(at.sum())),
            }
        row["all"] = {
            "presentations": int(mine.sum()),
            "choice_rate": share(int((mine & picked).sum()), int(mine.sum())),
        }
        out[g] = row
    return out


def stereotype_by_generator(
    pools: Pools,
    chosen: np.ndarray,
    acts: np.ndarray,
    boot: Any = None,
    stream: str = "selection",
    outcome: str = "stereotype",
) -> dict[str, Any] | None:
    """Table 19: the outcome's difference from random decomposed by the chosen generator."""
    if pools.generators is None or not pools.outcomes or outcome not in pools.outcomes:
        return None
    from implicit_bench.audits.image_pick_outcomes import _at, _mean

    gen = np.asarray(pools.generators, dtype=object)
    x = np.asarray(pools.outcomes[outcome], dtype=float)
    u = np.asarray(pools.utilities, dtype=float)
    chosen = np.asarray(chosen, dtype=np.int64)
    acts = np.asarray(acts, dtype=bool) & (chosen >= 0)
    n = len(x)
    pool_mean = np.nanmean(x, axis=1)
    diff = _at(x, chosen) - pool_mean
    cg = np.where(acts, gen[np.arange(n), np.where(acts, chosen, 0)], None)
    w = boot.weights(n, stream) if boot is not None and n else None
    ones = np.ones((1, n))
    kept = int(acts.sum())

    def est(mask: np.ndarray, tag: str) -> dict[str, Any]:
        value = float(_mean(ones, diff, mask)[0])
        if w is None:
            return estimate_json(value, None, n, None)
        return boot.interval(value, _mean(w, diff, mask), f"{stream}/{tag}", n)

    rows: dict[str, Any] = {}
    for g in sorted({str(v) for v in gen[~np.isnan(u)]}):
        mask = gen == g
        mine = acts & (cg == g)
        judge_share = float(mine.sum() / kept) if kept else None
        delta = est(mine, f"generator/{g}")
        rows[g] = {
            "uniform_share": float(np.mean((_candidate_counts(gen, g) / pools.sizes)[acts]))
            if kept
            else None,
            "judge_share": judge_share,
            "mean_rating": float(np.mean(x[mask])),
            "within_pool": float(np.mean((x - pool_mean[:, None])[mask])),
            "delta_when_chosen": delta,
            "contribution": None
            if judge_share is None or delta["value"] is None or not np.isfinite(delta["value"])
            else judge_share * delta["value"],
        }
    return {"outcome": outcome, "pools": kept, "by_generator": rows, "all": est(acts, "all")}


def best_ties(utilities: np.ndarray) -> np.ndarray:
    """Per pool, how many candidates tie for the best utility (exact ties, 1e-9)."""
    u = np.asarray(utilities, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.sum(u >= (np.nanmax(u, axis=1) - EPS)[:, None], axis=1)


def near_tie_split(pools: Pools, boot: Any, stream: str, kw: dict) -> dict[str, Any]:
    """Table 20: the direct policy and the oracle on tied-best vs unique-best pools."""
    u = np.asarray(pools.utilities, dtype=float)
    m_max = u.shape[1]
    direct, d_acts = policy(pools.choices, m_max, "direct")
    oracle = np.nanargmax(np.where(np.isnan(u), -np.inf, u), axis=1)
    tied = best_ties(u) > 1
    out: dict[str, Any] = {}
    for name, mask in (("best_tied", tied), ("unique_best", ~tied)):
        out[name] = {
            "pools": int(mask.sum()),
            "direct": _report(pools, direct, d_acts & mask, boot, stream, kw),
            "oracle": _report(pools, oracle, mask, boot, stream, kw),
        }
    return out


def _order_block(pools: Pools, mask: np.ndarray) -> dict[str, Any]:
    c = np.asarray(pools.choices, dtype=np.int64)[mask]
    m = pools.sizes[mask]
    valid = c >= 0
    calls = int(valid.sum())
    parsed = valid.all(axis=1)
    flip = parsed & (c != c[:, :1]).any(axis=1)
    out: dict[str, Any] = {
        "valid_calls": calls,
        "uniform_first_slot": float(np.sum(valid / m[:, None]) / calls) if calls else None,
        "flip_rate": share(int(flip.sum()), int(parsed.sum())),
    }
    if pools.slots is not None:
        s = np.asarray(pools.slots, dtype=np.int64)[mask]
        out["first_slot_share"] = share(int(((s == 0) & valid).sum()), calls)
    return out


def strata(pools: Pools, labels: np.ndarray, boot: Any, stream: str, kw: dict) -> dict[str, Any]:
    """Tables 8, 9 and 14 (lower half): per stratum the direct policy, the unanimity gate
    (its kept prompts and regret) and the order diagnostics."""
    labels = np.array([str(x) for x in labels], dtype=object)
    m_max = pools.utilities.shape[1]
    direct, d_acts = policy(pools.choices, m_max, "direct")
    unan, u_acts = policy(pools.choices, m_max, "unanimity")
    out: dict[str, Any] = {}
    for lab in sorted(set(labels)):
        mask = labels == lab
        out[lab] = {
            "pools": int(mask.sum()),
            "direct": _report(pools, direct, d_acts & mask, boot, stream, kw),
            "unanimity": _report(pools, unan, u_acts & mask, boot, stream, kw),
            "orders": _order_block(pools, mask),
        }
    return out


def consensus_split(pools: Pools, boot: Any, stream: str, kw: dict) -> dict[str, Any] | None:
    """Table 14: high consensus (disagreement strictly below the median) / low consensus /
    unique best, each for the direct policy and the unanimity gate."""
    if pools.disagreement is None:
        return None
    d = np.asarray(pools.disagreement, dtype=float)
    defined = np.isfinite(d)
    median = float(np.median(d[defined])) if defined.any() else None
    m_max = pools.utilities.shape[1]
    direct, d_acts = policy(pools.choices, m_max, "direct")
    unan, u_acts = policy(pools.choices, m_max, "unanimity")
    high = defined & (d < (median if median is not None else 0) - EPS)
    subsets = {
        "high_consensus": high,
        "low_consensus": defined & ~high,
        "unique_best": best_ties(pools.utilities) == 1,
    }
    out: dict[str, Any] = {"median_disagreement": median, "undefined": int((~defined).sum())}
    for name, mask in subsets.items():
        out[name] = {
            "pools": int(mask.sum()),
            "direct": _report(pools, direct, d_acts & mask, boot, stream, kw),
            "unanimity": _report(pools, unan, u_acts & mask, boot, stream, kw),
        }
    return out


def output_validity(pools: Pools) -> dict[str, Any]:
    """Table 10: calls by outcome, non-JSON answers and inference hours. Without per-call
    statuses only valid and parse-failed calls are known (the others are null)."""
    c = np.asarray(pools.choices, dtype=np.int64)
    hours = None if pools.seconds is None else float(np.nansum(pools.seconds) / 3600)
    if pools.status is None:
        planned = c.size if pools.seconds is None else int(np.isfinite(pools.seconds).sum())
        valid = int((c >= 0).sum())
        return {
            "calls": planned,
            "valid": valid,
            "parse_fail": planned - valid,
            "runtime_fail": None,
            "exact": None,
            "recovered": None,
            "non_json": None,
            "hours": hours,
        }
    st = np.asarray(pools.status, dtype=object)
    counts = {k: int((st == k).sum()) for k in STATUSES}
    non_json = None
    if pools.json_ok is not None:
        ok = np.asarray(pools.json_ok, dtype=object)
        non_json = int(np.sum((st != "") & (ok == False)))  # noqa: E712 - object array of bools
    return {
        "calls": int((st != "").sum()),
        "valid": counts["exact"] + counts["recovered"],
        **counts,
        "non_json": non_json,
        "hours": hours,
    }


def selection_breakdowns(
    pools: Pools,
    boot: Any = None,
    stream: str = "selection",
    margin: float = 0.0,
    near_tie_delta: float = 0.05,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Every breakdown the pools' optional arrays allow (None where an array is missing), on
    the prompt-level resamples of ``stream`` (the selection audit's)."""
    u = np.asarray(pools.utilities, dtype=float)
    direct, d_acts = policy(pools.choices, u.shape[1], "direct")
    kw = {
        "margin": margin,
        "confidence": confidence,
        "near_best_delta": near_tie_delta,
        "group_weights": {},
        "sensitivity_margin": None,
    }
    return {
        "validity": output_validity(pools),
        "generators": generator_shares(pools),
        "generator_by_slot": generator_by_slot(pools),
        "stereotype_by_generator": stereotype_by_generator(pools, direct, d_acts, boot, stream),
        "near_tie_split": near_tie_split(pools, boot, stream, kw),
        "by_group": strata(pools, pools.groups, boot, stream, kw),
        "by_category": None
        if pools.categories is None
        else strata(pools, pools.categories, boot, stream, kw),
        "consensus": consensus_split(pools, boot, stream, kw),
    }
