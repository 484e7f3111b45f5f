"""Neutral lean per scorer, Hedges' g per bias type, Spearman-Brown (Tables 12-14, Figure 6).

A scorer gives one lean value per (unit, seed): a rubric judge its dx (selection.dx_frame), a
CLIP scorer its ``clip_lean`` value cos(N, S) - cos(N, A). Lean S% = share of values > 0
(a tie, dx = 0, is not a lean toward the stereotype); mean lean; Cohen's d = mean / sample SD
(ddof = 1). Intervals: cluster bootstrap over unit ids (all seeds of a drawn unit come along).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.analysis.bootstrap import Bootstrap, hedges_g, moments, pearson, spearman
from implicit_bench.analysis.selection import dx_frame
from implicit_bench.analysis.views import rows
from implicit_bench.estimate import estimate_json


def scorer_values(
    judgements: pd.DataFrame,
    config: str,
    rubric_judges: Sequence[str],
    unit_ids: Sequence[str],
    seeds: Sequence[int] | None,
) -> dict[str, pd.DataFrame]:
    """Lean values per scorer: {name: DataFrame(unit_id, seed, dx)}; rubric judges, then CLIP."""
    out: dict[str, pd.DataFrame] = {}
    for judge in rubric_judges:
        out[judge] = dx_frame(judgements, config, judge, seeds, unit_ids)
    clip = rows(judgements, "clip_lean", config, seeds=seeds, units=unit_ids)
    clip = clip[clip["valid"]]
    for judge, grp in clip.groupby("judge", sort=True):
        name = judge if judge not in out else f"{judge} (clip_lean)"
        out[name] = grp[["unit_id", "seed", "score"]].rename(columns={"score": "dx"}).reset_index(drop=True)
    return out


def _unit_sums(values: pd.DataFrame, unit_ids: Sequence[str]) -> pd.DataFrame:
    v = values.assign(sq=values["dx"] ** 2, pos=(values["dx"] > 0).astype(float), one=1.0)
    return v.groupby("unit_id")[["one", "dx", "sq", "pos"]].sum().reindex(list(unit_ids), fill_value=0.0)


def lean_summary(values: pd.DataFrame, boot: Bootstrap | None, stream: str) -> dict[str, Any]:
    """n, lean S%, mean lean, SD and Cohen's d (with cluster-bootstrap intervals when ``boot``)."""
    ids = sorted(values["unit_id"].unique())
    sums = _unit_sums(values, ids)
    n, total, sq, pos = (sums[c].to_numpy() for c in ("one", "dx", "sq", "pos"))
    mean, sd, d = moments(n.sum(), total.sum(), sq.sum())
    out: dict[str, Any] = {"n": int(n.sum()), "n_units": len(ids), "sd": _f(sd)}
    if boot is None:
        out.update(lean_s=_f(pos.sum() / n.sum()) if n.sum() else None, mean=_f(mean), cohens_d=_f(d))
        return out
    w = boot.weights(len(ids), stream)
    wn, wt, wq, wp = w @ n, w @ total, w @ sq, w @ pos
    r_mean, _, r_d = moments(wn, wt, wq)
    with np.errstate(divide="ignore", invalid="ignore"):
        r_s = np.where(wn > 0, wp / np.where(wn > 0, wn, 1), np.nan)
    out["lean_s"] = boot.interval(pos.sum() / n.sum() if n.sum() else np.nan, r_s, stream, len(ids))
    out["mean"] = boot.interval(mean, r_mean, stream, len(ids))
    out["cohens_d"] = boot.interval(d, r_d, stream, len(ids))
    return out


def _f(x: Any) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


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
            "r": pearson(n, x.sum(), y.sum(), (x * x).sum(), (y * y).sum(), (x * y).sum()) if n else None,
        }
    rs = [p["r"] for p in pairs.values() if p["r"] is not None and np.isfinite(p["r"])]
    k = len(seeds)
    mean_r = float(np.mean(rs)) if rs else None
    rel = None if mean_r is None or 1 + (k - 1) * mean_r == 0 else k * mean_r / (1 + (k - 1) * mean_r)
    return {"seeds": [int(s) for s in seeds], "k": k, "pairwise": pairs, "mean_r": mean_r, "reliability": rel}


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
        entry["per_seed"] = {str(int(s)): lean_summary(g, None, "") for s, g in v.groupby("seed", sort=True)}
        typed = v.assign(bias_type=v["unit_id"].map(types))
        entry["by_bias_type"] = {
            t: lean_summary(g.drop(columns="bias_type"), boot, f"{stream}/bias_type={t}")
            for t, g in typed.groupby("bias_type", sort=True)
        }
        entry["spearman_brown"] = spearman_brown(v)
        if "selected_by" in units.columns:
            sel = units.set_index("unit_id")["selected_by"].fillna("")
            entry["by_selection_group"] = {
                (g or "none"): lean_summary(gv.drop(columns="group"), None, "")
                for g, gv in v.assign(group=v["unit_id"].map(sel)).groupby("group", sort=True)
            }
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
) -> dict[str, Any]:
    """Hedges' g of stereotype vs anti-stereotype rubric scores per bias type (pooled over
    ``judges`` and seeds), with cluster-bootstrap intervals over the type's units."""
    sub = rows(judgements, "rubric", config, seeds=seeds, units=units["unit_id"])
    sub = sub[sub["valid"] & sub["judge"].isin(list(judges)) & sub["variant"].isin(["stereotype", "anti_stereotype"])]
    sub = sub.assign(sq=sub["score"] ** 2, one=1.0, bias_type=sub["unit_id"].map(units.set_index("unit_id")["bias_type"]))
    out: dict[str, Any] = {}
    for t, grp in sub.groupby("bias_type", sort=True):
        sums = grp.groupby(["unit_id", "variant"])[["one", "score", "sq"]].sum().unstack("variant", fill_value=0.0)
        cols = [sums[(c, v)].to_numpy() if (c, v) in sums.columns else np.zeros(len(sums)) for v in ("stereotype", "anti_stereotype") for c in ("one", "score", "sq")]
        g = hedges_g(*(c.sum() for c in cols))
        w = boot.weights(len(sums), f"{stream}/bias_type={t}")
        reps = hedges_g(*(w @ c for c in cols))
        out[t] = {
            "n_stereotype": int(cols[0].sum()),
            "n_anti": int(cols[3].sum()),
            "g": boot.interval(g, reps, f"{stream}/bias_type={t}", len(sums)),
        }
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
    out: dict[str, Any] = {
        "judges": list(judges),
        "pooled": hedges_by_type(judgements, config, judges, units, seeds, boot, f"hedges/{config}/pooled"),
        "per_judge": {
            j: hedges_by_type(judgements, config, [j], units, seeds, boot, f"hedges/{config}/{j}") for j in judges
        },
    }
    spear = {}
    for a, b in combinations(judges, 2):
        ga, gb = out["per_judge"][a], out["per_judge"][b]
        common = [t for t in ga if t in gb and ga[t]["g"]["value"] is not None and gb[t]["g"]["value"] is not None]
        rho = spearman(np.array([ga[t]["g"]["value"] for t in common]), np.array([gb[t]["g"]["value"] for t in common]))
        spear[f"{a}~{b}"] = estimate_json(rho, n=len(common))
    out["spearman_between_judges"] = spear
    return out
