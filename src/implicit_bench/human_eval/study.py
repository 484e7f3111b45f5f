"""The human-study report of ``human-eval import`` (Tables 28-30, Appendix D.2/D.4), from the
answers that ``answers.py`` read and checked.

Every bundle is one round: rater screening and inter-rater statistics are computed within a
round and averaged over rounds; human-judge agreement uses every kept rating.
"""

from __future__ import annotations

import glob
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.closed_form import fisher_z_test
from implicit_bench._util.numbers import rounded
from implicit_bench.errors import InputError
from implicit_bench.human_eval.answers import read_answers
from implicit_bench.human_eval.bundle import HumanEvalParams
from implicit_bench.human_eval.form import KG_ANSWERS
from implicit_bench.human_eval.stats import (
    krippendorff_alpha,
    loo_correlations,
    mae,
    mean_pairwise_by_rater,
    mean_pairwise_r,
    pearson_ci,
)
from implicit_bench.protocol.estimate import estimate_json
from implicit_bench.protocol.schema import VARIANTS
from implicit_bench.protocol.tables.judgements import read_judgements
from implicit_bench.runtime.provenance import provenance

R_LEVEL = 0.95  # Fisher-z interval of the human-judge Pearson r
SCREEN_RULES = ("loo_mean", "mean_pairwise", "none")


