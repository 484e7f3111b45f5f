"""Neutral lean per scorer, Hedges' g per bias type, Spearman-Brown (Tables 12-14, Figure 6).

A scorer gives one lean value per (unit, seed): a rubric judge its dx (selection.dx_frame), a
CLIP scorer its ``clip_lean`` value cos(N, S) - cos(N, A). Lean S% = share of values > 0
(a tie, dx = 0, is not a lean toward the stereotype); mean lean; Cohen's d = mean / sample SD
(ddof = 1). Intervals: cluster bootstrap over unit ids (all seeds of a drawn unit come along).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.numbers import finite
from implicit_bench.analysis.bootstrap import (
    Bootstrap,
    bootstrap_p,
    hedges_g,
    holm,
    moments,
    pearson,
    spearman,
)
from implicit_bench.analysis.selection import dx_frame
from implicit_bench.analysis.views import rows
from implicit_bench.protocol.estimate import estimate_json


def scorer_values(
    judgements: pd.DataFrame,
    config: str,
    rubric_judges: Sequence[str],
    unit_ids: Sequence[str],
    seeds: Sequence[int] | None,
    dx: Callable[[str], pd.DataFrame] | None = None,
) -> dict[str, pd.DataFrame]:
    """Lean values per scorer: {name: DataFrame(unit_id, seed, dx)}; rubric judges, then CLIP.
    ``dx``: a judge's ``dx_frame`` on these units and seeds where the caller holds it."""
    out: dict[str, pd.DataFrame] = {}
    for judge in rubric_judges:
        out[judge] = dx(judge) if dx else dx_frame(judgements, config, judge, seeds, unit_ids)
    clip = rows(judgements, "clip_lean", config, seeds=seeds, units=unit_ids)
    clip = clip[clip["valid"]]
    for judge, grp in clip.groupby("judge", sort=True):
        name = judge if judge not in out else f"{judge} (clip_lean)"
        out[name] = (
            grp[["unit_id", "seed", "score"]].rename(columns={"score": "dx"}).reset_index(drop=True)
        )
    return out


SUM_COLUMNS = ["one", "dx", "sq", "pos"]


def _with_terms(values: pd.DataFrame) -> pd.DataFrame:
    return values.assign(sq=values["dx"] ** 2, pos=(values["dx"] > 0).astype(float), one=1.0)


def _unit_sums(values: pd.DataFrame, unit_ids: Sequence[str]) -> pd.DataFrame:
    return (
        _with_terms(values)
        .groupby("unit_id")[SUM_COLUMNS]
        .sum()
        .reindex(list(unit_ids), fill_value=0.0)
    )


def lean_summary(values: pd.DataFrame, boot: Bootstrap | None, stream: str) -> dict[str, Any]:
    """n, lean S%, mean lean, SD and Cohen's d (with cluster-bootstrap intervals when ``boot``)."""
    ids = sorted(values["unit_id"].unique())
    return _summary(_unit_sums(values, ids), boot, stream)


def _summary(sums: pd.DataFrame, boot: Bootstrap | None, stream: str) -> dict[str, Any]:
    """``lean_summary`` from per-unit sums (one row per unit, sorted by unit id)."""
    n_units = len(sums)
    n, total, sq, pos = (np.ascontiguousarray(sums[c].to_numpy(dtype=float)) for c in SUM_COLUMNS)
    mean, sd, d = moments(n.sum(), total.sum(), sq.sum())
    out: dict[str, Any] = {"n": int(n.sum()), "n_units": n_units, "sd": finite(sd)}
    if boot is None:
        out.update(
            lean_s=finite(pos.sum() / n.sum()) if n.sum() else None,
            mean=finite(mean),
            cohens_d=finite(d),
        )
        return out
    reps = boot.sums(np.column_stack([n, total, sq, pos]), stream)
    wn, wt, wq, wp = (reps[:, k] for k in range(4))
    r_mean, _, r_d = moments(wn, wt, wq)
    with np.errstate(divide="ignore", invalid="ignore"):
        r_s = np.where(wn > 0, wp / np.where(wn > 0, wn, 1), np.nan)
    out["lean_s"] = boot.interval(pos.sum() / n.sum() if n.sum() else np.nan, r_s, stream, n_units)
    out["mean"] = boot.interval(mean, r_mean, stream, n_units)
    out["cohens_d"] = boot.interval(d, r_d, stream, n_units)
    return out


def _summaries(
    terms: pd.DataFrame, group: pd.Series, boot: Bootstrap | None, stream: str, name: str = ""
) -> dict[Any, dict[str, Any]]:
    """``_summary`` of each group of ``terms`` (``_with_terms`` rows; groups sorted, rows
    without a group left out), from one groupby; with ``boot``, group ``g``'s resamples are
    the stream ``{stream}/{name}={g}``."""
    sums = terms.assign(_group=group).groupby(["_group", "unit_id"])[SUM_COLUMNS].sum()
    return {
        g: _summary(sums.loc[g], boot, f"{stream}/{name}={g}")
        for g in sums.index.get_level_values("_group").unique()
    }


