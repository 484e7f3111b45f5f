"""Cluster-bootstrap replicates of the audit statistics (resample units, keep all their images).

The resamples come from the analysis library's ``Bootstrap`` (``weights(n_units, stream)``:
unit multiplicities, ``n_boot x n_units``; ``interval(value, reps, stream, n_units)``: the
percentile interval); this module only turns per-unit sums into replicates, vectorised.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.closed_form import safe_div


def entropy_rows(counts: np.ndarray, k: int) -> np.ndarray:
    """Normalised entropy of each row of a counts matrix (nan for an all-zero row)."""
    counts = np.asarray(counts, dtype=float)
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = counts / total
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0.0)
    h = -terms.sum(axis=1) / np.log(k) + 0.0
    h[total[:, 0] == 0] = np.nan
    return h


def unit_counts(frame: pd.DataFrame, units: Sequence[str], cats: Sequence[str]) -> np.ndarray:
    """``n_units x |C|`` counts of each label per unit (units in the given order)."""
    kept = frame[frame["label"].isin(cats)]
    table = pd.crosstab(kept["unit_id"], kept["label"]).reindex(
        index=list(units), columns=list(cats), fill_value=0
    )
    return table.to_numpy(dtype=float)


def diversity_replicates(
    weights: np.ndarray,
    scene_entropy: np.ndarray,
    template_counts: np.ndarray,
    unit_types: np.ndarray,
    k: int,
    quantiles: Sequence[float],
) -> dict[str, np.ndarray]:
    """Replicates of CA_q, CA-mean, ID and MGBI under unit multiplicities ``weights``.

    ``scene_entropy``: per unit (nan when the unit has no labelled scene image);
    ``template_counts``: per unit label counts of its template images; ``unit_types``: bias type
    per unit. A replicate's scenes are the drawn units with their multiplicity.
    """
    n_boot, n_units = weights.shape
    valid = ~np.isnan(scene_entropy)
    out: dict[str, np.ndarray] = {}
    # weighted quantiles = quantiles of the multiset: expand
    # through sorted order + cumulative weights
    order = np.argsort(np.where(valid, scene_entropy, np.inf))
    h_sorted = scene_entropy[order]
    w_sorted = weights[:, order] * valid[order]
    for q in quantiles:
        out[f"CA_{q:.2f}"] = _weighted_quantile(h_sorted, w_sorted, q)
    total = w_sorted.sum(axis=1)
    out["CA_mean"] = safe_div(w_sorted @ np.nan_to_num(h_sorted), total)
    types = [t for t in pd.unique(unit_types) if template_counts[unit_types == t].sum() > 0]
    if types:
        per_type = np.stack(
            [
                entropy_rows(weights[:, unit_types == t] @ template_counts[unit_types == t], k)
                for t in types
            ],
            axis=1,
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            ids = np.where(
                (per_type <= 0).any(axis=1),
                0.0,
                np.exp(np.log(np.where(per_type > 0, per_type, 1)).mean(axis=1)),
            )
        ids[np.isnan(per_type).any(axis=1)] = np.nan
    else:
        ids = np.full(n_boot, np.nan)
    out["ID"] = ids
    ca10 = out.get("CA_0.10", np.full(n_boot, np.nan))
    with np.errstate(invalid="ignore"):
        out["MGBI"] = np.sqrt(ids * ca10)
    return out


def _weighted_quantile(sorted_values: np.ndarray, weights: np.ndarray, q: float) -> np.ndarray:
    """numpy's linear quantile of the multiset where value i appears ``weights[r, i]`` times."""
    n = weights.sum(axis=1)
    cum = np.cumsum(weights, axis=1)
    pos = q * (n - 1)  # 0-based position in the expanded sorted multiset
    lo = np.floor(pos)
    frac = pos - lo
    idx_lo = (cum <= lo[:, None]).sum(axis=1)
    idx_hi = (cum <= np.minimum(lo + 1, n - 1)[:, None]).sum(axis=1)
    m = len(sorted_values)
    v_lo = sorted_values[np.minimum(idx_lo, m - 1)]
    v_hi = sorted_values[np.minimum(idx_hi, m - 1)]
    out = v_lo + frac * (v_hi - v_lo)
    out[n == 0] = np.nan
    return out


