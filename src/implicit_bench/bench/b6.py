"""Appendix B.6: a third judge re-scores a subset of the benchmark (stage ``b6``).

The subset rule (``b6_subset``): the fixed unit set's ids for which every Table 4 generator
(``b6.baseline`` and ``b6.generators``) returned at least one neutral image, at most
``max_per_bias_type`` per bias type (the first by a hash of the id; a smaller bias type in
full). The baseline (Qwen-Image in the paper) covers those ids plus the human-evaluation units.
The third judge (``b6.judge``) asks the rubric on: the baseline's three variants over the
baseline ids; the other generators' neutral images and the ``b6.debias_configs``' images over
the subset ids. Two tables follow (docs/experiments.md, "B.6"):

- Table 15: neutral bias means per generator under the third judge and the first judge (on the
  subset and on the whole unit set), and Spearman's rho of the rankings;
- Table 17: the baseline's neutral images (the unmodified row) and each debiasing configuration
  on the subset: alignment A (the first judge's labels, reused), bias under both judges, composite
  S under both and dS vs the unmodified row with a paired bootstrap interval over units;
- beside them (``bench.b6_agreement``): per-image Pearson r between the judges, per-type
  Spearman rho on dx's effect size and on Hedges' g (``agreement``), and each judge's r with
  the human mean where rating bundles are given (``human_vs_judge``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from implicit_bench._util.numbers import fixed, percent_text
from implicit_bench.bench.params import B6Params, BenchParams, capped_per_bias_type
from implicit_bench.debias.params import DebiasParams
from implicit_bench.debias.scoring import config_stats, delta_interval, image_scores
from implicit_bench.errors import InputError
from implicit_bench.params import BootstrapParams, check_refs, section
from implicit_bench.protocol.schema import VARIANTS
from implicit_bench.protocol.tables import (
    BENCH_IMAGES_DIR,
    DEBIAS_IMAGES_DIR,
    IMAGES_DIR,
    UNITS,
)
from implicit_bench.render.images import read_index

B6_DIR = "data/b6"
B6_METRICS = "metrics/b6.json"
B6_TABLE = "metrics/b6.md"
SUBSET, BASELINE = "subset", "baseline"


def store_dir(raw: dict[str, Any], b6: B6Params, name: str) -> str:
    """The folder holding store ``name``: a debiasing configuration's, a bench generator's or a
    construction store's."""
    if name in b6.debias_configs:
        return DEBIAS_IMAGES_DIR
    if name in section(raw, "bench", BenchParams).generators:
        return BENCH_IMAGES_DIR
    return IMAGES_DIR


def returned_units(index: pd.DataFrame, variant: str = "neutral") -> set[str]:
    """Unit ids with at least one ``ok`` image of ``variant`` in a store's index."""
    ok = index[(index["status"] == "ok") & (index["variant"] == variant)]
    return set(ok["unit_id"].astype(str))


def b6_subset(
    units: pd.DataFrame, returned: Mapping[str, set[str]], cap: int, seed: int
) -> pd.DataFrame:
    """The subset: units every store of ``returned`` rendered (at least one neutral image), at
    most ``cap`` per bias type (``capped_per_bias_type``)."""
    if returned:
        every = set.intersection(*map(set, returned.values()))
        units = units[units["unit_id"].astype(str).isin(every)]
    return capped_per_bias_type(units, cap, seed)


def baseline_units(
    units: pd.DataFrame, subset: pd.DataFrame, human_eval_ids: set[str]
) -> pd.DataFrame:
    """The baseline's units: the subset plus the human-evaluation units of the unit set."""
    ids = set(subset["unit_id"].astype(str)) | human_eval_ids
    return units[units["unit_id"].astype(str).isin(ids)]


def human_eval_ids(raw: dict[str, Any], b6: B6Params, root: Path) -> set[str]:
    """The units human_eval's sample draws (its params; ``config`` null: the baseline)."""
    from implicit_bench.human_eval.bundle import HumanEvalParams, sample_cases

    params = section(raw, "human_eval", HumanEvalParams)
    if params.config is None:
        params = params.model_copy(update={"config": b6.baseline})
    cases, _, stores = sample_cases(params, root)
    for store in stores.values():
        store.close()
    return {str(c["unit_id"]) for c in cases}


