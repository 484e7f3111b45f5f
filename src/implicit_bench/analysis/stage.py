"""The ``select`` and ``evaluate`` computations and ``analyze`` (both, plus extensions).

Output layout (the same under the repository root for the DVC stages and under ``--out`` for
``implicit-bench analyze``): ``metrics/selection.json``, ``metrics/benchmark.json``,
``metrics/lean.json``, ``tables/*.csv|md``, ``plots/*.csv``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.analysis import report
from implicit_bench.analysis.agreement import agreement
from implicit_bench.analysis.blind import (
    by_bias_type,
    label_counts,
    label_shares,
    rates,
    recoverability,
    strength_groups,
)
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.analysis.config import EvaluateParams, SelectParams
from implicit_bench.analysis.generators import generator_table, refusals_by_bias_type
from implicit_bench.analysis.lean import hedges_statistics, lean_statistics, scorer_values
from implicit_bench.analysis.load import Tables
from implicit_bench.analysis.scale import judge_scale_use
from implicit_bench.analysis.selection import SelectionResult, select_units
from implicit_bench.analysis.views import resolve_config, resolve_judges
from implicit_bench.io import read_table, write_json
from implicit_bench.provenance import provenance
from implicit_bench.schema import BIAS_TYPES

HEADLINE = ("default_rate", "success_stereotype", "success_anti", "gap", "a_to_s")


def judge_provenance(tables: Tables) -> dict[str, Any]:
    """Provenance of the judges behind the judgements (``model`` column when present)."""
    j = tables.judgements
    if "model" not in j.columns or j["model"].isna().all():
        return provenance([])
    models = j[["judge", "task", "model"]].dropna().drop_duplicates().sort_values(["task", "judge", "model"])
    return provenance([(f"{r.task}:{r.judge}", r.model) for r in models.itertuples()])


def run_select(tables: Tables, params: SelectParams) -> SelectionResult:
    pairs = None
    if params.pairs and Path(params.pairs).exists():
        pairs = read_table(params.pairs)
    result = select_units(tables, params, pairs)
    result.metrics["raw_upstream_from"] = params.pairs if pairs is not None else None
    result.metrics["inputs"] = tables.summary()
    result.metrics["provenance"] = judge_provenance(tables)
    result.metrics = report.clean(result.metrics)
    return result


@dataclass
class Evaluation:
    benchmark: dict[str, Any]
    lean: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    plots: dict[str, pd.DataFrame] = field(default_factory=dict)


def n_seeds_of(judgements: pd.DataFrame, config: str, seeds: list[int] | None, n_seeds: int | None) -> int:
    """k of the "k of n" scale: the analysed seeds, else ``evaluate.n_seeds``, else (null) the
    seeds present in the configuration's judgements, so k follows ``render.seeds``."""
    if seeds:
        return len(seeds)
    if n_seeds is not None:
        return n_seeds
    return max(1, int(judgements.loc[judgements["config"] == config, "seed"].nunique()))


