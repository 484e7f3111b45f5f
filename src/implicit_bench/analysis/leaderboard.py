"""The leaderboard: every generator of a run side by side, with paired differences.

One row per configuration (generator) with blind labels of the primary blind judge or neutral
rubric scores, on the analysed units: the headline rates (default rate, success of stereotype
and anti-stereotype prompts, gap, A->S), success in the strongest default-strength group
("k of k"), the refusal rate (image index), Table 4's bias (mean neutral rubric score of the
first rubric judge) and alignment (share of neutral images judged aligned), the lean (share of
(unit, seed) whose dx > 0) and Hedges' g (stereotype vs anti-stereotype rubric scores, pooled
over bias types and rubric judges), each with its cluster-bootstrap interval; a value the data
cannot give (no blind labels in a release of rubric scores) is null.

Paired differences (docs/compare.md): for every pair of generators, each metric's difference
A - B on the units and seeds both have (``Bootstrap.paired``: each resample draws one set of
units for both). A two-sided bootstrap p-value per difference (``bootstrap_p``), adjusted by
Holm over the whole family of differences (every pair x metric); a difference is **resolved**
when its Holm-adjusted p is below 1 - level and its interval is not degenerate
(``bootstrap.resolve_differences``, the one home of that rule).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from implicit_bench._util.closed_form import safe_div
from implicit_bench._util.nested import dig
from implicit_bench.analysis.blind import LabelCounts, label_counts, strength_groups
from implicit_bench.analysis.bootstrap import resolve_differences
from implicit_bench.analysis.context import EvalContext
from implicit_bench.analysis.lean import hedges_by_type
from implicit_bench.analysis.views import rows
from implicit_bench.protocol import metric_schema

MEAN_METRICS = {"bias_score": "rubric", "alignment": "alignment"}  # per-image means: metric -> task
CORRECTION = "holm"


def leaderboard(ctx: EvalContext) -> dict[str, Any]:
    """``benchmark.json: leaderboard`` and ``tables/leaderboard``, ``tables/leaderboard_pairs``."""
    from implicit_bench.analysis import paper_tables

    judge = ctx.primary_judge
    j = ctx.judgements
    neutral = j[(j["variant"] == "neutral") & j["task"].isin(["rubric", "alignment"])]
    configs = sorted(  # the distinct configurations (each cell's text, looked at once)
        {str(c) for c in j.loc[(j["task"] == "blind") & (j["judge"] == judge), "config"].unique()}
        if judge
        else {str(c) for c in neutral["config"].unique()}
    )
    if not configs:
        return {"leaderboard": None}
    by_config = {e["config"]: e for e in ctx.benchmark.get("by_config") or []}
    refusals = ctx.benchmark.get("refusal_rate") or {}
    rows_out = [
        _row(ctx, cfg, judge, by_config.get(cfg), refusals.get(cfg, {}).get("_all"))
        for cfg in configs
    ]
    pairs = paired_differences(ctx, configs, judge, {r["config"]: r for r in rows_out})
    out = {
        "judge": judge,
        "rubric_judge": next((r["bias_judge"] for r in rows_out if r["bias_judge"]), None),
        "rows": rows_out,
        "pairs": pairs,
        "correction": CORRECTION,
        "alpha": round(1 - ctx.boot.level, 10),
        # the smallest Holm-adjusted p the resamples can give: m x 2 / (n_boot + 1)
        "min_p_holm": min(1.0, len(pairs) * 2 / (ctx.boot.n + 1)) if pairs else None,
        "paired_on": "units and seeds both generators have (paired cluster bootstrap over units)",
        # the benchmark the units came from (release/benchmark.py), so runs can be merged
        "benchmark_sha256": benchmark_of(ctx.tables.units),
    }
    ctx.table("leaderboard", paper_tables.leaderboard_table(out))
    ctx.table("leaderboard_pairs", paper_tables.leaderboard_pairs_table(out))
    # evaluate.beside_release: release/beside.py adds ``beside_release`` after the metrics
    # (the release package sits above the analysis: docs/architecture.md, "Layers")
    return {"leaderboard": out}


def benchmark_of(units: Any) -> str | None:
    """The one ``benchmark_sha256`` of a units table (None: not a release benchmark)."""
    if units is None or "benchmark_sha256" not in getattr(units, "columns", ()):
        return None
    values = sorted(str(v) for v in units["benchmark_sha256"].dropna().unique())
    return values[0] if len(values) == 1 else None


def _row(
    ctx: EvalContext,
    cfg: str,
    judge: str | None,
    rates: dict[str, Any] | None,
    refusal: dict[str, Any] | None,
) -> dict[str, Any]:
    """One generator's row (rates from ``by_config`` when it ran, else computed here)."""
    from implicit_bench.analysis.blind import rates as blind_rates

    row: dict[str, Any] = {
        "config": cfg,
        "judge": judge,
        "n_units": None,
        **dict.fromkeys(metric_schema.tabled()),
        "strongest_group": None,
        "strongest_units": None,
        "strongest_success_stereotype": None,
        "strongest_success_anti": None,
    }
    c = ctx.counts(judge, cfg) if judge else None
    if c is not None and c.has_labels().any():
        if rates is None:
            rates = blind_rates(c, np.flatnonzero(c.has_labels()), ctx.boot, f"{cfg}/{judge}/all")
        own = dig(ctx.benchmark, "judges", judge) or {}
        if cfg == ctx.config and "by_default_strength" in own:
            groups = own["by_default_strength"]  # blind_rates' (same counts, k and stream): read
        else:
            groups = strength_groups(c, c, ctx.k, ctx.boot, f"{cfg}/{judge}/strength/{judge}")
        strongest = groups["groups"][f"{ctx.k} of {ctx.k}"]
        row.update(
            {
                "n_units": rates["n_units"],
                **{key: rates[key] for key in metric_schema.tabled()},
                "strongest_group": f"{ctx.k} of {ctx.k}",
                "strongest_units": strongest["n_units"],
                "strongest_success_stereotype": strongest["success_stereotype"],
                "strongest_success_anti": strongest["success_anti"],
            }
        )
    row["refusal_rate"] = refusal
    rubric = sorted(
        rows(ctx.judgements, "rubric", cfg, columns=["judge"])["judge"].astype(str).unique()
    )
    judges = [r for r in ctx.rubric_judges if r in rubric] or rubric
    row["bias_judge"] = judges[0] if judges else None
    align = sorted(
        rows(ctx.judgements, "alignment", cfg, columns=["judge"])["judge"].astype(str).unique()
    )
    row["alignment_judge"] = (
        row["bias_judge"] if row["bias_judge"] in align else (align[0] if len(align) == 1 else None)
    )
    for metric, task in MEAN_METRICS.items():
        scorer = row["bias_judge"] if task == "rubric" else row["alignment_judge"]
        sums = _mean_sums(ctx, cfg, task, scorer, ctx.seeds)
        row[metric] = (
            ctx.boot.ratio(sums[:, 0], sums[:, 1], f"leaderboard/{cfg}/{metric}/{scorer}")[0]
            if sums is not None
            else None
        )
        if row["n_units"] is None and sums is not None:
            row["n_units"] = len(sums)
    row["lean_judge"] = row["lean_s"] = row["hedges_g"] = None
    if judges:
        dx = ctx.dx(judges[0], cfg)
        if len(dx):
            per_unit = dx.assign(pos=dx["dx"] > 0).groupby("unit_id")["pos"].agg(["sum", "size"])
            row["lean_judge"] = judges[0]
            row["lean_s"] = ctx.boot.ratio(
                per_unit["sum"].to_numpy(float),
                per_unit["size"].to_numpy(float),
                f"leaderboard/{cfg}/lean/{judges[0]}",
            )[0]
        pooled = hedges_by_type(
            ctx.judgements,
            cfg,
            judges,
            ctx.analysed.assign(bias_type="_all"),
            ctx.seeds,
            ctx.boot,
            f"leaderboard/{cfg}/hedges",
        )
        if "_all" in pooled:
            row["hedges_g"] = pooled["_all"]["g"]
    return row


