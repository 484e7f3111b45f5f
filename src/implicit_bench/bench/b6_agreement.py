"""Appendix B.6's judge correlations beside Tables 15-17 (stage ``b6``, ``agreement`` block).

On the subset's baseline images (the images of Table 16), with every rubric judge of the
baseline (the construction judges from ``b6.judgements``, then the third judge):

- ``image_pearson``: per-image Pearson r between each pair of judges (``scipy.stats.pearsonr``)
  over the images every judge scored validly (the paper: 0.42 third vs Qwen3-VL, 0.55 third vs
  Gemma-4, 0.64 between the construction judges);
- ``dx_by_type`` / ``spearman_dx``: per bias type, Cohen's d of dx (mean / SD, ddof 1, over the
  (unit, seed) instances, ``analysis.lean.lean_summary``), and Spearman's rho of those per-type
  values between each pair of judges (``scipy.stats.spearmanr``; the paper: 0.97 / 0.43 / 0.42);
- ``g_by_type`` / ``spearman_g``: per bias type, Hedges' g of stereotype vs anti-stereotype
  scores (``analysis.bootstrap.hedges_g``) and the same rho (the paper: 0.54 / 0.55 / 0.84);
- ``human_vs_judge``: each judge's Pearson r with the per-image human mean, from rating bundles
  (``b6.human_manifests`` + ``b6.human_answers``, through ``human_eval.study.study_report``:
  its rater screening and Fisher interval); unavailable, with the reason, without them.

A rho needs at least ``MIN_TYPES`` bias types with a value under both judges (else None).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import pearsonr, spearmanr

from implicit_bench._util.numbers import finite
from implicit_bench.analysis.bootstrap import hedges_g
from implicit_bench.analysis.lean import lean_summary
from implicit_bench.analysis.selection import dx_frame

MIN_TYPES = 3  # bias types a Spearman rho needs
IMAGE = ["unit_id", "variant", "seed"]


def baseline_scores(
    third: pd.DataFrame, first: pd.DataFrame, baseline: str, judge: str, subset_ids: set[str]
) -> tuple[pd.DataFrame, list[str]]:
    """The valid rubric scores of the baseline's subset images by every judge (columns config,
    task, unit_id, variant, seed, judge, score, valid), restricted to the images every judge
    scored; the judges, construction judges sorted then ``judge``."""
    rub = pd.concat(
        [f[(f["config"] == baseline) & (f["task"] == "rubric")] for f in (first, third)],
        ignore_index=True,
    )
    rub = rub.assign(unit_id=rub["unit_id"].astype(str), judge=rub["judge"].astype(str))
    rub = rub[rub["unit_id"].isin(subset_ids)]
    valid = rub["valid"].fillna(False).astype(bool) if "valid" in rub else True
    rub = rub.assign(score=pd.to_numeric(rub["value"].where(valid), errors="coerce"))
    rub = rub[rub["score"].notna()].assign(valid=True, seed=rub["seed"].astype(int))
    judges = [*sorted(set(rub["judge"]) - {judge}), judge] if judge in set(rub["judge"]) else []
    judges = judges or sorted(set(rub["judge"]))
    counts = rub.drop_duplicates([*IMAGE, "judge"]).groupby(IMAGE)["judge"].nunique()
    common = counts[counts == len(judges)].index
    keep = pd.MultiIndex.from_frame(rub[IMAGE]).isin(common)
    cols = ["config", "task", *IMAGE, "judge", "score", "valid"]
    return rub.loc[keep, cols].reset_index(drop=True), judges


def _pair_keys(judges: Sequence[str]) -> list[tuple[str, str]]:
    """Pairs with the third judge (last) first, then the construction judges' pairs."""
    pairs = list(combinations(judges, 2))
    return sorted(pairs, key=lambda p: (judges[-1] not in p, p))


def image_pearson(scores: pd.DataFrame, judges: Sequence[str]) -> dict[str, Any]:
    """Per pair ``a~b``: Pearson r (and p) over the images both scored, n_images."""
    table = scores.pivot_table(index=IMAGE, columns="judge", values="score", aggfunc="first")
    out: dict[str, Any] = {}
    for a, b in _pair_keys(judges):
        both = table[[a, b]].dropna() if {a, b} <= set(table.columns) else pd.DataFrame()
        x, y = (both[c].to_numpy(float) for c in (a, b)) if len(both) else (np.array([]),) * 2
        if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
            out[f"{a}~{b}"] = {"r": None, "p": None, "n_images": int(len(x))}
            continue
        res = pearsonr(x, y)
        out[f"{a}~{b}"] = {
            "r": finite(res.statistic),
            "p": finite(res.pvalue),
            "n_images": int(len(x)),
        }
    return out


def dx_by_type(
    scores: pd.DataFrame, config: str, judges: Sequence[str], types: pd.Series
) -> dict[str, dict[str, Any]]:
    """Per judge and bias type (``types``: bias type by unit id): n instances, mean dx and
    Cohen's d of dx."""
    out: dict[str, dict[str, Any]] = {}
    for judge in judges:
        dx = dx_frame(scores, config, judge)
        dx = dx.assign(bias_type=dx["unit_id"].map(types))
        out[judge] = {
            str(t): {
                k: lean_summary(grp[["unit_id", "seed", "dx"]], None, "")[k]
                for k in ("n", "mean", "cohens_d")
            }
            for t, grp in dx.groupby("bias_type", sort=True)
        }
    return out


