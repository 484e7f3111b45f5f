"""Agreement between rubric judges on the same images (IMPLICIT-Bench B.6 beside Tables
15-17; metrics/lean.json ``judge_agreement``, stage ``b6``'s ``agreement``).

Over the images every judge scored validly, for each pair of judges (pairs with the last judge
first, keys ``A~B``):

- ``image_pearson``: per-image Pearson r (``scipy.stats.pearsonr``; the paper: 0.42 / 0.55 /
  0.64);
- ``dx_by_type`` / ``spearman_dx``: per bias type, Cohen's d of dx (mean / SD, ddof 1, over the
  (unit, seed) instances, ``analysis.lean.lean_summary``) and Spearman's rho of those per-type
  values (``scipy.stats.spearmanr``; the paper: 0.97 / 0.43 / 0.42);
- ``g_by_type`` / ``spearman_g``: per bias type, Hedges' g of stereotype vs anti-stereotype
  scores (``analysis.bootstrap.hedges_g``) and the same rho (the paper: 0.54 / 0.55 / 0.84).

A rho needs at least ``MIN_TYPES`` bias types with a value under both judges (else None).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.numbers import finite
from implicit_bench.analysis.bootstrap import hedges_g
from implicit_bench.analysis.lean import lean_summary
from implicit_bench.analysis.selection import dx_frame

MIN_TYPES = 3  # bias types a Spearman rho needs
IMAGE = ["unit_id", "variant", "seed"]


def common_scores(
    rub: pd.DataFrame, ids: set[str], last: str | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """``rub`` (rubric rows of one configuration; a ``score`` column, or ``value``) on units
    ``ids``: the valid scores of the images every judge scored, and the judges (sorted, ``last``
    at the end when given)."""
    rub = rub.assign(unit_id=rub["unit_id"].astype(str), judge=rub["judge"].astype(str))
    rub = rub[rub["unit_id"].isin(ids)]
    valid = rub["valid"].fillna(False).astype(bool) if "valid" in rub else True
    raw = rub["score"] if "score" in rub else rub["value"]
    rub = rub.assign(score=pd.to_numeric(raw.where(valid), errors="coerce"))
    rub = rub[rub["score"].notna()].assign(valid=True, seed=rub["seed"].astype(int))
    present = set(rub["judge"])
    judges = [*sorted(present - {last}), last] if last in present else sorted(present)
    counts = rub.drop_duplicates([*IMAGE, "judge"]).groupby(IMAGE)["judge"].nunique()
    common = counts[counts == len(judges)].index
    keep = pd.MultiIndex.from_frame(rub[IMAGE]).isin(common)
    cols = ["config", "task", *IMAGE, "judge", "score", "valid"]
    return rub.loc[keep, cols].reset_index(drop=True), judges


def _pair_keys(judges: Sequence[str]) -> list[tuple[str, str]]:
    """Pairs with the third judge (last) first, then the construction judges' pairs."""
    pairs = list(combinations(judges, 2))
    return sorted(pairs, key=lambda p: (judges[-1] not in p, p))


def _correlation(x: Sequence[float], y: Sequence[float], method: str, with_p: bool) -> Any:
    """(statistic, p) of Pearson or Spearman: scipy.stats with a p-value (B.6's stage), else
    pandas' own coefficient and no p (``evaluate`` / ``analyze`` import no scipy.stats: its
    start-up costs more than their whole analysis; docs/analysis.md, "Speed")."""
    if with_p:
        from scipy.stats import pearsonr, spearmanr

        res = (pearsonr if method == "pearson" else spearmanr)(x, y)
        return finite(res.statistic), finite(res.pvalue)
    pair = pd.DataFrame({"x": np.asarray(x, float), "y": np.asarray(y, float)})
    return finite(pair.corr(method=method).iloc[0, 1]), None


def image_pearson(
    scores: pd.DataFrame, judges: Sequence[str], with_p: bool = True
) -> dict[str, Any]:
    """Per pair ``a~b``: Pearson r (and p) over the images both scored, n_images."""
    table = scores.pivot_table(index=IMAGE, columns="judge", values="score", aggfunc="first")
    out: dict[str, Any] = {}
    for a, b in _pair_keys(judges):
        both = table[[a, b]].dropna() if {a, b} <= set(table.columns) else pd.DataFrame()
        x, y = (both[c].to_numpy(float) for c in (a, b)) if len(both) else (np.array([]),) * 2
        if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
            out[f"{a}~{b}"] = {"r": None, "p": None, "n_images": int(len(x))}
            continue
        r, p = _correlation(x, y, "pearson", with_p)
        out[f"{a}~{b}"] = {"r": r, "p": p, "n_images": int(len(x))}
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
    values: dict[str, dict[str, float | None]], judges: Sequence[str], with_p: bool = True
) -> dict[str, Any]:
    """Per pair ``a~b``: Spearman rho (and p) of the per-type values both judges have."""
    out: dict[str, Any] = {}
    for a, b in _pair_keys(judges):
        va, vb = values.get(a, {}), values.get(b, {})
        common = sorted(t for t in va if va[t] is not None and vb.get(t) is not None)
        entry: dict[str, Any] = {"rho": None, "p": None, "n_types": len(common)}
        if len(common) >= MIN_TYPES:
            rho, p = _correlation(
                [va[t] for t in common], [vb[t] for t in common], "spearman", with_p
            )
            entry.update(rho=rho, p=p)
        out[f"{a}~{b}"] = entry
    return out


def rubric_agreement(
    judgements: pd.DataFrame, config: str, judges: Sequence[str], units: pd.DataFrame
) -> dict[str, Any]:
    """The same block for any configuration's rubric judges (``evaluate``: metrics/lean.json
    ``judge_agreement``; so also a release's Qwen3-VL and Gemma-4 after ``import``)."""
    rub = judgements[
        (judgements["task"] == "rubric")
        & (judgements["config"] == config)
        & judgements["judge"].isin(list(judges))
    ]
    scores, found = common_scores(rub, set(units["unit_id"].astype(str)))
    return agreement_block(scores, found, config, units, with_p=False)


def agreement_block(
    scores: pd.DataFrame,
    judges: list[str],
    config: str,
    units: pd.DataFrame,
    with_p: bool = True,
) -> dict[str, Any]:
    """Image Pearson r, per-type dx d and Hedges' g with their Spearman rho (``common_scores``)."""
    types = units.assign(unit_id=units["unit_id"].astype(str)).set_index("unit_id")["bias_type"]
    dx = dx_by_type(scores, config, judges, types)
    dx_d = {j: {t: e["cohens_d"] for t, e in per.items()} for j, per in dx.items()}
    g = g_by_type(scores, judges, types)
    return {
        "judges": judges,
        "n_images": int(len(scores.drop_duplicates(IMAGE))),
        "image_pearson": image_pearson(scores, judges, with_p),
        "dx_by_type": dx,
        "spearman_dx": rank_agreement(dx_d, judges, with_p),
        "g_by_type": g,
        "spearman_g": rank_agreement(g, judges, with_p),
    }


__all__ = [
    "MIN_TYPES",
    "agreement_block",
    "common_scores",
    "dx_by_type",
    "g_by_type",
    "image_pearson",
    "rank_agreement",
    "rubric_agreement",
]