def _mean_sums(
    ctx: EvalContext, cfg: str, task: str, judge: str | None, seeds: Any, units: Any = None
) -> np.ndarray | None:
    """Per analysed unit with a valid neutral answer: (sum of scores, answers), ``n x 2``;
    ``units`` (aligned positions) keeps all rows of those units, zeros included."""
    if judge is None:
        return None
    sub = rows(
        ctx.judgements,
        task,
        cfg,
        judge,
        seeds,
        ctx.unit_ids,
        ["unit_id", "variant", "valid", "score"],
    )
    sub = sub[(sub["variant"] == "neutral") & sub["valid"]]
    per_unit = sub.groupby("unit_id")["score"].agg(["sum", "size"]).astype(float)
    if units is not None:
        return per_unit.reindex(ctx.unit_ids, fill_value=0.0).to_numpy(float)
    return per_unit.to_numpy(float) if len(per_unit) else None


def _shared_seeds(
    ctx: EvalContext, task: str, judge_a: str, judge_b: str, a: str, b: str
) -> list[int]:
    """Seeds of the analysed seeds on which both configurations have rows of ``task``."""
    j = rows(ctx.judgements, task, seeds=ctx.seeds)
    seeds_a = set(j.loc[(j["config"] == a) & (j["judge"] == judge_a), "seed"].tolist())
    seeds_b = set(j.loc[(j["config"] == b) & (j["judge"] == judge_b), "seed"].tolist())
    return sorted(int(s) for s in seeds_a & seeds_b)


