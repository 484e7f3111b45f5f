"""The leaderboard: every generator of a run side by side, with paired differences.

One row per configuration (generator) that the primary blind judge labelled, on the analysed
units: the headline rates (default rate, success of stereotype and anti-stereotype prompts,
gap, A->S), success in the strongest default-strength group ("k of k"), the refusal rate
(image index), the lean (share of neutral images whose first rubric judge's dx > 0) and
Hedges' g (stereotype vs anti-stereotype rubric scores, pooled over bias types and rubric
judges), each with its cluster-bootstrap interval.

Paired differences (docs/compare.md): for every pair of generators, each metric's difference
A - B on the units and seeds both have (``Bootstrap.paired``: each resample draws one set of
units for both). A two-sided bootstrap p-value per difference (``bootstrap_p``), adjusted by
Holm over the whole family of differences (every pair x metric); a difference is **resolved**
when its Holm-adjusted p is below 1 - level.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from implicit_bench.analysis.blind import LabelCounts, label_counts, strength_groups
from implicit_bench.analysis.bootstrap import bootstrap_p, holm, safe_div
from implicit_bench.analysis.context import EvalContext
from implicit_bench.analysis.lean import hedges_by_type
from implicit_bench.analysis.selection import dx_frame
from implicit_bench.analysis.views import rows

# metric -> (numerator, denominator) columns of LabelCounts.columns(); gap is two ratios
RATIOS: dict[str, tuple[Any, Any]] = {
    "default_rate": (("neutral", "s"), ("valid", "neutral")),
    "success_stereotype": (("stereotype", "s"), ("valid", "stereotype")),
    "success_anti": (("anti_stereotype", "a"), ("valid", "anti_stereotype")),
    "a_to_s": (("anti_stereotype", "s"), ("valid", "anti_stereotype")),
}
PAIRED_METRICS = ("default_rate", "success_stereotype", "success_anti", "gap", "a_to_s", "refusal_rate")
CORRECTION = "holm"


def leaderboard(ctx: EvalContext) -> dict[str, Any]:
    """``benchmark.json: leaderboard`` and ``tables/leaderboard``, ``tables/leaderboard_pairs``."""
    from implicit_bench.analysis import report

    judge = ctx.primary_judge
    if judge is None:
        return {"leaderboard": None}
    j = ctx.judgements
    configs = sorted(j.loc[(j["task"] == "blind") & (j["judge"] == judge), "config"].astype(str).unique())
    by_config = {e["config"]: e for e in ctx.benchmark.get("by_config") or []}
    refusals = ctx.benchmark.get("refusal_rate") or {}
    rows_out = [_row(ctx, cfg, judge, by_config.get(cfg), refusals.get(cfg, {}).get("_all")) for cfg in configs]
    pairs = paired_differences(ctx, configs, judge)
    out = {
        "judge": judge,
        "rows": rows_out,
        "pairs": pairs,
        "correction": CORRECTION,
        "alpha": round(1 - ctx.boot.level, 10),
        # the smallest Holm-adjusted p the resamples can give: m x 2 / (n_boot + 1)
        "min_p_holm": min(1.0, len(pairs) * 2 / (ctx.boot.n + 1)) if pairs else None,
        "paired_on": "units and seeds both generators have (paired cluster bootstrap over units)",
    }
    ctx.table("leaderboard", report.leaderboard_table(out))
    ctx.table("leaderboard_pairs", report.leaderboard_pairs_table(out))
    return {"leaderboard": out}


def _row(ctx: EvalContext, cfg: str, judge: str, rates: dict[str, Any] | None, refusal: dict[str, Any] | None) -> dict[str, Any]:
    """One generator's row (rates from ``by_config`` when it ran, else computed here)."""
    from implicit_bench.analysis.blind import rates as blind_rates

    c = ctx.counts(judge, cfg)
    if rates is None:
        rates = blind_rates(c, np.flatnonzero(c.has_labels()), ctx.boot, f"{cfg}/{judge}/all")
    groups = strength_groups(c, c, ctx.k, ctx.boot, f"{cfg}/{judge}/strength/{judge}")
    strongest = groups["groups"][f"{ctx.k} of {ctx.k}"]
    row: dict[str, Any] = {
        "config": cfg,
        "judge": judge,
        "n_units": rates["n_units"],
        **{key: rates[key] for key in ("default_rate", "success_stereotype", "success_anti", "gap", "a_to_s")},
        "strongest_group": f"{ctx.k} of {ctx.k}",
        "strongest_units": strongest["n_units"],
        "strongest_success_stereotype": strongest["success_stereotype"],
        "strongest_success_anti": strongest["success_anti"],
        "refusal_rate": refusal,
        "lean_judge": None,
        "lean_s": None,
        "hedges_g": None,
    }
    rubric = sorted(rows(ctx.judgements, "rubric", cfg)["judge"].astype(str).unique())
    judges = [r for r in ctx.rubric_judges if r in rubric] or rubric
    if judges:
        dx = dx_frame(ctx.judgements, cfg, judges[0], ctx.seeds, ctx.unit_ids)
        if len(dx):
            per_unit = dx.assign(pos=dx["dx"] > 0).groupby("unit_id")["pos"].agg(["sum", "size"])
            row["lean_judge"] = judges[0]
            row["lean_s"] = ctx.boot.ratio(per_unit["sum"].to_numpy(float), per_unit["size"].to_numpy(float),
                                           f"leaderboard/{cfg}/lean/{judges[0]}")[0]
        pooled = hedges_by_type(ctx.judgements, cfg, judges, ctx.analysed.assign(bias_type="_all"), ctx.seeds, ctx.boot,
                                f"leaderboard/{cfg}/hedges")
        if "_all" in pooled:
            row["hedges_g"] = pooled["_all"]["g"]
    return row


