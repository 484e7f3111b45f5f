"""Unit selection (paper Section 3.3) and what it does to the data (Tables 3, 9, 10).

Per (unit, seed) and rubric judge: dx = |s_n - s_a| - |s_n - s_s| from the 0-5 scores of the
neutral, stereotype and anti-stereotype images of that seed. A seed counts only when all three
scores are valid ("complete"); a unit's mean dx is the mean over its complete seeds, and a unit
with fewer than ``min_seeds`` complete seeds has no mean dx under that judge. Union rule: keep
a unit whose mean dx is > 0 under at least one judge; intersection: under every judge (a judge
without a mean dx for the unit counts as not positive).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.analysis.load import Tables
from implicit_bench.analysis.params import SelectParams
from implicit_bench.analysis.views import WIDE_SCORE, resolve_config, resolve_judges, rows, wide
from implicit_bench.construction.kg.stats import kg_graph_stats
from implicit_bench.errors import ConfigError
from implicit_bench.protocol.prompt_stats import Tokenised, prompt_stats
from implicit_bench.protocol.schema import BIAS_TYPES, normalise_bias_type

NEUTRAL_SCORE = ("config", "judge", "variant", "valid", "unit_id", "score")


def dx_frame(
    judgements: pd.DataFrame,
    config: str,
    judge: str,
    seeds: Sequence[int] | None = None,
    units: Sequence[str] | None = None,
) -> pd.DataFrame:
    """dx per complete (unit_id, seed) of one rubric judge: columns unit_id, seed, dx."""
    scores = wide(rows(judgements, "rubric", config, judge, seeds, units, WIDE_SCORE), "score")
    complete = scores.dropna()
    dx = (complete["neutral"] - complete["anti_stereotype"]).abs() - (
        complete["neutral"] - complete["stereotype"]
    ).abs()
    return dx.rename("dx").reset_index()


def unit_means(dx: pd.DataFrame, unit_ids: Sequence[str]) -> pd.DataFrame:
    """Mean dx and number of complete seeds per unit (NaN / 0 for units without any)."""
    grouped = dx.groupby("unit_id")["dx"].agg(mean_dx="mean", n_seeds="size")
    out = grouped.reindex(pd.Index(unit_ids, name="unit_id"))
    out["n_seeds"] = out["n_seeds"].fillna(0).astype(int)
    return out


@dataclass
class SelectionResult:
    selected: pd.DataFrame  # the kept units (UNITS columns + selected_by, mean_dx__J, n_seeds__J)
    per_unit: pd.DataFrame  # every unit: mean_dx / n_seeds / positive per judge, kept
    metrics: dict[str, Any]


def select_units(
    tables: Tables,
    params: SelectParams,
    pairs: pd.DataFrame | None = None,
    extracted: pd.DataFrame | None = None,
) -> SelectionResult:
    """Apply the selection rule and describe its effect."""
    j = tables.judgements
    units = tables.units
    config = resolve_config(j, "rubric", params.config, "select.config")
    judges = resolve_judges(j, "rubric", config, params.judges, "select.judges")
    unit_ids = units["unit_id"].tolist()
    held = sorted(set(params.held_out_seeds or []))
    seeds = params.seeds
    if seeds is None and held:  # never select on the held-out seeds
        present = rows(j, "rubric", config, columns=["seed"])["seed"].unique()
        seeds = sorted(int(s) for s in present if int(s) not in held)
    params = params.model_copy(update={"seeds": seeds})
    available = _selection_seeds(j, config, params.seeds, held)
    declared = params.min_seeds
    if declared == "all":
        params = params.model_copy(update={"min_seeds": max(len(available), 1)})
    if params.min_seeds > len(available):
        raise ConfigError(
            f"select.min_seeds = {params.min_seeds} but the rubric judgements of '{config}' have "
            f"{len(available)} selection seed(s) {available}: no unit could have a mean dx"
        )
    per_unit = pd.DataFrame(index=pd.Index(unit_ids, name="unit_id"))
    per_judge: dict[str, Any] = {}
    for judge in judges:
        means = unit_means(dx_frame(j, config, judge, params.seeds), unit_ids)
        eligible = means["n_seeds"] >= params.min_seeds
        positive = eligible & (means["mean_dx"] > 0)
        per_unit[f"mean_dx__{judge}"] = means["mean_dx"].where(eligible)
        per_unit[f"n_seeds__{judge}"] = means["n_seeds"]
        per_unit[f"positive__{judge}"] = positive
        max_seeds = int(means["n_seeds"].max()) if len(means) else 0
        per_judge[judge] = {
            "units_with_dx": int(eligible.sum()),
            "units_without_dx": int((~eligible).sum()),
            "units_fewer_complete_seeds": int(
                ((means["n_seeds"] > 0) & (means["n_seeds"] < max_seeds)).sum()
            ),
            "max_complete_seeds": max_seeds,
            "units_positive": int(positive.sum()),
            "share_positive": _share(positive.sum(), eligible.sum()),
        }
    pos = per_unit[[f"positive__{jj}" for jj in judges]].to_numpy(dtype=bool)
    union = pos.any(axis=1)
    inter = pos.all(axis=1) if judges else np.zeros(len(unit_ids), bool)
    kept = union if params.rule == "union" else inter
    per_unit["kept"] = kept
    per_unit["selected_by"] = [
        ";".join(jj for jj, p in zip(judges, row, strict=True) if p) for row in pos
    ]
    for judge in judges:
        md = per_unit[f"mean_dx__{judge}"]
        per_judge[judge]["mean_dx_all"] = _mean(md)
        per_judge[judge]["mean_dx_kept"] = _mean(md[kept])
    kept_ids = per_unit.index[kept]
    selected = units.set_index("unit_id").loc[kept_ids].reset_index()
    extra = per_unit.loc[
        kept_ids,
        ["selected_by", *[c for c in per_unit.columns if c.startswith(("mean_dx__", "n_seeds__"))]],
    ]
    selected = selected.merge(extra, left_on="unit_id", right_index=True, how="left")
    only = {jj: int((pos[:, i] & (pos.sum(axis=1) == 1)).sum()) for i, jj in enumerate(judges)}
    selected_units = units.set_index("unit_id").loc[kept_ids].reset_index()
    # the selected units' prompts are the candidates' too: split once
    tokens = Tokenised.of_frame(units)
    metrics: dict[str, Any] = {
        "config": config,
        "judges": judges,
        "rule": params.rule,
        "min_seeds": params.min_seeds,
        "min_seeds_param": declared,
        "seeds": params.seeds,
        "units_candidates": len(unit_ids),
        "units_kept": int(kept.sum()),
        "units_kept_union": int(union.sum()),
        "units_kept_intersection": int(inter.sum()),
        "kept_only_by": only,
        "candidates_by_source": _counts(units["source"]),
        "kept_by_source": _counts(units.set_index("unit_id").loc[kept_ids, "source"]),
        "per_judge": per_judge,
        "retention": retention_table(units, kept_ids, pairs, extracted).to_dict(orient="records"),
        "neutral_mean": neutral_means(j, unit_ids, kept_ids, params.seeds).to_dict(
            orient="records"
        ),
        "filter_shape": filter_shape(j, unit_ids, kept_ids, params.seeds).to_dict(orient="records"),
        "complete_seeds": complete_seeds_check(per_unit, judges, len(available), params.min_seeds),
        # Appendix B.1 and Table 18 on the candidates and on the selected units
        "graph": {"candidates": kg_graph_stats(units), "selected": kg_graph_stats(selected_units)},
        "prompt_stats": {
            "candidates": prompt_stats(units, tokens) if len(units) else {},
            "selected": prompt_stats(selected_units, tokens) if len(selected_units) else {},
        },
    }
    if "flagged_by" in units.columns:
        metrics["release_flagged_by"] = flagged_by_agreement(units, per_unit, judges)
    sample = None
    if params.held_out_sample is not None:
        sample = held_out_sample(per_unit["kept"], params.held_out_sample)
        metrics["held_out_sample"] = held_out_sample_block(per_unit, sample, params, held)
    if held:
        boot = Bootstrap.from_params(params.bootstrap)
        rendered = held_out_rendered(j, config, unit_ids, held, sample)
        metrics["held_out_rendered"] = rendered
        metrics["held_out"] = held_out(j, config, judges, per_unit, held, boot, sample)
        metrics["held_out"]["rendered"] = rendered["rendered"]
        beyond = rendered["units_rendered"] > rendered["sample_units_rendered"]
        if sample is not None and params.held_out_every_unit and beyond:
            metrics["held_out_every_unit"] = held_out(j, config, judges, per_unit, held, boot)
            metrics["held_out_every_unit"]["rendered"] = rendered["rendered"]
    metrics["other_generators"] = other_generator_lean(j, config, per_unit, params.other_configs)
    return SelectionResult(selected, per_unit.reset_index(), metrics)


def held_out_sample(kept: pd.Series, sample: Any) -> list[str]:
    """C.3's sample: ``sample.kept`` kept and ``sample.rejected`` rejected unit ids drawn
    uniformly without replacement (numpy, ``sample.seed``) from the ids in sorted order; a group
    smaller than asked is taken whole."""
    rng = np.random.default_rng(sample.seed)
    out: list[str] = []
    for want, mask in ((sample.kept, kept), (sample.rejected, ~kept)):
        ids = sorted(str(u) for u in kept.index[mask.to_numpy(dtype=bool)])
        out += rng.choice(ids, size=min(want, len(ids)), replace=False).tolist() if ids else []
    return out


def held_out_rendered(
    judgements: pd.DataFrame,
    config: str,
    unit_ids: Sequence[str],
    held: Sequence[int],
    sample: Sequence[str] | None,
) -> dict[str, Any]:
    """Which units the held-out seeds were rendered for: a unit counts when ``config`` has a
    rubric judgement of it on a held-out seed. ``rendered``: ``every_unit`` (every candidate),
    ``sample`` (exactly the C.3 sample), ``part`` (some other set) or ``none``; Table 23 is
    computed on whatever was rendered (a unit without a complete held-out seed has no dx)."""
    present = rows(judgements, "rubric", config, seeds=list(held), columns=["unit_id"])
    candidates = {str(u) for u in unit_ids}
    done = {str(u) for u in present["unit_id"].unique()} & candidates
    chosen = set(sample) if sample is not None else None
    if not done:
        which = "none"
    elif done == candidates:
        which = "every_unit"
    elif chosen is not None and done == chosen:
        which = "sample"
    else:
        which = "part"
    return {
        "seeds": list(held),
        "rendered": which,
        "units_rendered": len(done),
        "units_candidates": len(candidates),
        "sample_units": None if chosen is None else len(chosen),
        "sample_units_rendered": len(done & chosen) if chosen is not None else len(done),
    }


def held_out_sample_block(
    per_unit: pd.DataFrame, sample: Sequence[str], params: SelectParams, held: Sequence[int]
) -> dict[str, Any]:
    """C.3's sample as a stage output: the kept and rejected ids to render on new seeds
    (Table 23 reads them when ``select.held_out_seeds`` are rendered)."""
    kept = per_unit["kept"].astype(bool)
    ids = set(sample)
    rule = params.held_out_sample
    return {
        "asked": {"kept": rule.kept, "rejected": rule.rejected},
        "seed": rule.seed,
        "kept": int(kept[kept.index.isin(ids)].sum()),
        "rejected": int((~kept[kept.index.isin(ids)]).sum()),
        "kept_ids": sorted(u for u in ids if kept.get(u, False)),
        "rejected_ids": sorted(u for u in ids if not kept.get(u, False)),
        "held_out_seeds": list(held) or None,
        "note": "uniform random sample without replacement; a group smaller than asked is "
        "taken whole (App. C.3: 300 kept + 300 rejected)"
        + ("" if held else "; render these units on select.held_out_seeds for Table 23"),
    }


def other_generator_lean(
    judgements: pd.DataFrame,
    selection_config: str,
    per_unit: pd.DataFrame,
    configs: Sequence[str] | None,
) -> dict[str, Any]:
    """C.3: per configuration other than the selection's and per rubric judge, the share of kept
    and of rejected units whose mean dx over that configuration's seeds is > 0 (SD3 in the
    paper: 50.4% of kept, 17.5% of rejected units), with the units that have a mean dx."""
    rubric = judgements[judgements["task"] == "rubric"]
    present = sorted(str(c) for c in rubric["config"].unique() if str(c) != selection_config)
    chosen = present if configs is None else [str(c) for c in configs]
    missing = [c for c in chosen if c not in present]
    if missing:
        raise ConfigError(
            f"select.other_configs: {missing} have no rubric judgements "
            f"(configurations with them: {present or 'none'} besides {selection_config})"
        )
    kept = per_unit["kept"].astype(bool)
    unit_ids = per_unit.index.tolist()
    out: dict[str, Any] = {}
    for config in chosen:
        out[config] = {}
        for judge in sorted(rubric.loc[rubric["config"] == config, "judge"].astype(str).unique()):
            means = unit_means(dx_frame(judgements, config, judge), unit_ids)["mean_dx"]
            out[config][judge] = {
                group: {
                    "units": int(means[mask].notna().sum()),
                    "share_positive": _share((means[mask] > 0).sum(), means[mask].notna().sum()),
                    "mean_dx": _mean(means[mask]),
                }
                for group, mask in (("kept", kept), ("rejected", ~kept))
            }
    return out


def _selection_seeds(
    j: pd.DataFrame, config: str, seeds: Sequence[int] | None, held: Sequence[int]
) -> list[int]:
    """The seeds selection averages over: ``seeds`` when given, else every rubric seed of the
    configuration that is not held out."""
    if seeds is not None:
        return sorted(int(s) for s in seeds)
    present = rows(j, "rubric", config, columns=["seed"])["seed"].unique()
    return sorted(int(s) for s in present if int(s) not in set(held))


def complete_seeds_check(
    per_unit: pd.DataFrame, judges: Sequence[str], n_seeds: int, min_seeds: int
) -> dict[str, Any]:
    """Section 3.3 averages dx over a unit's seeds; a seed counts only when it is complete.
    Per judge: units with all ``n_seeds`` complete, units whose mean rests on fewer (at least
    ``min_seeds``), and kept units whose decision under that judge rests on fewer seeds."""
    out: dict[str, Any] = {"selection_seeds": n_seeds, "min_seeds": min_seeds, "judges": {}}
    for judge in judges:
        n = per_unit[f"n_seeds__{judge}"]
        positive = per_unit[f"positive__{judge}"]
        out["judges"][judge] = {
            "units_all_seeds_complete": int((n == n_seeds).sum()),
            "units_mean_on_fewer_seeds": int(((n >= min_seeds) & (n < n_seeds)).sum()),
            "units_below_min_seeds": int((n < min_seeds).sum()),
            "kept_on_fewer_seeds": int((positive & (n < n_seeds)).sum()),
        }
    return out


def flagged_by_agreement(
    units: pd.DataFrame, per_unit: pd.DataFrame, judges: Sequence[str]
) -> dict[str, Any]:
    """Agreement of the recomputed positive-lean judges with a released ``flagged_by`` column
    (``both`` = every judge, ``<prefix>_only`` = the one judge whose name starts with the
    prefix, e.g. ``qwen_only`` -> ``qwen3vl``); units with another value are not compared."""

    def expected(value: Any) -> frozenset[str] | None:
        text = str(value).strip().lower()
        if text == "both":
            return frozenset(judges)
        if text.endswith("_only"):
            hits = [jj for jj in judges if jj.lower().startswith(text[: -len("_only")])]
            return frozenset(hits) if len(hits) == 1 else None
        return None

    flags = units.set_index("unit_id")["flagged_by"].map(expected)
    got = per_unit[[f"positive__{jj}" for jj in judges]]
    if not got.index.is_unique:  # as the lookup by unit id did: one value per unit
        raise ValueError("flagged_by_agreement: per-unit rows repeat a unit id")
    positions = got.index.get_indexer(flags.index)
    if (positions < 0).any():
        raise KeyError(flags.index[positions < 0][0])
    positive = got.to_numpy(dtype=object)[positions].tolist()
    compared = agree = 0
    for want, row in zip(flags.tolist(), positive, strict=True):
        if want is None:
            continue
        have = frozenset(jj for jj, value in zip(judges, row, strict=True) if bool(value))
        compared += 1
        agree += int(have == want)
    return {
        "units_compared": compared,
        "units_agreeing": agree,
        "share_agreeing": _share(agree, compared),
    }


def held_out(
    judgements: pd.DataFrame,
    config: str,
    judges: Sequence[str],
    per_unit: pd.DataFrame,
    held: Sequence[int],
    boot: Bootstrap,
    sample: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Table 23 (App. C.3): mean dx and share of units with mean dx > 0, for kept and rejected
    units, on the selection seeds and on ``held`` seeds; and, per judge, the share of kept units
    leaning under that judge on the selection seeds that lean again on the held-out seeds.
    ``sample``: only these units (C.3's random 300 kept + 300 rejected; ``held_out_sample``)."""
    out: dict[str, Any] = {"seeds": list(held), "judges": {}, "bootstrap": boot.block()}
    if sample is not None:
        per_unit = per_unit.loc[list(sample)]
        out["sample"] = {
            "kept": int(per_unit["kept"].sum()),
            "rejected": int((~per_unit["kept"].astype(bool)).sum()),
            "unit_ids": sorted(sample),
        }
    kept = per_unit["kept"].astype(bool)
    for judge in judges:
        sel = per_unit[f"mean_dx__{judge}"]
        new = unit_means(dx_frame(judgements, config, judge, held), per_unit.index.tolist())[
            "mean_dx"
        ]
        entry: dict[str, Any] = {}
        for group, mask in (("kept", kept), ("rejected", ~kept)):
            entry[group] = {
                "units_selection_seeds": int(sel[mask].notna().sum()),
                "mean_dx_selection_seeds": _mean(sel[mask]),
                "share_positive_selection_seeds": _share(
                    (sel[mask] > 0).sum(), sel[mask].notna().sum()
                ),
                "units_held_out_seeds": int(new[mask].notna().sum()),
                "mean_dx_held_out_seeds": _mean(new[mask]),
                "share_positive_held_out_seeds": _share(
                    (new[mask] > 0).sum(), new[mask].notna().sum()
                ),
            }
        leaned = kept & (sel > 0) & new.notna()
        again = (new[leaned] > 0).to_numpy(dtype=float)
        interval, _ = boot.ratio(again, np.ones_like(again), f"held_out/{config}/{judge}")
        entry["kept_leaning_again"] = interval
        out["judges"][judge] = entry
    return out


