"""When the Judge Acts' secondary outcomes of a selection policy (§3, §4.5, §5.7, App. E-F).

- Cultural-error outcomes (Figure 7, Tables 2, 7, 18): per pool the chosen image's error rate
  (the share of annotators flagging a stereotype, a missing explicit or a missing implicit
  expectation) minus the random-choice average over the same pool, averaged over the pools the
  policy acts on; negative = fewer errors than chance. Quality and overall satisfaction (rescaled
  to [0, 1]) are reported the same way, higher being better. No composite is formed.
- Sensitive pools (Table 2): the pools on which an outcome differs across the candidates (so
  selection can change it), with the policy's regret, selected and random means there.
- Intervals: the prompt-level bootstrap of the selection audit (the same resamples as regret),
  pointwise, and for the three error types also Bonferroni-adjusted across them (§4.5): the
  percentile interval at level 1 - (1 - level) / 3 of the same replicates.
- Outcome definitions (Table 6, App. E): median regret, below-mean rate with a margin, near-best
  share (within ``near_best_delta`` of the best), below-median share (h below the pool's candidate
  median) and regret measured with overall satisfaction, each beside random choice on the same
  pools (random: the share of candidates meeting the event, never the indicator of the mean).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from implicit_bench.protocol.estimate import estimate_json

ERROR_TYPES = ("stereotype", "missing_explicit", "missing_implicit")
HIGHER_IS_BETTER = ("quality", "satisfaction")
SECONDARY = (*ERROR_TYPES, *HIGHER_IS_BETTER)
EPS = 1e-9


def _at(x: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """x[p, chosen_p] (NaN where the policy abstains)."""
    acts = chosen >= 0
    return np.where(acts, x[np.arange(len(x)), np.where(acts, chosen, 0)], np.nan)


def _mean(w: np.ndarray, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of x over ``mask`` under pool multiplicities ``w`` (rows: resamples)."""
    num = w @ np.where(mask, np.nan_to_num(x), 0.0)
    den = w @ mask.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def sensitive_pools(x: np.ndarray) -> np.ndarray:
    """Pools whose candidates differ on outcome ``x`` (max - min above 1e-9)."""
    x = np.asarray(x, dtype=float)
    return (np.nanmax(x, axis=1) - np.nanmin(x, axis=1)) > EPS


def _names(outcomes: dict[str, np.ndarray]) -> list[str]:
    known = [k for k in SECONDARY if k in outcomes]
    return known + sorted(k for k in outcomes if k not in SECONDARY)


def _percentile_ci(reps: np.ndarray, level: float) -> tuple[float, float] | None:
    finite = reps[np.isfinite(reps)]
    if not finite.size:
        return None
    tail = (1 - level) / 2
    lo, hi = np.percentile(finite, [100 * tail, 100 * (1 - tail)])
    return float(lo), float(hi)


def secondary_outcomes(
    utilities: np.ndarray,
    outcomes: dict[str, np.ndarray],
    chosen: np.ndarray,
    acts: np.ndarray,
    boot: Any = None,
    stream: str = "selection",
) -> dict[str, Any]:
    """Selected minus matched random per secondary outcome on the acted pools, with pointwise
    and (error types) Bonferroni-adjusted intervals, and the same on each sensitive subset."""
    u = np.asarray(utilities, dtype=float)
    chosen = np.asarray(chosen, dtype=np.int64)
    acts = np.asarray(acts, dtype=bool) & (chosen >= 0)
    n = len(u)
    names = _names(outcomes)
    family = [k for k in ERROR_TYPES if k in outcomes]
    level = boot.level if boot is not None else None
    adj = 1 - (1 - level) / len(family) if level is not None and family else None
    regret = np.nanmax(u, axis=1) - _at(u, chosen)
    ones = np.ones((1, n))
    diffs = {}
    masks = {"acts": acts}
    for name in names:
        x = np.asarray(outcomes[name], dtype=float)
        diffs[name] = _at(x, chosen) - np.nanmean(x, axis=1)
        masks[name] = acts & sensitive_pools(x)
    # every replicate from one product: per mask its weighted count, per (outcome, mask) the
    # weighted sum of the differences
    pairs = [(k, "acts") for k in names] + [(k, k) for k in names]
    reps: dict[tuple[str, str], np.ndarray] = {}
    if boot is not None and n:
        w = boot.weights(n, stream)
        cols = [masks[m].astype(float) for m in masks]
        cols += [np.where(masks[m], np.nan_to_num(diffs[k]), 0.0) for k, m in pairs]
        prod = w @ np.column_stack(cols)
        den = {m: prod[:, j] for j, m in enumerate(masks)}
        with np.errstate(invalid="ignore", divide="ignore"):
            for j, (k, m) in enumerate(pairs, start=len(masks)):
                reps[(k, m)] = np.where(
                    den[m] > 0, prod[:, j] / np.where(den[m] > 0, den[m], 1), np.nan
                )

    def est(name: str, mask: str, tag: str) -> dict[str, Any]:
        value = float(_mean(ones, diffs[name], masks[mask])[0])
        if (name, mask) not in reps:
            return estimate_json(value, None, n, None)
        return boot.interval(value, reps[(name, mask)], f"{stream}/{tag}", n)

    out: dict[str, Any] = {}
    for name in names:
        x = np.asarray(outcomes[name], dtype=float)
        sel = _at(x, chosen)
        rnd = np.nanmean(x, axis=1)
        block: dict[str, Any] = {
            "lower_is_better": name not in HIGHER_IS_BETTER,
            "pools": int(acts.sum()),
            "selected": float(_mean(ones, sel, acts)[0]),
            "random": float(_mean(ones, rnd, acts)[0]),
            "difference": est(name, "acts", name),
        }
        if name in family:
            value = block["difference"]["value"]
            ci = _percentile_ci(reps[(name, "acts")], adj) if reps else None
            block["difference_bonferroni"] = estimate_json(value, ci, n, adj if ci else None)
        sens = masks[name]
        block["sensitive"] = {
            "pools": int(sens.sum()),
            "regret": float(_mean(ones, regret, sens)[0]),
            "selected": float(_mean(ones, sel, sens)[0]),
            "random": float(_mean(ones, rnd, sens)[0]),
            "difference": est(name, name, f"{name}/sensitive"),
        }
        out[name] = block
    if family:
        out["bonferroni"] = {
            "family": family,
            "tests": len(family),
            "level": adj,
            "note": "pointwise intervals in difference; difference_bonferroni holds the "
            "Bonferroni-adjusted interval across the error types (§4.5)",
        }
    return out