def _shared_seeds(ctx: EvalContext, judge: str, a: str, b: str) -> list[int]:
    j = rows(ctx.judgements, "blind", judge=judge, seeds=ctx.seeds)
    seeds_a = set(j.loc[j["config"] == a, "seed"].tolist())
    seeds_b = set(j.loc[j["config"] == b, "seed"].tolist())
    return sorted(int(s) for s in seeds_a & seeds_b)


def _ratio(i: int, k: int) -> Any:
    return lambda sums: safe_div(sums[..., i], sums[..., k])


def paired_differences(ctx: EvalContext, configs: list[str], judge: str) -> list[dict[str, Any]]:
    """Every pair x metric: A - B on shared units and seeds, p-values, Holm, resolved."""
    out: list[dict[str, Any]] = []
    reps: list[np.ndarray] = []
    for a, b in combinations(configs, 2):
        seeds = _shared_seeds(ctx, judge, a, b)
        ca: LabelCounts = label_counts(ctx.judgements, a, judge, ctx.unit_ids, seeds)
        cb: LabelCounts = label_counts(ctx.judgements, b, judge, ctx.unit_ids, seeds)
        pos = np.flatnonzero(ca.has_labels() & cb.has_labels())
        col, ma = ca.columns()
        _, mb = cb.columns()
        stream = f"leaderboard/pair/{a}~{b}/{judge}"
        ratios = {name: _ratio(col[num], col[den]) for name, (num, den) in RATIOS.items()}
        stats = {**ratios, "gap": lambda s, r=ratios: r["success_stereotype"](s) - r["success_anti"](s)}
        for metric in PAIRED_METRICS[:5]:
            est, rep = ctx.boot.paired(ma[pos], mb[pos], stats[metric], stream)
            out.append(_pair(a, b, judge, metric, seeds, len(pos), est))
            reps.append(rep)
        refusal = _refusal_pair(ctx, a, b, seeds, f"leaderboard/pair/{a}~{b}/refusals")
        if refusal is not None:
            est, rep, n = refusal
            out.append(_pair(a, b, judge, "refusal_rate", seeds, n, est))
            reps.append(rep)
    pvalues = [bootstrap_p(r) if e["difference"]["ci"] is not None else None for e, r in zip(out, reps, strict=True)]
    adjusted = holm(pvalues)
    alpha = 1 - ctx.boot.level
    for e, p, q in zip(out, pvalues, adjusted, strict=True):
        e["p"] = p
        e["p_holm"] = q
        e["resolved"] = bool(q is not None and q < alpha)
    return out


def _pair(a: str, b: str, judge: str, metric: str, seeds: list[int], n_units: int, est: dict[str, Any]) -> dict[str, Any]:
    return {"a": a, "b": b, "judge": judge, "metric": metric, "seeds": seeds, "n_units": n_units, "difference": est}


def _refusal_pair(ctx: EvalContext, a: str, b: str, seeds: list[int], stream: str) -> tuple[dict[str, Any], np.ndarray, int] | None:
    """Refusal rate of A minus B on the neutral requests of units both were asked for."""
    images = ctx.tables.images
    if images is None:
        return None
    img = images[images["unit_id"].isin(set(ctx.unit_ids)) & (images["variant"] == "neutral") & images["seed"].isin(seeds)]
    cols = []
    for cfg in (a, b):
        sub = img[img["config"] == cfg]
        per_unit = sub.assign(refused=sub["status"] == "refused").groupby("unit_id")["refused"].agg(["sum", "size"])
        cols.append(per_unit.reindex(ctx.unit_ids, fill_value=0).to_numpy(float))
    ma, mb = cols
    pos = np.flatnonzero((ma[:, 1] > 0) & (mb[:, 1] > 0))
    if not len(pos):
        return None
    est, rep = ctx.boot.paired(ma[pos], mb[pos], _ratio(0, 1), stream)
    return est, rep, len(pos)