def g_by_type(
    scores: pd.DataFrame, judges: Sequence[str], types: pd.Series
) -> dict[str, dict[str, float | None]]:
    """Per judge and bias type: Hedges' g of the stereotype vs anti-stereotype scores."""
    ex = scores[scores["variant"].isin(["stereotype", "anti_stereotype"])]
    ex = ex.assign(bias_type=ex["unit_id"].map(types), sq=ex["score"] ** 2, one=1.0)
    sums = ex.groupby(["judge", "bias_type", "variant"])[["one", "score", "sq"]].sum()
    out: dict[str, dict[str, float | None]] = {}
    for judge in judges:
        out[judge] = {}
        if judge not in sums.index.get_level_values("judge"):
            continue
        mine = sums.loc[judge]
        for t in sorted(mine.index.get_level_values("bias_type").unique()):
            part = mine.loc[t].reindex(["stereotype", "anti_stereotype"], fill_value=0.0)
            s, a = part.loc["stereotype"], part.loc["anti_stereotype"]
            g = hedges_g(s["one"], s["score"], s["sq"], a["one"], a["score"], a["sq"])
            out[judge][str(t)] = finite(g)
    return out


def rank_agreement(
    values: dict[str, dict[str, float | None]], judges: Sequence[str]
) -> dict[str, Any]:
    """Per pair ``a~b``: Spearman rho (and p) of the per-type values both judges have."""
    out: dict[str, Any] = {}
    for a, b in _pair_keys(judges):
        va, vb = values.get(a, {}), values.get(b, {})
        common = sorted(t for t in va if va[t] is not None and vb.get(t) is not None)
        entry: dict[str, Any] = {"rho": None, "p": None, "n_types": len(common)}
        if len(common) >= MIN_TYPES:
            res = spearmanr([va[t] for t in common], [vb[t] for t in common])
            entry.update(rho=finite(res.statistic), p=finite(res.pvalue))
        out[f"{a}~{b}"] = entry
    return out


def judge_agreement(
    third: pd.DataFrame,
    first: pd.DataFrame,
    baseline: str,
    judge: str,
    subset_ids: set[str],
    units: pd.DataFrame,
) -> dict[str, Any]:
    """The ``agreement`` block: image Pearson r, per-type dx d and Hedges' g with their rho."""
    scores, judges = baseline_scores(third, first, baseline, judge, subset_ids)
    types = units.assign(unit_id=units["unit_id"].astype(str)).set_index("unit_id")["bias_type"]
    dx = dx_by_type(scores, baseline, judges, types)
    dx_d = {j: {t: e["cohens_d"] for t, e in per.items()} for j, per in dx.items()}
    g = g_by_type(scores, judges, types)
    return {
        "judges": judges,
        "n_images": int(len(scores.drop_duplicates(IMAGE))),
        "image_pearson": image_pearson(scores, judges),
        "dx_by_type": dx,
        "spearman_dx": rank_agreement(dx_d, judges),
        "g_by_type": g,
        "spearman_g": rank_agreement(g, judges),
    }


def human_vs_judges(
    third: pd.DataFrame,
    first: pd.DataFrame,
    manifests: list[str],
    answers: list[str],
    params: Any,
) -> dict[str, Any]:
    """Each judge's Pearson r with the per-image human mean on the rated images (the rating
    bundles' config), through ``study_report``; ``available: false`` with the reason when no
    answers are given."""
    if not answers or not manifests:
        return {
            "available": False,
            "reason": "no human ratings: b6.human_manifests / b6.human_answers are empty "
            "(collect them with implicit-bench human-eval export / import, docs/human-eval.md)",
        }
    from implicit_bench.human_eval.answers import load_manifests, read_answers
    from implicit_bench.human_eval.study import study_report

    loaded = load_manifests(list(manifests))
    ratings, kg, counts = read_answers(list(answers), loaded)
    configs = {m["sampling"]["config"] for m in loaded.values()}
    rub = pd.concat([first, third], ignore_index=True)
    rub = rub[(rub["task"] == "rubric") & rub["config"].astype(str).isin(configs)]
    valid = rub["valid"].fillna(False).astype(bool)
    scores = rub[valid].assign(
        unit_id=lambda f: f["unit_id"].astype(str),
        seed=lambda f: f["seed"].astype(int),
        judge=lambda f: f["judge"].astype(str),
        score=lambda f: pd.to_numeric(f["value"], errors="coerce"),
    )[["unit_id", "variant", "seed", "judge", "score"]]
    report = study_report(ratings, kg, scores, params, bundles=sorted(loaded), answers=counts)
    return {
        "available": True,
        "n_images": report["n_images"],
        "n_raters": report["n_raters"],
        "by_judge": report["human_vs_judge"],
    }


__all__ = [
    "baseline_scores",
    "dx_by_type",
    "g_by_type",
    "human_vs_judges",
    "image_pearson",
    "judge_agreement",
    "rank_agreement",
]