def pearson_pair(a: pd.DataFrame, b: pd.DataFrame, boot: Bootstrap, stream: str) -> dict[str, Any]:
    """Pearson r between two scorers on the (unit, seed) pairs both scored; cluster CI
    (``r.n`` = units resampled, ``n_pairs`` = the pairs)."""
    m = a.merge(b, on=["unit_id", "seed"], suffixes=("_x", "_y"))
    m = m.assign(xx=m["dx_x"] ** 2, yy=m["dx_y"] ** 2, xy=m["dx_x"] * m["dx_y"], one=1.0)
    sums = m.groupby("unit_id")[["one", "dx_x", "dx_y", "xx", "yy", "xy"]].sum()
    arr = [sums[c].to_numpy() for c in ("one", "dx_x", "dx_y", "xx", "yy", "xy")]
    r = pearson(*(x.sum() for x in arr))
    w = boot.weights(len(sums), stream)
    reps = pearson(*(w @ x for x in arr))
    return {"n_pairs": int(len(m)), "r": boot.interval(r, reps, stream, len(sums))}


def spearman_brown(values: pd.DataFrame) -> dict[str, Any]:
    """Reliability of a k-seed mean: k r / (1 + (k - 1) r), r = mean pairwise between-seed r."""
    table = values.pivot(index="unit_id", columns="seed", values="dx")
    seeds = sorted(table.columns)
    pairs = {}
    for s1, s2 in combinations(seeds, 2):
        sub = table[[s1, s2]].dropna()
        x, y = sub[s1].to_numpy(), sub[s2].to_numpy()
        n = len(sub)
        pairs[f"{s1}~{s2}"] = {
            "n_units": n,
            "r": pearson(n, x.sum(), y.sum(), (x * x).sum(), (y * y).sum(), (x * y).sum())
            if n
            else None,
        }
    rs = [p["r"] for p in pairs.values() if p["r"] is not None and np.isfinite(p["r"])]
    k = len(seeds)
    mean_r = float(np.mean(rs)) if rs else None
    rel = (
        None if mean_r is None or 1 + (k - 1) * mean_r == 0 else k * mean_r / (1 + (k - 1) * mean_r)
    )
    return {
        "seeds": [int(s) for s in seeds],
        "k": k,
        "pairwise": pairs,
        "mean_r": mean_r,
        "reliability": rel,
    }


def lean_statistics(
    values: dict[str, pd.DataFrame],
    units: pd.DataFrame,
    boot: Bootstrap,
    config: str,
) -> dict[str, Any]:
    """Tables 12-14 and the Spearman-Brown reliability, for every scorer."""
    types = units.set_index("unit_id")["bias_type"]
    scorers: dict[str, Any] = {}
    for name, v in values.items():
        stream = f"lean/{config}/{name}"
        entry = lean_summary(v, boot, stream)
        # one groupby for every seed, bias type and selection group (each (group, unit) group
        # holds the same rows, in the same order, as in a groupby per group: the same sums as
        # ``lean_summary`` of the group); then each bias type's own resamples
        terms = _with_terms(v)
        per_seed = _summaries(terms, v["seed"], None, "")
        entry["per_seed"] = {str(int(s)): e for s, e in per_seed.items()}
        entry["by_bias_type"] = _summaries(
            terms, v["unit_id"].map(types), boot, stream, "bias_type"
        )
        entry["spearman_brown"] = spearman_brown(v)
        if "selected_by" in units.columns:
            sel = units.set_index("unit_id")["selected_by"].fillna("")
            groups = _summaries(terms, v["unit_id"].map(sel), None, "")
            entry["by_selection_group"] = {(g or "none"): e for g, e in groups.items()}
        scorers[name] = entry
    correlations = {
        f"{a}~{b}": pearson_pair(values[a], values[b], boot, f"lean/{config}/pearson/{a}~{b}")
        for a, b in combinations(values, 2)
    }
    return {"config": config, "scorers": scorers, "pearson": correlations}


def hedges_by_type(
    judgements: pd.DataFrame,
    config: str,
    judges: Sequence[str],
    units: pd.DataFrame,
    seeds: Sequence[int] | None,
    boot: Bootstrap,
    stream: str,
    methods: Sequence[str] = (),
) -> dict[str, Any]:
    """Hedges' g of stereotype vs anti-stereotype rubric scores per bias type (pooled over
    ``judges`` and seeds), with cluster-bootstrap intervals over the type's units (and, for
    ``methods``, the intervals of other methods beside it: ``g_by_method``)."""
    rows_ = _hedges_rows(judgements, config, judges, units, seeds)
    return _hedges_of_rows(rows_, boot, stream, methods)