def evaluate(tables: Tables, analysed: pd.DataFrame, params: EvaluateParams) -> Evaluation:
    """Every benchmark, agreement, lean and generator metric on the ``analysed`` units."""
    j = tables.judgements
    boot = Bootstrap(params.bootstrap.n, params.bootstrap.seed, params.bootstrap.level)
    analysed = analysed.sort_values("unit_id").reset_index(drop=True)
    unit_ids = analysed["unit_id"].tolist()
    types = analysed["bias_type"].to_numpy()
    seeds = params.seeds
    diagnostic = list(params.diagnostic_types)
    task = "blind" if (j["task"] == "blind").any() else "rubric"
    config = resolve_config(j, task, params.config, "evaluate.config")
    k = n_seeds_of(j, config, seeds, params.n_seeds)
    blind_judges = resolve_judges(j, "blind", config, params.blind_judges, "evaluate.blind_judges") if task == "blind" else []
    if params.blind_judges is None:  # judges shown the A/B options (rows with an order) first
        asked = set(j.loc[(j["task"] == "blind") & j["order"].notna(), "judge"].astype(str))
        blind_judges = sorted(blind_judges, key=lambda name: (name not in asked, name))
    present_types = [t for t in BIAS_TYPES if t in set(types)]

    bench: dict[str, Any] = {
        "config": config,
        "primary_judge": blind_judges[0] if blind_judges else None,
        "blind_judges": blind_judges,
        "units": len(unit_ids),
        "seeds": seeds,
        "n_seeds": k,
    }
    counts = {judge: label_counts(j, config, judge, unit_ids, seeds) for judge in blind_judges}
    per_judge: dict[str, Any] = {}
    strength: list[dict[str, Any]] = []
    for judge in blind_judges:
        c = counts[judge]
        pos = np.flatnonzero(c.has_labels())
        stream = f"{config}/{judge}/all"
        per_type = by_bias_type(c, types, present_types, diagnostic, boot, f"{config}/{judge}")
        own = strength_groups(c, c, k, boot, f"{config}/{judge}/strength/{judge}")
        per_judge[judge] = {
            "all": rates(c, pos, boot, stream),
            "label_shares": label_shares(c, pos, boot, stream),
            "by_bias_type": per_type,
            "by_default_strength": own,
            "by_default_strength_recoverable_types": strength_groups(
                c, c, k, boot, f"{config}/{judge}/strength/{judge}/recoverable", keep=~np.isin(types, diagnostic)
            ),
        }
        strength.append(_strength_entry(f"{judge} groups, {judge} labels", config, judge, seeds, config, judge, own))
        strength.append(
            _strength_entry(
                f"{judge} groups, {judge} labels, recoverable types", config, judge, seeds, config, judge,
                per_judge[judge]["by_default_strength_recoverable_types"],
            )
        )
        for other in blind_judges:
            if other != judge:
                cross = strength_groups(counts[other], c, k, boot, f"{config}/{judge}/strength/{other}")
                strength.append(_strength_entry(f"{other} groups, {judge} labels (cross)", config, other, seeds, config, judge, cross))
        for g in params.groupings:
            g_config, g_judge, g_seeds = g.config or config, g.judge or judge, g.seeds if g.seeds is not None else seeds
            g_counts = label_counts(j, g_config, g_judge, unit_ids, g_seeds)
            g_k = len(g_seeds) if g_seeds else k
            res = strength_groups(g_counts, c, g_k, boot, f"{config}/{judge}/strength/{g.name}")
            strength.append(_strength_entry(f"{g.name}: {g_judge} groups, {judge} labels", g_config, g_judge, g_seeds, config, judge, res))
    bench["judges"] = per_judge
    bench["by_config"] = _by_config(j, blind_judges[0], unit_ids, seeds, boot) if blind_judges else []
    bench["strength"] = strength
    primary = per_judge.get(bench["primary_judge"]) if blind_judges else None
    for key in HEADLINE:
        bench[key] = primary["all"][key] if primary else None
    bench["label_shares"] = primary["label_shares"] if primary else None
    bench["by_default_strength"] = primary["by_default_strength"] if primary else None
    bench["by_bias_type"] = primary["by_bias_type"] if primary else None
    bench["recoverability"] = {
        judge: recoverability(per_judge[judge]["by_bias_type"], params.recoverability_both_max, params.recoverability_neither_min)
        for judge in blind_judges
    }
    agreements, first_pairs = [], None
    for first, second in combinations(blind_judges, 2):
        a, pairs = agreement(j, config, first, second, analysed, seeds, k, params.agreement_units, boot)
        agreements.append(a)
        if first_pairs is None and len(pairs):  # the plot: the first judge pair with paired labels
            first_pairs = pairs.assign(pair=f"{first} vs {second}")
    bench["agreement"] = agreements
    bench["confusion_plot_pair"] = str(first_pairs["pair"].iloc[0]) if first_pairs is not None else None
    gen = generator_table(j, analysed, tables.images, seeds, k)
    refusals = refusals_by_bias_type(tables.images, analysed, seeds)
    bench["generators"] = gen.to_dict(orient="records")
    bench["refusals_by_bias_type"] = refusals.to_dict(orient="records")
    bench["diagnostic_types"] = diagnostic
    bench["bootstrap"] = _bootstrap_block(boot)

    rubric_present = ((j["task"] == "rubric") & (j["config"] == config)).any()
    rubric_judges = resolve_judges(j, "rubric", config, params.rubric_judges, "evaluate.rubric_judges") if rubric_present else []
    values = scorer_values(j, config, rubric_judges, unit_ids, seeds)
    lean = lean_statistics(values, analysed, boot, config)
    lean["rubric_judges"] = rubric_judges
    lean["hedges_g"] = hedges_statistics(j, config, rubric_judges, analysed, seeds, boot) if rubric_judges else None
    scale = judge_scale_use(j, config, rubric_judges, unit_ids, seeds)
    lean["judge_scale"] = scale.to_dict(orient="records")
    lean["bootstrap"] = _bootstrap_block(boot)

    out_tables: dict[str, pd.DataFrame] = {}
    plots: dict[str, pd.DataFrame] = {}
    if blind_judges:
        out_tables["benchmark_summary"] = report.headline_table(bench)
        out_tables["table21_label_shares"] = report.label_share_table(bench)
        out_tables["table22_success_by_default_strength"] = report.strength_table(bench)
        out_tables["by_bias_type"] = report.bias_type_table(bench)
        out_tables["table05_recoverability"] = report.recoverability_table(bench)
        out_tables["generators_side_by_side"] = report.side_by_side_table(bench)
        out_tables.update(report.agreement_tables(bench))
    out_tables["table04_generators"] = gen
    out_tables["table04_refusals_by_bias_type"] = refusals
    out_tables.update(report.lean_tables(lean))
    if len(scale):
        out_tables["table16_judge_scale"] = report.scale_table(scale)
    if lean["hedges_g"]:
        out_tables["figure06_hedges_g"] = report.hedges_table(lean["hedges_g"], diagnostic)
    plots.update(report.plot_frames(bench, first_pairs))
    plots["hedges_g_by_bias_type"] = report.hedges_plot(lean["hedges_g"])
    return Evaluation(bench, lean, out_tables, plots)