# ----- tables ----------------------------------------------------------------------------------
def _neutral_bias(judgements: pd.DataFrame, judge: str, ids: set[str]) -> dict[str, float | None]:
    """Per config: the mean valid neutral rubric score of ``judge`` over units ``ids``."""
    rows = judgements[
        judgements["unit_id"].astype(str).isin(ids) & (judgements["task"] == "rubric")
    ]
    if rows.empty:
        return {}
    scores = image_scores(rows, rubric_judge=judge, source="judgements")
    means = scores.groupby("config")["bias"].mean()
    return {str(k): None if pd.isna(v) else float(v) for k, v in means.items()}


def _rho(a: list[float | None], b: list[float | None]) -> float | None:
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if len(pairs) < 2:
        return None
    rho = spearmanr([p[0] for p in pairs], [p[1] for p in pairs]).statistic
    return None if np.isnan(rho) else float(rho)


def table15(
    third: pd.DataFrame,
    first: pd.DataFrame,
    stores: list[str],
    judge: str,
    first_judge: str,
    subset_ids: set[str],
    all_ids: set[str],
) -> dict[str, Any]:
    """Neutral bias means per store: third judge and first judge on the subset, first judge on
    the whole unit set; Spearman's rho of the third judge's ranking against either column."""
    third_mean = _neutral_bias(third[third["config"].isin(stores)], judge, subset_ids)
    first_rows = first[first["config"].isin(stores)]
    sub_mean = _neutral_bias(first_rows, first_judge, subset_ids)
    full_mean = _neutral_bias(first_rows, first_judge, all_ids)
    rows = [
        {
            "config": s,
            "third": third_mean.get(s),
            "first_subset": sub_mean.get(s),
            "first_full": full_mean.get(s),
        }
        for s in stores
    ]
    col = {k: [r[k] for r in rows] for k in ("third", "first_subset", "first_full")}
    return {
        "rows": rows,
        "rho_subset": _rho(col["third"], col["first_subset"]),
        "rho_full": _rho(col["third"], col["first_full"]),
        "n_models": len(stores),
        "n_units": len(subset_ids),
    }


def table16(
    third: pd.DataFrame, first: pd.DataFrame, baseline: str, judge: str, subset_ids: set[str]
) -> list[dict[str, Any]]:
    """How each rubric judge of the baseline (the construction judges, then the third judge) uses
    the 0-5 scale on the subset's baseline images (``analysis.scale.judge_scale_use``, on the
    (unit, seed) instances every judge scored, as the paper's Table 16)."""
    from implicit_bench.analysis.scale import judge_scale_use

    rub = pd.concat(
        [f[(f["config"] == baseline) & (f["task"] == "rubric")] for f in (first, third)],
        ignore_index=True,
    )
    rub = rub.assign(unit_id=rub["unit_id"].astype(str), judge=rub["judge"].astype(str))
    rub = rub[rub["unit_id"].isin(subset_ids)]
    valid = rub["valid"].fillna(False).astype(bool) if "valid" in rub else True
    rub = rub.assign(score=pd.to_numeric(rub["value"].where(valid), errors="coerce"))
    judges = [*sorted(set(rub["judge"]) - {judge}), judge]
    table = judge_scale_use(rub, baseline, judges, sorted(subset_ids), common_instances=True)
    return [
        {k: None if isinstance(v, float) and np.isnan(v) else v for k, v in row.items()}
        for row in table.astype(object).to_dict("records")
    ]