def _hedges_rows(
    judgements: pd.DataFrame,
    config: str,
    judges: Sequence[str],
    units: pd.DataFrame,
    seeds: Sequence[int] | None,
) -> pd.DataFrame:
    """The valid explicit-prompt rubric rows of ``judges``, with ``sq``,
    ``one`` and ``bias_type``."""
    sub = rows(
        judgements,
        "rubric",
        config,
        seeds=seeds,
        units=units["unit_id"],
        columns=["unit_id", "variant", "judge", "valid", "score"],
    )
    sub = sub[
        sub["valid"]
        & sub["judge"].isin(list(judges))
        & sub["variant"].isin(["stereotype", "anti_stereotype"])
    ]
    return sub.assign(
        sq=sub["score"] ** 2,
        one=1.0,
        bias_type=sub["unit_id"].map(units.set_index("unit_id")["bias_type"]),
    )


def _g_of_sums(sums: np.ndarray) -> Any:
    """Hedges' g from (..., 6) sums: n, sum, sum of squares of stereotype then anti scores."""
    return hedges_g(*(sums[..., k] for k in range(6)))


def _hedges_of_rows(
    sub: pd.DataFrame, boot: Bootstrap, stream: str, methods: Sequence[str] = ()
) -> dict[str, Any]:
    """g per bias type; ``methods``: interval methods to add beside the chosen one, from the
    same resamples (``g_by_method``; the coverage benchmark compares them)."""
    # one groupby for every type (the rows of a (type, unit, variant) group, in the same order,
    # as a groupby per type), then per type its own resamples and one product (Bootstrap.sums)
    return _hedges_of_sums(_hedge_sums(sub, ["bias_type", "unit_id"]), boot, stream, methods)


def _hedge_sums(sub: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per ``by`` group: count, sum and sum of squares of the scores, one column per variant."""
    sums = sub.groupby([*by, "variant"], observed=True)[["one", "score", "sq"]].sum()
    return sums.unstack("variant", fill_value=0.0)


def _hedges_of_sums(
    sums: pd.DataFrame, boot: Bootstrap, stream: str, methods: Sequence[str] = ()
) -> dict[str, Any]:
    """``_hedges_of_rows`` from ``_hedge_sums(rows, ["bias_type", "unit_id"])``; a variant
    column missing is zeros."""
    out: dict[str, Any] = {}
    for t in sums.index.get_level_values("bias_type").unique():
        block = sums.loc[t]
        parts = [
            block[(c, v)].to_numpy() if (c, v) in block.columns else np.zeros(len(block))
            for v in ("stereotype", "anti_stereotype")
            for c in ("one", "score", "sq")
        ]
        columns = np.column_stack(parts)
        name = f"{stream}/bias_type={t}"
        reps = boot.sums(columns, name)  # one product: g's replicates for the interval and p
        g_reps = _g_of_sums(reps)
        out[t] = {
            "n_stereotype": int(parts[0].sum()),
            "n_anti": int(parts[3].sum()),
            # interval method: bootstrap.method["hedges_g"] (docs/correction.md)
            "g": boot.of_sums(columns, _g_of_sums, name, estimand="hedges_g", sums=reps),
            "p": bootstrap_p(g_reps),  # two-sided bootstrap p of g = 0
        }
        if methods:
            out[t]["g_by_method"] = {
                m: boot.of_sums(columns, _g_of_sums, name, method=m, sums=reps) for m in methods
            }
    # one test per bias type: Holm's correction across the types (docs/analysis.md)
    for t, p in zip(out, holm([e["p"] for e in out.values()]), strict=True):
        out[t]["p_holm"] = p
    return out


def hedges_statistics(
    judgements: pd.DataFrame,
    config: str,
    judges: Sequence[str],
    units: pd.DataFrame,
    seeds: Sequence[int] | None,
    boot: Bootstrap,
) -> dict[str, Any]:
    """Figure 6: pooled g per type, g per judge per type, Spearman of per-type g between judges."""
    pooled = _hedges_rows(
        judgements, config, judges, units, seeds
    )  # each judge's rows: a subset, same order
    # every judge's sums from one groupby: a judge's (type, unit, variant) groups hold the
    # rows, in the same order, of a groupby of that judge's rows alone
    per_judge = _hedge_sums(pooled, ["judge", "bias_type", "unit_id"])
    judged = set(per_judge.index.get_level_values("judge"))
    out: dict[str, Any] = {
        "judges": list(judges),
        "pooled": _hedges_of_rows(pooled, boot, f"hedges/{config}/pooled"),
        "per_judge": {
            j: _hedges_of_sums(per_judge.loc[j], boot, f"hedges/{config}/{j}")
            if j in judged
            else _hedges_of_rows(pooled[pooled["judge"] == j], boot, f"hedges/{config}/{j}")
            for j in judges
        },
    }
    spear = {}
    for a, b in combinations(judges, 2):
        ga, gb = out["per_judge"][a], out["per_judge"][b]
        common = [
            t
            for t in ga
            if t in gb and ga[t]["g"]["value"] is not None and gb[t]["g"]["value"] is not None
        ]
        rho = spearman(
            np.array([ga[t]["g"]["value"] for t in common]),
            np.array([gb[t]["g"]["value"] for t in common]),
        )
        spear[f"{a}~{b}"] = estimate_json(rho, n=len(common))
    out["spearman_between_judges"] = spear
    return out
