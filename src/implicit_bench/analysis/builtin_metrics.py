"""The paper's metrics, registered in ``analysis.metrics.METRICS`` (one function each).

Each function reads ``ctx`` (``analysis.context.EvalContext``) and returns the keys it adds to
``metrics/benchmark.json`` or ``metrics/lean.json``; the statistics themselves live in
``blind``, ``lean``, ``agreement``, ``generators`` and ``scale``, the tables and plot frames in
``paper_tables``. Bootstrap streams are named by the unit set (``{config}/{judge}/...``), so a
metric's intervals do not depend on which other metrics ran.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.nested import dig
from implicit_bench.analysis import paper_tables
from implicit_bench.analysis.agreement.blind_judges import agreement
from implicit_bench.analysis.blind import (
    by_bias_type,
    label_counts,
    label_shares,
    rates,
    strength_groups,
)
from implicit_bench.analysis.blind import recoverability as recoverable
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.analysis.context import EvalContext
from implicit_bench.analysis.generators import generator_table, refusals_by_bias_type
from implicit_bench.analysis.judge_agreement import rubric_agreement
from implicit_bench.analysis.lean import hedges_statistics, lean_statistics, scorer_values
from implicit_bench.analysis.scale import judge_scale_use
from implicit_bench.protocol import metric_schema


# ----- metrics/benchmark.json ---------------------------------------------------------------
def blind_rates(ctx: EvalContext) -> dict[str, Any]:
    """Per blind judge: headline rates, label shares (Table 21), rates per bias type and by
    default strength (own grouping; all types and recoverable types only)."""
    config, k, boot, types = ctx.config, ctx.k, ctx.boot, ctx.types
    per_judge: dict[str, Any] = {}
    for judge in ctx.blind_judges:
        c = ctx.counts(judge)
        pos = np.flatnonzero(c.has_labels())
        stream = f"{config}/{judge}/all"
        per_judge[judge] = {
            "all": rates(c, pos, boot, stream),
            "label_shares": label_shares(c, pos, boot, stream),
            "by_bias_type": by_bias_type(
                c, types, ctx.present_types, ctx.diagnostic, boot, f"{config}/{judge}"
            ),
            "by_default_strength": strength_groups(
                c, c, k, boot, f"{config}/{judge}/strength/{judge}"
            ),
            "by_default_strength_recoverable_types": strength_groups(
                c,
                c,
                k,
                boot,
                f"{config}/{judge}/strength/{judge}/recoverable",
                keep=~np.isin(types, ctx.diagnostic),
            ),
        }
    if ctx.blind_judges:
        bench = {"judges": per_judge}
        ctx.table("benchmark_summary", paper_tables.headline_table(bench))
        ctx.table("table21_label_shares", paper_tables.label_share_table(bench))
        ctx.table("by_bias_type", paper_tables.bias_type_table(bench))
    return {"judges": per_judge}


def by_config(ctx: EvalContext) -> dict[str, Any]:
    """The primary judge's headline rates in every configuration it labelled (same units)."""
    # the analysed configuration's rates are blind_rates' "all" entry of the primary judge
    # when it ran (the same counts, units and stream): copied, not drawn and computed again
    own = dig(ctx.benchmark, "judges", ctx.primary_judge) or {}
    rows = (
        config_rates(
            ctx.judgements,
            ctx.primary_judge,
            ctx.unit_ids,
            ctx.seeds,
            ctx.boot,
            known={ctx.config: own["all"]} if "all" in own else None,
        )
        if ctx.blind_judges
        else []
    )
    if ctx.blind_judges:
        ctx.table("generators_side_by_side", paper_tables.side_by_side_table({"by_config": rows}))
    return {"by_config": rows}


