"""A design to a target width: the fewest images whose intervals reach half-width W.

For each estimand (a mean over units of a per-unit value, the mean over the unit's seeds of
an image value: docs/analysis.md, "A design to a target width"), the variance components of
each stratum (bias type) come from judgements already made (a pilot: the run's own first
units, or the authors' release): the within-unit variance of image values ``s2_w`` (pooled
over units with two or more images) and the between-unit variance of unit means
``s2_b = max(0, var(unit means) - s2_w / k_pilot)`` (one-way ANOVA, k_pilot: the mean images per
unit). With ``k`` seeds, unit means vary by ``S2(k) = sum_h W_h (s2_b,h + s2_w,h / k) +
sum_h W_h (mean_h - mean)^2`` (``W_h = N_h / N``; the second sum: between bias types). The units
are allocated to bias types in proportion (``n_h = ceil(n N_h / N)``, at least 2, at most
``N_h``), and the half-width is that of the intervals ``analyze`` reports, a cluster bootstrap
over units (no finite population correction, no stratification): ``z sqrt(S2(k) / n)``. The
design is the smallest ``n`` per ``k`` whose half-width is at most W for every named estimand,
and among the seed counts the one with the fewest images.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.errors import ConfigError
from implicit_bench.protocol import metric_schema


@dataclass
class Components:
    """Variance components of one estimand per stratum."""

    between: dict[str, float]
    within: dict[str, float]
    means: dict[str, float]  # mean of unit means per stratum
    variants: tuple[str, ...]  # image variants the estimand needs (images per unit and seed)


@dataclass
class Design:
    units: int
    seeds: int
    per_type: dict[str, int]
    images_per_generator: int
    half_widths: dict[str, float]
    full_images_per_generator: int  # every unit and seed, the same variants
    candidates: list[dict[str, Any]] = field(default_factory=list)


def image_values(
    judgements: pd.DataFrame, estimand: str, judge: str | None, config: str | None
) -> pd.DataFrame:
    """Image-level values of an estimand from validated judgements (``analysis.load``: with
    the numeric ``score`` of rubric and alignment rows): ``unit_id, seed, value`` (one row per
    image, or per (unit, seed) pair for ``gap``)."""
    j = judgements[judgements["valid"].astype(bool)]
    if estimand in metric_schema.headline():
        m = metric_schema.metric(estimand)
        blind = j[(j["task"] == "blind") & (j["judge"] == judge) & (j["config"] == config)]
        if m.difference is not None:  # per (unit, seed): first rate's success minus second's
            parts = []
            for name, side in zip(m.difference, ("s", "a"), strict=True):
                (variant, label), _ = metric_schema.metric(name).ratio  # type: ignore[misc]
                rows = blind[blind["variant"] == variant].set_index(["unit_id", "seed"])["value"]
                parts.append((rows == label).rename(side))
            both = pd.concat(parts, axis=1).dropna()
            value = both["s"].astype(float) - both["a"].astype(float)
            return value.rename("value").reset_index()
        (variant, label), _ = m.ratio  # type: ignore[misc]
        sub = blind[blind["variant"] == variant]
        return sub.assign(value=(sub["value"] == label).astype(float))[["unit_id", "seed", "value"]]
    metric, _, cfg = estimand.partition("/")
    task = {"bias_score": "rubric", "alignment": "alignment"}.get(metric)
    if task is None or not cfg:
        raise ConfigError(
            f"--estimand {estimand}: one of {', '.join(metric_schema.headline())}, "
            "bias_score/CONFIG, alignment/CONFIG"
        )
    sub = j[(j["task"] == task) & (j["config"] == cfg) & (j["variant"] == "neutral")]
    judges = sorted(sub["judge"].astype(str).unique())
    if not judges:
        raise ConfigError(f"--estimand {estimand}: no valid neutral {task} judgements of '{cfg}'")
    sub = sub[sub["judge"] == (judge if judge in judges else judges[0])]
    return sub.assign(value=sub["score"].astype(float))[["unit_id", "seed", "value"]].dropna()


def variants_of(estimand: str) -> tuple[str, ...]:
    return {
        "success_stereotype": ("stereotype",),
        "success_anti": ("anti_stereotype",),
        "gap": ("stereotype", "anti_stereotype"),
    }.get(estimand, ("neutral",))


def components(values: pd.DataFrame, types: pd.Series, estimand: str) -> Components:
    """Between- and within-unit variances per bias type of image values (``unit_id, value``);
    ``types``: bias type per unit id."""
    frame = values.assign(bias_type=values["unit_id"].map(types))
    between: dict[str, float] = {}
    within: dict[str, float] = {}
    means: dict[str, float] = {}
    for bias_type, sub in frame.groupby("bias_type", sort=True):
        per_unit = sub.groupby("unit_id")["value"].agg(["mean", "var", "size"])
        multi = per_unit[per_unit["size"] >= 2]
        s2_w = float(np.average(multi["var"], weights=multi["size"] - 1)) if len(multi) else 0.0
        k_pilot = float(per_unit["size"].mean())
        s2_means = float(per_unit["mean"].var(ddof=1)) if len(per_unit) >= 2 else 0.0
        between[str(bias_type)] = max(0.0, s2_means - s2_w / k_pilot)
        within[str(bias_type)] = s2_w
        means[str(bias_type)] = float(per_unit["mean"].mean())
    return Components(between, within, means, variants_of(estimand))


def allocation(n: int, sizes: dict[str, int]) -> dict[str, int]:
    """Proportional allocation of ``n`` units to strata (at least 2 each, at most the stratum)."""
    total = sum(sizes.values())
    return {h: min(size, max(2, math.ceil(n * size / total))) for h, size in sizes.items()}


def half_width(comp: Components, n: int, sizes: dict[str, int], seeds: int, z: float) -> float:
    """``z sqrt(S2(k) / n)``: the half-width of a mean of ``n`` unit means of ``seeds`` seeds."""
    total = sum(sizes.values())
    weights = {h: size / total for h, size in sizes.items() if h in comp.between}
    if not weights or n < 1:
        return math.inf
    norm = sum(weights.values())
    mean = sum(w * comp.means[h] for h, w in weights.items()) / norm
    s2 = (
        sum(
            w * (comp.between[h] + comp.within[h] / seeds + (comp.means[h] - mean) ** 2)
            for h, w in weights.items()
        )
        / norm
    )
    return z * math.sqrt(s2 / n)


def design(
    comps: dict[str, Components],
    sizes: dict[str, int],
    target: float,
    max_seeds: int,
    level: float = 0.95,
) -> Design:
    """The design with the fewest images per generator whose half-widths are all <= target."""
    from scipy.special import ndtri

    if not target > 0 or not math.isfinite(target):
        raise ConfigError(f"--target-width: {target} is not a positive number")
    z = float(ndtri(0.5 + level / 2))
    total = sum(sizes.values())
    n_variants = len({v for c in comps.values() for v in c.variants})
    candidates = []
    for seeds in range(1, max_seeds + 1):

        def widths(n: int, k: int = seeds) -> dict[str, float]:
            units = sum(allocation(n, sizes).values())
            return {name: half_width(c, units, sizes, k, z) for name, c in comps.items()}

        lo, hi = 1, total
        if max(widths(hi).values()) > target:
            candidates.append({"seeds": seeds, "units": None, "reached": False})
            continue
        while lo < hi:  # widths fall as n grows
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if max(widths(mid).values()) <= target else (mid + 1, hi)
        per_type = allocation(lo, sizes)
        units = sum(per_type.values())
        candidates.append(
            {
                "seeds": seeds,
                "units": units,
                "per_type": per_type,
                "images_per_generator": units * seeds * n_variants,
                "half_widths": {k: round(v, 4) for k, v in widths(lo).items()},
                "reached": True,
            }
        )
    reached = [c for c in candidates if c["reached"]]
    if not reached:
        raise ConfigError(
            f"--target-width {target}: not reached even with every unit and {max_seeds} seeds"
        )
    best = min(reached, key=lambda c: (c["images_per_generator"], -c["seeds"]))
    return Design(
        units=best["units"],
        seeds=best["seeds"],
        per_type=best["per_type"],
        images_per_generator=best["images_per_generator"],
        half_widths=best["half_widths"],
        full_images_per_generator=total * max_seeds * n_variants,
        candidates=candidates,
    )