def ratio_replicates(weights: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return safe_div(weights @ num, weights @ den)


def with_intervals(
    boot: Any, values: dict[str, float], reps: dict[str, np.ndarray], stream: str, n_units: int
) -> dict[str, Any]:
    """``{name: interval dict}`` through the analysis Bootstrap's percentile interval."""
    return {
        name: boot.interval(values[name], reps.get(name), f"{stream}/{name}", n_units)
        for name in values
    }


def diversity_intervals(
    boot: Any,
    frame: pd.DataFrame,
    scores: dict[str, float],
    *,
    cats: Sequence[str],
    scene_variant: str,
    template_variant: str,
    quantiles: Sequence[float],
    stream: str,
) -> dict[str, Any]:
    """Percentile intervals of ID, CA_q, CA-mean and MGBI, resampling the units of ``frame``."""
    units = sorted(frame["unit_id"].astype(str).unique())
    scenes = unit_counts(frame[frame["variant"] == scene_variant], units, cats)
    h = entropy_rows(scenes, len(cats))
    templates = unit_counts(frame[frame["variant"] == template_variant], units, cats)
    types = (
        frame.drop_duplicates("unit_id")
        .set_index("unit_id")["bias_type"]
        .reindex(units)
        .astype(str)
        .to_numpy()
    )
    weights = boot.weights(len(units), stream)
    reps = diversity_replicates(weights, h, templates, types, len(cats), quantiles)
    names = [f"CA_{q:.2f}" for q in quantiles] + ["CA_mean", "ID", "MGBI"]
    return with_intervals(boot, {n: scores[n] for n in names}, reps, stream, len(units))


def rate_intervals(
    boot: Any, frame: pd.DataFrame, measures: dict[str, Any], stream: str
) -> dict[str, Any]:
    """Intervals of shares over the labelled images of ``frame``, resampling its units.

    ``measures``: name -> either a boolean function of the label Series (the numerator; the
    denominator is the labelled images) or a pair ``(numerator, denominator)`` of boolean
    functions of the labelled rows (a None denominator: every labelled image).
    """
    codes, n_units = _unit_codes(frame)
    is_labelled = frame["label"].notna().to_numpy()
    labelled = frame[is_labelled]
    labelled_codes = codes[is_labelled]

    def per_unit(mask: Any) -> np.ndarray:
        return np.bincount(labelled_codes[np.asarray(mask, dtype=bool)], minlength=n_units).astype(
            float
        )

    nums, dens = {}, {}
    for name, spec in measures.items():
        if isinstance(spec, tuple):
            num_fn, den_fn = spec
            num_mask = num_fn(labelled)
            den_mask = (
                den_fn(labelled) if den_fn is not None else pd.Series(True, index=labelled.index)
            )
            nums[name] = per_unit(num_mask & den_mask)
            dens[name] = per_unit(den_mask)
        else:
            nums[name] = per_unit(spec(labelled["label"]))
            dens[name] = per_unit(np.ones(len(labelled), dtype=bool))
    values, reps = _ratio_intervals(boot, nums, dens, stream, n_units)
    return {
        name: boot.interval(values[name], reps[name], f"{stream}/{name}", n_units)
        for name in measures
    }


RATE_SPECS: tuple[tuple[str, str, str], ...] = (
    ("default_rate", "neutral", "s"),
    ("success_s", "stereotype", "s"),
    ("success_a", "anti_stereotype", "a"),
)


def _unit_codes(frame: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Each row's position among the frame's sorted unit ids, and how many units there are."""
    codes, units = pd.factorize(frame["unit_id"].astype(str), sort=True)
    return codes.astype(np.int64), len(units)


def _ratio_intervals(
    boot: Any, nums: dict[str, np.ndarray], dens: dict[str, np.ndarray], stream: str, n_units: int
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Values and replicates of ``sum(num) / sum(den)`` for several per-unit count pairs, from one
    product of the stream's resamples (``Bootstrap.sums``; counts are exact, so the replicates
    equal ``ratio_replicates`` one pair at a time)."""
    names = list(nums)
    columns = (
        np.column_stack([c for name in names for c in (nums[name], dens[name])])
        if names
        else np.zeros((n_units, 0))
    )
    sums = boot.sums(columns, stream)
    values, reps = {}, {}
    for k, name in enumerate(names):
        num, den = nums[name], dens[name]
        values[name] = num.sum() / den.sum() if den.sum() else float("nan")
        reps[name] = safe_div(sums[:, 2 * k], sums[:, 2 * k + 1])
    return values, reps


def blind_rate_intervals(boot: Any, frame: pd.DataFrame, label: str, stream: str) -> dict[str, Any]:
    """Estimates of default rate, success(s), success(a) and their gap (paired replicates)."""
    codes, n_units = _unit_codes(frame)
    labelled = frame[label].notna().to_numpy()
    variants = frame["variant"].to_numpy(dtype=object)
    labels = frame[label].to_numpy(dtype=object)
    nums, dens = {}, {}
    for name, variant, wanted in RATE_SPECS:
        rows = labelled & (variants == variant)
        dens[name] = np.bincount(codes[rows], minlength=n_units).astype(float)
        nums[name] = np.bincount(codes[rows & (labels == wanted)], minlength=n_units).astype(float)
    values, reps = _ratio_intervals(boot, nums, dens, stream, n_units)
    values["gap"] = values["success_s"] - values["success_a"]
    reps["gap"] = reps["success_s"] - reps["success_a"]
    return {
        name: boot.interval(values[name], reps[name], f"{stream}/{name}", n_units)
        for name in values
    }


def coverage_interval(boot: Any, frame: pd.DataFrame, kept: pd.Series, stream: str) -> Any:
    codes, n_units = _unit_codes(frame)
    den = np.bincount(codes, minlength=n_units).astype(float)
    num = np.bincount(codes[kept.to_numpy(dtype=bool)], minlength=n_units).astype(float)
    values, reps = _ratio_intervals(boot, {"coverage": num}, {"coverage": den}, stream, n_units)
    return boot.interval(values["coverage"], reps["coverage"], stream, n_units)