def _by_config(j: pd.DataFrame, judge: str, unit_ids: list[str], seeds: Sequence[int] | None, boot: Bootstrap) -> list[dict[str, Any]]:
    """The headline rates of every configuration (generator) the judge labelled, same units."""
    configs = sorted(j.loc[(j["task"] == "blind") & (j["judge"] == judge), "config"].astype(str).unique())
    out = []
    for cfg in configs:
        c = label_counts(j, cfg, judge, unit_ids, seeds)
        r = rates(c, np.flatnonzero(c.has_labels()), boot, f"{cfg}/{judge}/all")
        out.append({"config": cfg, "judge": judge, **{k: r[k] for k in ("n_units", *HEADLINE)}})
    return out


def _strength_entry(name: str, g_config: str, g_judge: str, g_seeds: Sequence[int] | None, l_config: str, l_judge: str, res: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "grouping": {"config": g_config, "judge": g_judge, "seeds": g_seeds},
        "labels": {"config": l_config, "judge": l_judge},
        **res,
    }


def _bootstrap_block(boot: Bootstrap) -> dict[str, Any]:
    return {
        "n_boot": boot.n,
        "seed": boot.seed,
        "level": boot.level,
        "method": "percentile; resample units with replacement, keep all their images",
        "stream_seed": "numpy default_rng(derive_seed(seed, stream)), one stream per unit set",
    }


def write_evaluation(out_dir: str | Path, ev: Evaluation, tables: Tables, selection_metrics: dict[str, Any] | None, prov: dict[str, Any]) -> None:
    """metrics/benchmark.json, metrics/lean.json, tables/ and plots/ under ``out_dir``."""
    out = Path(out_dir)
    ev.benchmark["inputs"] = tables.summary()
    ev.benchmark["provenance"] = prov
    ev.lean["provenance"] = prov
    write_json(out / "metrics" / "benchmark.json", report.clean(ev.benchmark))
    write_json(out / "metrics" / "lean.json", report.clean(ev.lean))
    all_tables = dict(ev.tables)
    if selection_metrics is not None:
        all_tables.update(report.selection_tables(selection_metrics))
    report.write_tables(out, all_tables, prov=prov)
    report.write_tables(out, {"rejected_rows": tables.rejects, "duplicate_keys": tables.duplicates}, markdown=False)
    report.write_plots(out, ev.plots)