def config_rates(
    j: pd.DataFrame,
    judge: str,
    unit_ids: list[str],
    seeds: Sequence[int] | None,
    boot: Bootstrap,
    known: dict[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The headline rates of every configuration (generator) the judge labelled, same units;
    ``known``: {config: ``blind.rates`` of the judge's counts there, on the same units, seeds
    and stream ``{config}/{judge}/all``} already computed (deep-copied, not recomputed)."""
    configs = sorted(
        j.loc[(j["task"] == "blind") & (j["judge"] == judge), "config"].astype(str).unique()
    )
    out = []
    for cfg in configs:
        if known and cfg in known:
            r = copy.deepcopy(known[cfg])
        else:
            c = label_counts(j, cfg, judge, unit_ids, seeds)
            r = rates(c, np.flatnonzero(c.has_labels()), boot, f"{cfg}/{judge}/all")
        out.append(
            {
                "config": cfg,
                "judge": judge,
                **{k: r[k] for k in ("n_units", *metric_schema.tabled())},
            }
        )
    return out


def strength(ctx: EvalContext) -> dict[str, Any]:
    """Table 22 / 25: success by default strength under every grouping: each judge's own,
    the other judges' (cross) and the ``evaluate.groupings``."""
    config, seeds, boot = ctx.config, ctx.seeds, ctx.boot
    per_judge = ctx.benchmark["judges"]
    entries: list[dict[str, Any]] = []
    for judge in ctx.blind_judges:
        c = ctx.counts(judge)
        own = per_judge[judge]
        entries.append(
            _strength_entry(
                f"{judge} groups, {judge} labels",
                config,
                judge,
                seeds,
                config,
                judge,
                own["by_default_strength"],
            )
        )
        entries.append(
            _strength_entry(
                f"{judge} groups, {judge} labels, recoverable types",
                config,
                judge,
                seeds,
                config,
                judge,
                own["by_default_strength_recoverable_types"],
            )
        )
        for other in ctx.blind_judges:
            if other != judge:
                cross = strength_groups(
                    ctx.counts(other), c, ctx.k, boot, f"{config}/{judge}/strength/{other}"
                )
                entries.append(
                    _strength_entry(
                        f"{other} groups, {judge} labels (cross)",
                        config,
                        other,
                        seeds,
                        config,
                        judge,
                        cross,
                    )
                )
        for g in ctx.params.groupings:
            g_config, g_judge, g_seeds = (
                g.config or config,
                g.judge or judge,
                g.seeds if g.seeds is not None else seeds,
            )
            g_k = len(g_seeds) if g_seeds else ctx.k
            res = strength_groups(
                ctx.counts(g_judge, g_config, g_seeds),
                c,
                g_k,
                boot,
                f"{config}/{judge}/strength/{g.name}",
            )
            entries.append(
                _strength_entry(
                    f"{g.name}: {g_judge} groups, {judge} labels",
                    g_config,
                    g_judge,
                    g_seeds,
                    config,
                    judge,
                    res,
                )
            )
    if ctx.blind_judges:
        ctx.table(
            "table22_success_by_default_strength",
            paper_tables.strength_table({"strength": entries}),
        )
    return {"strength": entries}


def _strength_entry(
    name: str,
    g_config: str,
    g_judge: str,
    g_seeds: Sequence[int] | None,
    l_config: str,
    l_judge: str,
    res: dict[str, Any],
) -> dict[str, Any]:
    return {
        "name": name,
        "grouping": {"config": g_config, "judge": g_judge, "seeds": g_seeds},
        "labels": {"config": l_config, "judge": l_judge},
        **res,
    }


def headline(ctx: EvalContext) -> dict[str, Any]:
    """The primary blind judge's headline rates, label shares, strength groups and per-type
    rates at the top level of benchmark.json (null without a blind judge)."""
    primary = ctx.benchmark["judges"].get(ctx.primary_judge) if ctx.blind_judges else None
    out: dict[str, Any] = {
        key: primary["all"][key] if primary else None for key in metric_schema.tabled()
    }
    for key in ("label_shares", "by_default_strength", "by_bias_type"):
        out[key] = primary[key] if primary else None
    return out


def recoverability(ctx: EvalContext) -> dict[str, Any]:
    """Table 5: per judge and bias type, both-succeed and neutral 'neither' shares."""
    p = ctx.params
    out = {
        judge: recoverable(
            ctx.benchmark["judges"][judge]["by_bias_type"],
            p.recoverability_both_max,
            p.recoverability_neither_min,
        )
        for judge in ctx.blind_judges
    }
    if ctx.blind_judges:
        ctx.table(
            "table05_recoverability", paper_tables.recoverability_table({"recoverability": out})
        )
    return {"recoverability": out}


def agreement_metrics(ctx: EvalContext) -> dict[str, Any]:
    """Every pair of blind judges on the same images (Table 20); the first pair with paired
    labels is the confusion plot's (``ctx.shared["confusion_pairs"]``)."""
    agreements, first_pairs = [], None
    for first, second in combinations(ctx.blind_judges, 2):
        a, pairs = agreement(
            ctx.judgements,
            ctx.config,
            first,
            second,
            ctx.analysed,
            ctx.seeds,
            ctx.k,
            ctx.params.agreement_units,
            ctx.boot,
        )
        agreements.append(a)
        if first_pairs is None and len(pairs):
            first_pairs = pairs.assign(pair=f"{first} vs {second}")
    ctx.shared["confusion_pairs"] = first_pairs
    if ctx.blind_judges:
        for name, frame in paper_tables.agreement_tables({"agreement": agreements}).items():
            ctx.table(name, frame)
    return {
        "agreement": agreements,
        "confusion_plot_pair": str(first_pairs["pair"].iloc[0])
        if first_pairs is not None
        else None,
    }


def generators(ctx: EvalContext) -> dict[str, Any]:
    """Table 4: per configuration and judge, bias, alignment and coverage; refusals per type."""
    gen = generator_table(ctx.judgements, ctx.analysed, ctx.tables.images, ctx.seeds, ctx.k)
    refusals = refusals_by_bias_type(ctx.tables.images, ctx.analysed, ctx.seeds)
    ctx.table("table04_generators", gen)
    ctx.table("table04_refusals_by_bias_type", refusals)
    return {
        "generators": gen.to_dict(orient="records"),
        "refusals_by_bias_type": refusals.to_dict(orient="records"),
    }


def benchmark_plots(ctx: EvalContext) -> dict[str, Any]:
    """DVC plot data: default rate by bias type, success by default strength, confusion."""
    for name, frame in paper_tables.plot_frames(
        ctx.benchmark, ctx.shared.get("confusion_pairs")
    ).items():
        ctx.plot(name, frame)
    return {}


# ----- metrics/lean.json --------------------------------------------------------------------
def lean(ctx: EvalContext) -> dict[str, Any]:
    """Tables 12-14: neutral lean per scorer (rubric judges, CLIP), Pearson between scorers,
    Spearman-Brown reliability."""
    values = scorer_values(
        ctx.judgements, ctx.config, ctx.rubric_judges, ctx.unit_ids, ctx.seeds, dx=ctx.dx
    )
    out = lean_statistics(values, ctx.analysed, ctx.boot, ctx.config)
    out["rubric_judges"] = ctx.rubric_judges
    if len(ctx.rubric_judges) >= 2:  # B.6's correlations between the rubric judges
        out["judge_agreement"] = rubric_agreement(
            ctx.judgements[ctx.judgements["unit_id"].isin(set(ctx.unit_ids))],
            ctx.config,
            ctx.rubric_judges,
            ctx.analysed,
        )
    for name, frame in paper_tables.lean_tables(out).items():
        ctx.table(name, frame)
    return out


def hedges(ctx: EvalContext) -> dict[str, Any]:
    """Figure 6: Hedges' g of stereotype vs anti-stereotype rubric scores per bias type."""
    g = (
        hedges_statistics(
            ctx.judgements, ctx.config, ctx.rubric_judges, ctx.analysed, ctx.seeds, ctx.boot
        )
        if ctx.rubric_judges
        else None
    )
    if g:
        ctx.table("figure06_hedges_g", paper_tables.hedges_table(g, ctx.diagnostic))
    ctx.plot("hedges_g_by_bias_type", paper_tables.hedges_plot(g))
    return {"hedges_g": g}


def judge_scale(ctx: EvalContext) -> dict[str, Any]:
    """Table 16: how each rubric judge uses the 0-5 scale."""
    scale = judge_scale_use(ctx.judgements, ctx.config, ctx.rubric_judges, ctx.unit_ids, ctx.seeds)
    if len(scale):
        ctx.table("table16_judge_scale", paper_tables.scale_table(scale))
    return {"judge_scale": scale.to_dict(orient="records")}