def _matrix(ratings: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """raters x images (case, position) matrix of one round; NaN = not rated."""
    wide = ratings.pivot_table(
        index="rater", columns=["case", "position"], values="rating", aggfunc="first"
    )
    return wide.to_numpy(dtype=float), [str(r) for r in wide.index]


def screen_raters(
    ratings: pd.DataFrame, threshold: float, rule: str, min_pairs: int
) -> pd.DataFrame:
    """Per round and rater: agreement with the other raters; ``kept`` = agreement >= threshold.

    rule ``loo_mean``: Pearson r with the mean of the other raters' ratings of the same
    images; ``mean_pairwise``: mean of the Pearson r with each other rater (the paper's rule,
    Appendix D.4); ``none``: every rater kept (both values still reported). An undefined r
    (constant ratings, too few shared images) fails the screen."""
    rows = []
    for bundle, part in ratings.groupby("bundle_id"):
        matrix, raters = _matrix(part)
        loo = loo_correlations(matrix, min_pairs)
        pair = mean_pairwise_by_rater(matrix, min_pairs)
        chosen = loo if rule == "loo_mean" else pair
        if rule not in SCREEN_RULES:
            raise ValueError(
                f"unknown screen_rule {rule!r}; expected one of {', '.join(SCREEN_RULES)}"
            )
        for i, rater in enumerate(raters):
            rows.append(
                {
                    "bundle_id": bundle,
                    "rater": rater,
                    "n_ratings": int((~np.isnan(matrix[i])).sum()),
                    "r_loo_mean": rounded(loo[i], 6),
                    "r_mean_pairwise": rounded(pair[i], 6),
                    "kept": bool(not math.isnan(chosen[i]) and chosen[i] >= threshold)
                    if len(raters) > 1 and rule != "none"
                    else True,
                }
            )
    return pd.DataFrame(
        rows, columns=["bundle_id", "rater", "n_ratings", "r_loo_mean", "r_mean_pairwise", "kept"]
    )


def judge_scores(
    paths: list[str], manifests: dict[str, dict[str, Any]], root: Path
) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """Rubric scores of the rated images: unit_id, variant, seed, judge, score (+ models)."""
    files = sorted({f for pattern in paths for f in glob.glob(str(root / pattern))})
    empty = pd.DataFrame(columns=["unit_id", "variant", "seed", "judge", "score"])
    if not files:
        return empty, []
    frames = [read_judgements(f).assign(_file=f) for f in files]
    j = pd.concat(frames, ignore_index=True)
    configs = {m["sampling"]["config"] for m in manifests.values()}
    j = j[(j["task"] == "rubric") & j["valid"] & j["config"].astype(str).isin(configs)]
    wanted = {
        (str(c["unit_id"]), v, int(c["seed"]))
        for m in manifests.values()
        for c in m["cases"]
        for v in VARIANTS
    }
    keys = list(zip(j["unit_id"], j["variant"], j["seed"].astype(int), strict=True))
    j = j[[k in wanted for k in keys]]
    dup = j.duplicated(["config", "unit_id", "variant", "seed", "judge"], keep=False)
    if dup.any():
        row = j[dup].iloc[0]
        raise InputError(
            row["_file"],
            f"{row['unit_id']}/{row['variant']}/{row['seed']}",
            "judge",
            f"duplicate rubric judgements by {row['judge']}",
        )
    models = []
    if "model" in j.columns:
        models = [("judge", str(m)) for m in sorted(j["model"].dropna().astype(str).unique())]
    out = j.assign(score=pd.to_numeric(j["value"], errors="coerce"), seed=j["seed"].astype(int))
    return out[["unit_id", "variant", "seed", "judge", "score"]], models


def _inter_rater(ratings: pd.DataFrame, min_pairs: int) -> dict[str, Any]:
    """Mean pairwise r within each round, averaged over rounds; ordinal alpha over every round's
    images at once, each round's raters their own rows (a coincidence pairs two ratings of one
    image, so pairs stay within a round): the paper's per-type alpha (Table 30; averaging the
    rounds' alphas instead gives religion 0.40, age 0.44, socioeconomic 0.40 against its 0.46,
    0.41, 0.42)."""
    per_round = {}
    for bundle, part in ratings.groupby("bundle_id"):
        matrix, _ = _matrix(part)
        r, n_pairs = mean_pairwise_r(matrix, min_pairs)
        per_round[str(bundle)] = {
            "mean_pairwise_r": rounded(r, 6),
            "n_pairs": n_pairs,
            "alpha_ordinal": rounded(krippendorff_alpha(matrix, "ordinal"), 6),
            "n_raters": int(matrix.shape[0]),
        }
    rs = [v["mean_pairwise_r"] for v in per_round.values() if v["mean_pairwise_r"] is not None]
    keyed = ratings.assign(
        _rater=ratings["bundle_id"].astype(str) + "\x00" + ratings["rater"].astype(str)
    )
    pooled = (
        keyed.pivot_table(
            index="_rater",
            columns=["bundle_id", "case", "position"],
            values="rating",
            aggfunc="first",
        )
        if len(ratings)
        else None
    )
    alpha = (
        krippendorff_alpha(pooled.to_numpy(dtype=float), "ordinal")
        if pooled is not None
        else math.nan
    )
    return {
        "mean_pairwise_r": rounded(float(np.mean(rs)), 6) if rs else None,
        "alpha_ordinal": rounded(alpha, 6),
        "rounds": per_round,
    }


def _versus_judges(images: pd.DataFrame, judges: list[str]) -> dict[str, Any]:
    """Per judge: Pearson r (an Estimate: Fisher 95% CI, n = images) and MAE of the per-image
    human mean, n images."""
    out = {}
    for judge in judges:
        x, y = (
            images["human_mean"].to_numpy(float),
            images.get(f"judge:{judge}", pd.Series(np.nan, index=images.index)).to_numpy(float),
        )
        r, ci, n = pearson_ci(x, y, R_LEVEL)
        out[judge] = {
            "r": estimate_json(r, ci, n, R_LEVEL),
            "mae": rounded(mae(x, y), 6),
            "n_images": n,
        }
    return out


def _flips(images: pd.DataFrame, judges: list[str]) -> dict[str, Any]:
    """Cases where a judge orders the stereotype and anti-stereotype images opposite to the
    human mean (strictly opposite signs of S - A); ties on either side are counted apart.
    ``disagree_gt``: cases where "S rated above A" is true for one and false for the other (the
    authors' ``scripts/analyze_human_eval.py`` direction check: a tie counts against a strict
    order), the rule behind the paper's 12 / 16 of 100 (Appendix D.2)."""
    out = {}
    wide = images.pivot_table(
        index=["bundle_id", "case"],
        columns="variant",
        values=["human_mean", *[f"judge:{j}" for j in judges]],
        aggfunc="first",
    )
    for judge in judges:
        col = f"judge:{judge}"
        try:
            human = wide[("human_mean", "stereotype")] - wide[("human_mean", "anti_stereotype")]
            model = wide[(col, "stereotype")] - wide[(col, "anti_stereotype")]
        except KeyError:
            out[judge] = {"flips": None, "cases": 0, "ties": 0, "share": None, "disagree_gt": None}
            continue
        both = human.notna() & model.notna()
        flips = int(((human * model) < 0)[both].sum())
        ties = int(((human == 0) | (model == 0))[both].sum())
        cases = int(both.sum())
        disagree = int(((human > 0) != (model > 0))[both].sum())
        out[judge] = {
            "flips": flips,
            "cases": cases,
            "ties": ties,
            "share": rounded(flips / cases, 6) if cases else None,
            "disagree_gt": disagree,
        }
    return out


def human_eval_report(
    manifests: dict[str, dict[str, Any]],
    answer_paths: list[str | Path],
    params: HumanEvalParams,
    root: str | Path = ".",
) -> dict[str, Any]:
    """The report of rating bundles: answers checked against their manifests, judge scores from
    the rubric judgements (``params.judgements``)."""
    ratings, kg, counts = read_answers(answer_paths, manifests)
    scores, models = judge_scores(params.judgements, manifests, Path(root))
    return study_report(
        ratings, kg, scores, params, models=models, bundles=sorted(manifests), answers=counts
    )


def study_report(
    ratings: pd.DataFrame,
    kg: pd.DataFrame,
    scores: pd.DataFrame,
    params: HumanEvalParams,
    *,
    models: list[tuple[str, str]] | None = None,
    bundles: list[str] | None = None,
    answers: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Tables 28-30 and D.2 from long-form frames (``read_answers`` columns; ``scores``:
    unit_id, variant, seed, judge, score). One ``bundle_id`` = one round; the release's Google
    Form rounds come in through :mod:`implicit_bench.release.human_study`."""
    models = models or []
    counts = answers or {}
    screening = screen_raters(
        ratings, params.screen_threshold, params.screen_rule, params.min_pairs
    )
    kept_keys = set(
        zip(
            screening.loc[screening["kept"], "bundle_id"],
            screening.loc[screening["kept"], "rater"],
            strict=True,
        )
    )
    all_raters = set(zip(ratings["bundle_id"], ratings["rater"], strict=True)) | set(
        zip(kg["bundle_id"], kg["rater"], strict=True)
    )
    kept_keys |= {
        k
        for k in all_raters
        if k not in set(zip(screening["bundle_id"], screening["rater"], strict=True))
    }
    ratings = ratings[
        [k in kept_keys for k in zip(ratings["bundle_id"], ratings["rater"], strict=True)]
    ]
    kg = kg[[k in kept_keys for k in zip(kg["bundle_id"], kg["rater"], strict=True)]]

    judges = sorted(scores["judge"].astype(str).unique())
    images = ratings.groupby(
        ["bundle_id", "case", "position", "unit_id", "bias_type", "variant", "seed"], as_index=False
    ).agg(human_mean=("rating", "mean"), n_raters=("rating", "size"))
    for judge in judges:
        part = scores[scores["judge"] == judge][["unit_id", "variant", "seed", "score"]].rename(
            columns={"score": f"judge:{judge}"}
        )
        images = images.merge(part, on=["unit_id", "variant", "seed"], how="left")

    kg_counts = kg["answer"].value_counts()
    n_kg = int(len(kg))
    report: dict[str, Any] = {
        "provenance": provenance(models),
        "bundles": bundles
        if bundles is not None
        else sorted(ratings["bundle_id"].astype(str).unique()),
        "n_raters": int(len({r for _, r in kept_keys})),
        "n_raters_per_round": {
            str(b): int(n) for b, n in ratings.groupby("bundle_id")["rater"].nunique().items()
        },
        "n_cases": int(images[["bundle_id", "case"]].drop_duplicates().shape[0]),
        "n_images": int(len(images)),
        "n_ratings": int(len(ratings)),
        "n_ratings_by_variant": {v: int((ratings["variant"] == v).sum()) for v in VARIANTS},
        "n_kg_answers": n_kg,
        "answers": counts,
        "kg_validity": {
            a: rounded(kg_counts.get(a, 0) / n_kg, 6) if n_kg else None for a in KG_ANSWERS
        },
        "mean_rating": {
            v: rounded(ratings.loc[ratings["variant"] == v, "rating"].mean(), 6) for v in VARIANTS
        },
        "mean_rating_of_image_means": {
            v: rounded(images.loc[images["variant"] == v, "human_mean"].mean(), 6) for v in VARIANTS
        },
        "inter_rater": _inter_rater(ratings, params.min_pairs),
        "human_vs_judge": _versus_judges(images, judges),
        "direction_flips": _flips(images, judges),
        "screening": {
            "rule": params.screen_rule,
            "threshold": params.screen_threshold,
            "excluded": screening.loc[
                ~screening["kept"], ["bundle_id", "rater", "r_loo_mean", "r_mean_pairwise"]
            ].to_dict("records"),
            "raters": screening.to_dict("records"),
        },
        "by_bias_type": {},
        "groups": {},
        "group_tests": {},
    }

    def subset(rows: pd.DataFrame, bias_types: set[str]) -> dict[str, Any]:
        sub_r = ratings[ratings["bias_type"].isin(bias_types)]
        sub_i = images[images["bias_type"].isin(bias_types)]
        cases = int(sub_i[["bundle_id", "case"]].drop_duplicates().shape[0])
        entry = {
            "cases": cases,
            "images": int(len(sub_i)),
            "directional_only": cases < params.directional_below,
        }
        entry.update(_inter_rater(sub_r, params.min_pairs))
        entry.pop("rounds")
        if cases < 2:  # Table 30: "rests on a single case, so its inter-rater r-bar is omitted"
            entry["mean_pairwise_r"] = None
            entry["mean_pairwise_r_omitted"] = (
                "one case: a correlation over its three images says little"
            )
        entry["human_vs_judge"] = _versus_judges(sub_i, judges)
        return entry

    for bias in sorted(images["bias_type"].unique()):
        report["by_bias_type"][bias] = subset(images, {bias})
    present = set(images["bias_type"].unique())
    for name, members in params.groups.items():
        report["groups"][name] = subset(images, set(members) & present)
        others = present - set(members)
        report["groups"][f"not {name}"] = subset(images, others)
        for key in (
            name,
            f"not {name}",
        ):  # Table 30: "Grouped alpha is omitted because a single ordinal
            group = report["groups"][
                key
            ]  # scale fitted across heterogeneous categories is not meaningful"
            group["alpha_ordinal_pooled"], group["alpha_ordinal"] = group["alpha_ordinal"], None
        report["group_tests"][name] = _group_tests(images, set(members) & present, others, judges)
    return report


def _group_tests(
    images: pd.DataFrame, inside: set[str], outside: set[str], judges: list[str]
) -> dict[str, Any]:
    """Per judge: Fisher z test of r(human mean, judge) inside the group against outside it,
    plain (n = images) and clustered by case (n = cases, each case's three images one unit;
    paper Appendix D.4)."""
    out: dict[str, Any] = {}
    a, b = images[images["bias_type"].isin(inside)], images[images["bias_type"].isin(outside)]
    for judge in judges:
        col = f"judge:{judge}"
        ra, _, na = pearson_ci(a["human_mean"].to_numpy(float), a[col].to_numpy(float), R_LEVEL)
        rb, _, nb = pearson_ci(b["human_mean"].to_numpy(float), b[col].to_numpy(float), R_LEVEL)
        ca = int(
            a.dropna(subset=["human_mean", col])[["bundle_id", "case"]].drop_duplicates().shape[0]
        )
        cb = int(
            b.dropna(subset=["human_mean", col])[["bundle_id", "case"]].drop_duplicates().shape[0]
        )
        out[judge] = {
            "plain": fisher_z_test(ra, na, rb, nb),
            "clustered": fisher_z_test(ra, ca, rb, cb),
        }
    return out