def outcome_definitions(
    utilities: np.ndarray,
    chosen: np.ndarray,
    acts: np.ndarray,
    near_best_delta: float = 0.05,
    margin: float = 0.05,
    satisfaction: np.ndarray | None = None,
) -> dict[str, Any]:
    """Table 6's alternative outcome definitions (point values) for a policy and for random
    choice on the same acted pools."""
    u = np.asarray(utilities, dtype=float)
    chosen = np.asarray(chosen, dtype=np.int64)
    acts = np.asarray(acts, dtype=bool) & (chosen >= 0)
    valid = ~np.isnan(u)
    m = valid.sum(axis=1)
    h = _at(u, chosen)
    best = np.nanmax(u, axis=1)
    mean = np.nanmean(u, axis=1)
    median = np.nanmedian(u, axis=1)
    near = best - near_best_delta - EPS
    with np.errstate(invalid="ignore"):
        events = {
            "below_mean_margin": (h < mean - margin, u < (mean - margin)[:, None]),
            "near_best": (h >= near, u >= near[:, None]),
            "below_median": (h < median - EPS, u < (median - EPS)[:, None]),
        }
    out: dict[str, Any] = {
        "pools": int(acts.sum()),
        "margin": margin,
        "near_best_delta": near_best_delta,
        "median_regret": float(np.median((best - h)[acts])) if acts.any() else None,
        "random_median_regret": float(np.median((best - mean)[acts])) if acts.any() else None,
    }
    for key, (pick, cand) in events.items():
        out[key] = float(np.mean(pick[acts])) if acts.any() else None
        share = np.sum(valid & cand, axis=1) / m
        out[f"random_{key}"] = float(np.mean(share[acts])) if acts.any() else None
    if satisfaction is not None:
        s = np.asarray(satisfaction, dtype=float)
        s_best = np.nanmax(s, axis=1)
        any_ = acts.any()
        regret = s_best - _at(s, chosen)
        rnd = s_best - np.nanmean(s, axis=1)
        out["satisfaction_regret"] = float(np.mean(regret[acts])) if any_ else None
        out["random_satisfaction_regret"] = float(np.mean(rnd[acts])) if any_ else None
    return out


PLOT_COLUMNS = ("outcome", "series", "difference", "ci_low", "ci_high")


def error_plot_rows(selection: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Figure 7's bars: the direct policy's error differences on the main protocol (or file), one
    row per error type and interval kind (pointwise 95%, Bonferroni across the error types)."""
    if not selection:
        return []
    main = selection["main"] if "main" in selection else selection["protocols"].get("main")
    secondary = (main or {}).get("policies", {}).get("direct", {}).get("secondary") or {}
    rows = []
    for name in ERROR_TYPES:
        if name not in secondary:
            continue
        for series, key in (("pointwise", "difference"), ("Bonferroni", "difference_bonferroni")):
            est = secondary[name].get(key) or {}
            ci = est.get("ci") or [None, None]
            rows.append(
                {
                    "outcome": name.replace("_", " "),
                    "series": series,
                    "difference": est.get("value"),
                    "ci_low": ci[0],
                    "ci_high": ci[1],
                }
            )
    return rows