def _share(num: float, den: float) -> float | None:
    return float(num) / float(den) if den else None


def _mean(series: pd.Series) -> float | None:
    series = series.dropna()
    return float(series.mean()) if len(series) else None


def _counts(series: pd.Series) -> dict[str, int]:
    return {str(k): int(v) for k, v in series.value_counts().sort_index().items()}


def retention_table(
    units: pd.DataFrame,
    kept_ids: Sequence[str],
    pairs: pd.DataFrame | None,
    extracted: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Table 9: per bias type, raw upstream pairs (when given), post-extraction units (every
    unit the KG stage extracted, when given), candidate units (those selection judged: the
    subset), kept units; retention of kept against each."""
    cand = units["bias_type"].value_counts()
    kept = units.set_index("unit_id").loc[list(kept_ids), "bias_type"].value_counts()
    raw = pairs["bias_type"].map(normalise_bias_type).value_counts() if pairs is not None else None
    ext = (
        extracted["bias_type"].map(normalise_bias_type).value_counts()
        if extracted is not None
        else None
    )
    types = [
        t
        for t in BIAS_TYPES
        if t in cand.index
        or (raw is not None and t in raw.index)
        or (ext is not None and t in ext.index)
    ]
    out = pd.DataFrame({"bias_type": types})
    out["raw_upstream"] = [int(raw.get(t, 0)) for t in types] if raw is not None else None
    out["post_extraction"] = [int(ext.get(t, 0)) for t in types] if ext is not None else None
    out["candidates"] = [int(cand.get(t, 0)) for t in types]
    out["kept"] = [int(kept.get(t, 0)) for t in types]
    out["retention_of_candidates"] = [
        k / c if c else None for k, c in zip(out["kept"], out["candidates"], strict=True)
    ]
    out["retention_of_raw"] = (
        [k / r if r else None for k, r in zip(out["kept"], out["raw_upstream"], strict=True)]
        if raw is not None
        else None
    )
    out["retention_of_extracted"] = (
        [k / e if e else None for k, e in zip(out["kept"], out["post_extraction"], strict=True)]
        if ext is not None
        else None
    )
    total = {
        "bias_type": "all",
        "raw_upstream": int(raw.sum()) if raw is not None else None,
        "post_extraction": int(ext.sum()) if ext is not None else None,
        "candidates": int(cand.sum()),
        "kept": int(kept.sum()),
    }
    total["retention_of_candidates"] = (
        total["kept"] / total["candidates"] if total["candidates"] else None
    )
    total["retention_of_raw"] = (
        total["kept"] / total["raw_upstream"] if total["raw_upstream"] else None
    )
    total["retention_of_extracted"] = (
        total["kept"] / total["post_extraction"] if total["post_extraction"] else None
    )
    return pd.concat([out, pd.DataFrame([total])], ignore_index=True)


def neutral_means(
    judgements: pd.DataFrame,
    all_ids: Sequence[str],
    kept_ids: Sequence[str],
    seeds: Sequence[int] | None,
) -> pd.DataFrame:
    """Table 3: mean neutral rubric score / CLIP lean per (config, scorer), all vs kept units."""
    records = []
    every, kept = set(all_ids), set(kept_ids)
    for task in ("rubric", "clip_lean"):
        sub = rows(judgements, task, seeds=seeds, columns=NEUTRAL_SCORE)
        sub = sub[(sub["variant"] == "neutral") & sub["valid"]]
        sub = sub.assign(_all=sub["unit_id"].isin(every), _kept=sub["unit_id"].isin(kept))
        for (config, judge), grp in sub.groupby(["config", "judge"], sort=True):
            before = grp.loc[grp["_all"], "score"]
            after = grp.loc[grp["_kept"], "score"]
            records.append(
                {
                    "config": config,
                    "judge": judge,
                    "task": task,
                    "n_before": int(before.size),
                    "mean_before": _mean(before),
                    "n_after": int(after.size),
                    "mean_after": _mean(after),
                }
            )
    return pd.DataFrame(
        records,
        columns=["config", "judge", "task", "n_before", "mean_before", "n_after", "mean_after"],
    )


def filter_shape(
    judgements: pd.DataFrame,
    all_ids: Sequence[str],
    kept_ids: Sequence[str],
    seeds: Sequence[int] | None,
) -> pd.DataFrame:
    """Table 10: S-N and S-A (differences of variant means over images), before and after."""
    records = []
    sub = rows(judgements, "rubric", seeds=seeds, columns=NEUTRAL_SCORE)
    sub = sub[sub["valid"]]
    sub = sub.assign(
        _pre=sub["unit_id"].isin(set(all_ids)), _post=sub["unit_id"].isin(set(kept_ids))
    )
    for (config, judge), grp in sub.groupby(["config", "judge"], sort=True):
        rec: dict[str, Any] = {"config": config, "judge": judge}
        for when in ("pre", "post"):
            means = grp[grp[f"_{when}"]].groupby("variant")["score"].mean()
            s, n, a = (means.get(v, np.nan) for v in ("stereotype", "neutral", "anti_stereotype"))
            rec[f"s_minus_n_{when}"] = _none(s - n)
            rec[f"s_minus_a_{when}"] = _none(s - a)
        for what in ("s_minus_n", "s_minus_a"):
            pre, post = rec[f"{what}_pre"], rec[f"{what}_post"]
            rec[f"{what}_delta"] = None if pre is None or post is None else post - pre
        records.append(rec)
    cols = [
        "config",
        "judge",
        "s_minus_n_pre",
        "s_minus_n_post",
        "s_minus_n_delta",
        "s_minus_a_pre",
        "s_minus_a_post",
        "s_minus_a_delta",
    ]
    return pd.DataFrame(records, columns=cols)


def _none(value: float) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)