def table17(
    third: pd.DataFrame,
    first: pd.DataFrame,
    baseline: str,
    *,
    configs: list[str],
    judge: str,
    first_judge: str,
    subset_ids: set[str],
    boot: BootstrapParams,
) -> dict[str, Any]:
    """The unmodified row (the baseline's neutral images) and each configuration on the subset:
    A from the first judge's alignment labels, b and S under each judge, dS vs unmodified."""
    third = third[third["unit_id"].astype(str).isin(subset_ids)]
    first = first[first["unit_id"].astype(str).isin(subset_ids)]
    names = [baseline, *configs]
    labels = image_scores(
        first[first["config"].isin(names)], names, first_judge, first_judge, "first judge"
    )
    rescored = image_scores(
        third[(third["config"].isin(names)) & (third["task"] == "rubric")],
        names,
        judge,
        None,
        "third judge",
    )
    key = ["config", "unit_id", "seed"]
    under = {
        "first": labels,
        # the third judge's b_i with the first judge's Y_i of the same image
        "third": rescored[[*key, "bias", "rubric_invalid"]].merge(
            labels[[*key, "aligned", "alignment_invalid"]], on=key, how="left"
        ),
    }
    for frame in under.values():
        frame["alignment_invalid"] = frame["alignment_invalid"].fillna(False).astype(bool)
    rows = []
    for name in names:
        row: dict[str, Any] = {"config": name, "unmodified": name == baseline}
        for who, images in under.items():
            mine = images[images["config"] == name]
            stats = config_stats(mine)
            row[f"bias_{who}"] = stats["bias"]
            row[f"S_{who}"] = stats["S"]
            row[f"n_images_{who}"] = stats["n_images"]
            if who == "first":
                row["align"] = stats["align"]
                row["n_units"] = stats["n_units"]
            row[f"dS_{who}"], row[f"dS_{who}_interval"] = None, None
            if name != baseline:
                base = images[images["config"] == baseline]
                if stats["S"] is not None and config_stats(base)["S"] is not None:
                    row[f"dS_{who}"] = stats["S"] - config_stats(base)["S"]
                    row[f"dS_{who}_interval"], _ = delta_interval(mine, base, boot, f"b6:{who}")
        rows.append(row)
    return {"rows": rows, "n_units": len(subset_ids)}


def tables_markdown(payload: Mapping[str, Any]) -> str:
    """Tables 15 and 17 as Markdown."""
    t15, t17 = payload["table15"], payload["table17"]
    judge, first = payload["judge"], payload["first_judge"]
    out = [
        f"## Table 15: neutral bias means, {judge} vs {first} ({t15['n_units']} subset units)",
        "",
        f"| generator | {judge} | {first} subset | {first} full |",
        "| --- | --- | --- | --- |",
    ]
    for r in t15["rows"]:
        out.append(
            f"| {r['config']} | {fixed(r['third'])} | {fixed(r['first_subset'])} | "
            f"{fixed(r['first_full'])} |"
        )
    out += [
        "",
        f"Spearman rho: {fixed(t15['rho_subset'], 2)} (vs subset), "
        f"{fixed(t15['rho_full'], 2)} (vs full)",
        "",
        "## Table 16: scale use on the subset's baseline images (instances every judge scored)",
        "",
        "| judge | anti | neutral | stereotype | mean delta | d | >= 4 (%) | S > A (%) | tie (%) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *(
            f"| {r['judge']} | {fixed(r['mean_anti'], 2)} | {fixed(r['mean_neutral'], 2)} | "
            f"{fixed(r['mean_stereotype'], 2)} | {fixed(r['delta_mean'], 2, True)} | "
            f"{fixed(r['d'], 2)} | {percent_text(r['share_ge4'])} | "
            f"{percent_text(r['share_s_gt_a'])} | {percent_text(r['share_tie'])} |"
            for r in payload.get("table16", [])
        ),
        "",
        f"## Table 17: own-unit configurations re-judged by {judge} ({t17['n_units']} subset "
        f"units; A: {first}'s alignment labels)",
        "",
        f"| config | A | bias {judge} | bias {first} | dS {judge} | dS {first} |",
        "| --- | --- | --- | --- | --- | --- |",
    ]

    def ds(r: Mapping[str, Any], who: str) -> str:
        if r["unmodified"] or r[f"dS_{who}"] is None:
            return "-"
        ci = r[f"dS_{who}_interval"]
        tail = f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else ""
        return f"{r[f'dS_{who}']:+.1f}{tail}"

    for r in t17["rows"]:
        out.append(
            f"| {r['config']}{' (unmodified)' if r['unmodified'] else ''} | "
            f"{fixed(r['align'], 1)} | "
            f"{fixed(r['bias_third'], 2)} | {fixed(r['bias_first'], 2)} | {ds(r, 'third')} | "
            f"{ds(r, 'first')} |"
        )
    return "\n".join(out + agreement_markdown(payload)) + "\n"