def _ratio(i: int, k: int) -> Any:
    return lambda sums: safe_div(sums[..., i], sums[..., k])


def paired_differences(
    ctx: EvalContext, configs: list[str], judge: str | None, board: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every pair x metric: A - B on shared units and seeds, p-values, Holm, resolved."""
    out: list[dict[str, Any]] = []
    reps: list[np.ndarray] = []

    def add(
        a: str,
        b: str,
        metric: str,
        seeds: list[int],
        n: int,
        result: tuple[dict[str, Any], np.ndarray],
    ) -> None:
        out.append(
            {
                "a": a,
                "b": b,
                "judge": judge,
                "metric": metric,
                "seeds": seeds,
                "n_units": n,
                "difference": result[0],
            }
        )
        reps.append(result[1])

    for a, b in combinations(configs, 2):
        if judge and board[a]["default_rate"] is not None and board[b]["default_rate"] is not None:
            seeds = _shared_seeds(ctx, "blind", judge, judge, a, b)
            ca: LabelCounts = label_counts(ctx.judgements, a, judge, ctx.unit_ids, seeds)
            cb: LabelCounts = label_counts(ctx.judgements, b, judge, ctx.unit_ids, seeds)
            pos = np.flatnonzero(ca.has_labels() & cb.has_labels())
            col, ma = ca.columns()
            _, mb = cb.columns()
            stream = f"leaderboard/pair/{a}~{b}/{judge}"
            stats: dict[str, Any] = {}  # each declared blind rate as a function of the sums
            for m in metric_schema.blind_rates():
                if m.ratio is not None:
                    stats[m.name] = _ratio(col[m.ratio[0]], col[m.ratio[1]])
                else:
                    first, second = m.difference  # type: ignore[misc]
                    stats[m.name] = lambda s, f=stats[first], g=stats[second]: f(s) - g(s)
            for metric in metric_schema.tabled():
                add(
                    a,
                    b,
                    metric,
                    seeds,
                    len(pos),
                    ctx.boot.paired(ma[pos], mb[pos], stats[metric], stream),
                )
        for metric, task in MEAN_METRICS.items():
            key = "bias_judge" if task == "rubric" else "alignment_judge"
            ja, jb = board[a][key], board[b][key]
            if board[a][metric] is None or board[b][metric] is None or ja != jb:
                continue
            seeds = _shared_seeds(ctx, task, ja, jb, a, b)
            ma, mb = (_mean_sums(ctx, cfg, task, ja, seeds, units=True) for cfg in (a, b))
            pos = np.flatnonzero((ma[:, 1] > 0) & (mb[:, 1] > 0))  # type: ignore[index]
            if len(pos):
                add(
                    a,
                    b,
                    metric,
                    seeds,
                    len(pos),
                    ctx.boot.paired(
                        ma[pos], mb[pos], _ratio(0, 1), f"leaderboard/pair/{a}~{b}/{metric}"
                    ),
                )  # type: ignore[index]
        refusal = _refusal_pair(ctx, a, b, f"leaderboard/pair/{a}~{b}/refusals")
        if refusal is not None:
            seeds, n, result = refusal
            add(a, b, "refusal_rate", seeds, n, result)
    resolve_differences(out, reps, ctx.boot.level)
    return out


def _refusal_pair(
    ctx: EvalContext, a: str, b: str, stream: str
) -> tuple[list[int], int, tuple[dict[str, Any], np.ndarray]] | None:
    """Refusal rate of A minus B on the neutral requests of units and seeds both were asked for."""
    images = ctx.tables.images
    if images is None:
        return None
    img = images[images["unit_id"].isin(set(ctx.unit_ids)) & (images["variant"] == "neutral")]
    if ctx.seeds is not None:
        img = img[img["seed"].isin(ctx.seeds)]
    seeds = sorted(
        int(s)
        for s in set(img.loc[img["config"] == a, "seed"]) & set(img.loc[img["config"] == b, "seed"])
    )
    img = img[img["seed"].isin(seeds)]
    cols = []
    for cfg in (a, b):
        sub = img[img["config"] == cfg]
        per_unit = (
            sub.assign(refused=sub["status"] == "refused")
            .groupby("unit_id")["refused"]
            .agg(["sum", "size"])
        )
        cols.append(per_unit.reindex(ctx.unit_ids, fill_value=0).to_numpy(float))
    ma, mb = cols
    pos = np.flatnonzero((ma[:, 1] > 0) & (mb[:, 1] > 0))
    if not len(pos):
        return None
    return seeds, len(pos), ctx.boot.paired(ma[pos], mb[pos], _ratio(0, 1), stream)
