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

The statistics live in ``analysis.judge_agreement`` (``evaluate`` reports the same block for a
configuration's rubric judges); a rho needs at least three bias types under both judges.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from implicit_bench.analysis.judge_agreement import (
    agreement_block,
    common_scores,
    dx_by_type,
    g_by_type,
    image_pearson,
    rank_agreement,
)


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
    return common_scores(rub, subset_ids, judge)


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
    return agreement_block(scores, judges, baseline, units)


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
    "agreement_block",
    "baseline_scores",
    "common_scores",
    "dx_by_type",
    "g_by_type",
    "human_vs_judges",
    "image_pearson",
    "judge_agreement",
    "rank_agreement",
]