def agreement_markdown(payload: Mapping[str, Any]) -> list[str]:
    """The judge correlations: per-image Pearson r, per-type Spearman rho on dx's d and on
    Hedges' g, and each judge's r with the human mean."""
    agree = payload.get("agreement")
    if not agree:
        return []
    out = [
        "",
        f"## Judge agreement on the subset's baseline images ({agree['n_images']} images every "
        "judge scored)",
        "",
        "| judges | image Pearson r | rho on dx (d per type) | rho on Hedges' g per type |",
        "| --- | --- | --- | --- |",
    ]
    for pair, e in agree["image_pearson"].items():
        dx, g = agree["spearman_dx"][pair], agree["spearman_g"][pair]
        out.append(
            f"| {pair} | {fixed(e['r'], 2)} | {fixed(dx['rho'], 2)} ({dx['n_types']} types) | "
            f"{fixed(g['rho'], 2)} ({g['n_types']} types) |"
        )
    human = payload.get("human_vs_judge", {})
    if human.get("available"):
        out += ["", "Judge vs the per-image human mean (Pearson r):", ""]
        out += [
            f"- {j}: {fixed(e['r']['value'], 2)} ({e['n_images']} images)"
            for j, e in human["by_judge"].items()
        ]
    else:
        out += ["", f"Judge vs humans: not available ({human.get('reason', 'no ratings')})."]
    return out


# ----- the plan --------------------------------------------------------------------------------
def plan_images(
    n_subset: int,
    n_baseline: int,
    baseline_seeds: int,
    generator_seeds: list[int],
    debias_seeds: int,
    n_debias: int,
    unreturned: int = 0,
) -> dict[str, int]:
    """The images the third judge re-scores: the baseline's ids x 3 variants x its seeds; each
    other generator's subset ids x its seeds (neutral), less the ``unreturned`` images; the
    debiasing configurations' subset ids x their seeds each."""
    return {
        "baseline": n_baseline * len(VARIANTS) * baseline_seeds,
        "generators": sum(n_subset * k for k in generator_seeds) - unreturned,
        "debias": n_subset * debias_seeds * n_debias,
    }


# ----- the stage -------------------------------------------------------------------------------
def b6_judge_params(
    raw: dict[str, Any], b6: B6Params, part: str, units_path: str, out_dir: str = B6_DIR
) -> Any:
    """The judge stage's params of one part: ``baseline`` (three variants of the baseline) or
    ``subset`` (the other stores' neutral images and the debiasing configurations')."""
    from implicit_bench.backends.judges.params import JudgeStageParams

    judge = section(raw, "judge", JudgeStageParams, attach={"judges": "judges"})
    check_refs(b6.judge, judge.judges, "b6.judge", "judges")
    configs = [b6.baseline] if part == BASELINE else [*b6.generators, *b6.debias_configs]
    variants = list(VARIANTS) if part == BASELINE else ["neutral"]
    data = judge.model_dump()
    data.update(
        judges={b6.judge: judge.judges[b6.judge]},
        tasks={"rubric": {"judges": [b6.judge], "variants": variants}},
        configs=configs,
        blind_orders="hash",
        both_orders_units=0,
        units=units_path,
        images_dir=IMAGES_DIR,
        config_dirs={c: store_dir(raw, b6, c) for c in configs},
        only_listed_units=True,
        out=f"{out_dir}/{part}.parquet",
        metrics=f"{out_dir}/{part}.json",
    )
    return JudgeStageParams.model_validate(data)


def run_b6(
    raw: dict[str, Any], root: str | Path = ".", profile: str | None = None
) -> dict[str, Any]:
    """Draw the subset, ask the third judge, write Tables 15 and 17; the payload."""
    from implicit_bench._util.files import atomic_write_text
    from implicit_bench.backends.judges.stage import run_judge_stage
    from implicit_bench.bench.b6_agreement import human_vs_judges, judge_agreement
    from implicit_bench.human_eval.bundle import HumanEvalParams
    from implicit_bench.protocol.tables.judgements import read_judgements
    from implicit_bench.runtime.provenance import markdown_banner, merge_provenance
    from implicit_bench.runtime.runlog import write_metrics

    root = Path(root)
    b6 = section(raw, "b6", B6Params)
    bench = section(raw, "bench", BenchParams)
    boot = section(raw, "bootstrap", BootstrapParams)
    out = root / B6_DIR
    out.mkdir(parents=True, exist_ok=True)
    if not b6.enabled:  # e.g. run --benchmark: no construction store to re-score
        for stale in out.glob("*"):
            stale.unlink()
        (out / "disabled").write_text("b6.enabled is false\n", encoding="utf-8")
        payload = {"enabled": False, "judge": b6.judge, "first_judge": b6.first_judge}
        payload.update(n_subset_units=0, n_baseline_units=0, images_rescored=0)
        payload.update(model_calls=0, cache_hits=0)
        write_metrics(root / B6_METRICS, payload, "b6")
        atomic_write_text(root / B6_TABLE, "B.6 not run (b6.enabled is false).\n")
        return payload
    debias = section(raw, "debias", DebiasParams, inherit={"bootstrap": "scoring.bootstrap"})
    debias_configs = list(debias.configs)
    check_refs(b6.debias_configs, debias_configs, "b6.debias_configs", "debias.configs")
    units = UNITS.read(root / bench.units, require=("unit_id", "bias_type"))
    stores = [b6.baseline, *b6.generators]
    returned = {s: returned_units(read_index(root / store_dir(raw, b6, s) / s)) for s in stores}
    subset = b6_subset(units, returned, b6.max_per_bias_type, b6.seed)
    extra = human_eval_ids(raw, b6, root) if b6.human_eval else set()
    base = baseline_units(units, subset, extra)
    UNITS.write(subset, out / f"{SUBSET}_units.parquet")
    UNITS.write(base, out / f"{BASELINE}_units.parquet")
    parts, blocks, calls, hits = [], [], 0, 0
    for part in (BASELINE, SUBSET):
        params = b6_judge_params(raw, b6, part, f"{B6_DIR}/{part}_units.parquet")
        result = run_judge_stage(params, root, profile=profile)
        parts.append(result.frame)
        blocks.append(result.metrics.get("provenance", {}))
        calls, hits = calls + result.model_calls, hits + result.cache_hits
    third = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    first_paths = [root / p for p in b6.judgements if (root / p).exists()]
    first_paths += [root / b6.debias_judgements / f"{c}.parquet" for c in b6.debias_configs]
    missing = [p for p in first_paths if not p.exists()]
    if missing:
        raise InputError(missing[0], None, "path", "the first judge's judgements are missing")
    first = read_judgements(first_paths)
    sub_ids = set(subset["unit_id"].astype(str))
    all_ids = set(units["unit_id"].astype(str))
    payload: dict[str, Any] = {
        "enabled": True,
        "judge": b6.judge,
        "first_judge": b6.first_judge,
        "n_subset_units": len(subset),
        "n_baseline_units": len(base),
        "n_human_eval_units": len(extra),
        "subset_per_bias_type": {
            str(k): int(v) for k, v in subset["bias_type"].value_counts().sort_index().items()
        },
        "images_rescored": int(len(third.drop_duplicates(["config", "unit_id", "variant", "seed"])))
        if len(third)
        else 0,
        "invalid": int((~third["valid"].astype(bool)).sum()) if "valid" in third else 0,
        "model_calls": calls,
        "cache_hits": hits,
    }
    if len(third):
        payload["table15"] = table15(
            third, first, stores, b6.judge, b6.first_judge, sub_ids, all_ids
        )
        payload["table16"] = table16(third, first, b6.baseline, b6.judge, sub_ids)
        payload["table17"] = table17(
            third,
            first,
            b6.baseline,
            configs=b6.debias_configs,
            judge=b6.judge,
            first_judge=b6.first_judge,
            subset_ids=sub_ids,
            boot=boot,
        )
        payload["agreement"] = judge_agreement(third, first, b6.baseline, b6.judge, sub_ids, units)
    payload["human_vs_judge"] = human_vs_judges(
        third if len(third) else pd.DataFrame(columns=first.columns),
        first,
        [str(root / p) for p in b6.human_manifests],
        [str(root / p) for p in b6.human_answers],
        section(raw, "human_eval", HumanEvalParams),
    )
    payload["provenance"] = merge_provenance(*blocks) if blocks else {}
    write_metrics(root / B6_METRICS, payload, "b6")
    text = tables_markdown(payload) if "table15" in payload else "B.6: no image re-scored.\n"
    atomic_write_text(root / B6_TABLE, markdown_banner(payload["provenance"]) + text)
    return payload


__all__ = [
    "B6Params",
    "b6_judge_params",
    "b6_subset",
    "plan_images",
    "baseline_units",
    "returned_units",
    "run_b6",
    "table15",
    "table16",
    "table17",
    "tables_markdown",
]
