"""Agreement between two blind judges on the same images (paper Section 4.3, App. C.2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.agreement import cohen_kappa
from implicit_bench.analysis.bootstrap import Bootstrap, spearman, spearman_reps
from implicit_bench.analysis.views import rows, wide
from implicit_bench.protocol.estimate import estimate_json
from implicit_bench.protocol.schema import BLIND_LABELS, VARIANTS


def paired_labels(
    judgements: pd.DataFrame,
    config: str,
    first: str,
    second: str,
    unit_ids: Sequence[str],
    seeds: Sequence[int] | None,
    n_seeds: int,
    rule: str,
) -> pd.DataFrame:
    """Images labelled validly by both judges: unit_id, seed, variant, first, second.

    ``rule="complete"`` keeps only units that both judges labelled completely (every variant
    on ``n_seeds`` seeds, as the paper's 16,470 images of 1,830 units); ``"all"`` keeps every
    image with two valid labels.
    """
    w1 = (
        wide(rows(judgements, "blind", config, first, seeds, unit_ids), "value")
        .stack()
        .rename("first")
    )
    w2 = (
        wide(rows(judgements, "blind", config, second, seeds, unit_ids), "value")
        .stack()
        .rename("second")
    )
    both = pd.concat([w1, w2], axis=1, join="inner").dropna().reset_index()
    if rule == "complete":
        need = len(VARIANTS) * n_seeds
        c1 = w1.dropna().groupby(level="unit_id").size()
        c2 = w2.dropna().groupby(level="unit_id").size()
        complete = set(c1[c1 == need].index) & set(c2[c2 == need].index)
        both = both[both["unit_id"].isin(complete)]
    return both.reset_index(drop=True)


def confusion(pairs: pd.DataFrame) -> pd.DataFrame:
    """Counts: rows = first judge's label, columns = second judge's label (s, a, neither)."""
    table = pd.crosstab(pairs["first"], pairs["second"]) if len(pairs) else pd.DataFrame()
    return table.reindex(index=list(BLIND_LABELS), columns=list(BLIND_LABELS), fill_value=0).astype(
        int
    )


def agreement(
    judgements: pd.DataFrame,
    config: str,
    first: str,
    second: str,
    units: pd.DataFrame,
    seeds: Sequence[int] | None,
    n_seeds: int,
    rule: str,
    boot: Bootstrap,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """Agreement metrics and the paired labels (for the confusion-matrix plot)."""
    unit_ids = units["unit_id"].tolist()
    pairs = paired_labels(judgements, config, first, second, unit_ids, seeds, n_seeds, rule)
    stream = f"agreement/{config}/{first}~{second}"
    ids = np.array(sorted(pairs["unit_id"].unique()))
    pairs = pairs.assign(agree=(pairs["first"] == pairs["second"]).astype(float), one=1.0)
    per_unit = pairs.groupby(["unit_id", "variant"])[["agree", "one"]].sum()

    def agree_share(variants: Sequence[str]) -> dict[str, Any]:
        sub = (
            per_unit[per_unit.index.get_level_values("variant").isin(variants)]
            .groupby(level="unit_id")
            .sum()
        )
        sub = sub.reindex(ids, fill_value=0)
        return boot.ratio(sub["agree"].to_numpy(), sub["one"].to_numpy(), stream)[0]

    table = confusion(pairs)
    n = int(table.to_numpy().sum())
    opposite = int(table.at["s", "a"] + table.at["a", "s"])
    out: dict[str, Any] = {
        "first": first,
        "second": second,
        "config": config,
        "unit_rule": rule,
        "n_units": int(len(ids)),
        "n_images": n,
        "agreement": agree_share(VARIANTS),
        "agreement_by_variant": {v: agree_share([v]) for v in VARIANTS},
        "opposite_attribute_share": opposite / n if n else None,
        "cohen_kappa": cohen_kappa(table),
        "confusion": {
            "rows": first,
            "columns": second,
            "labels": list(BLIND_LABELS),
            "counts": table.to_numpy().tolist(),
        },
        "confusion_by_variant": {
            v: confusion(pairs[pairs["variant"] == v]).to_numpy().tolist() for v in VARIANTS
        },
    }
    # Per-unit default rates (share of a unit's neutral images labelled s) on the same images.
    neutral = pairs[pairs["variant"] == "neutral"]
    rate = (
        neutral.assign(s1=neutral["first"] == "s", s2=neutral["second"] == "s")
        .groupby("unit_id")[["s1", "s2"]]
        .mean()
    )
    x, y = rate["s1"].to_numpy(float), rate["s2"].to_numpy(float)
    rho = spearman(x, y)
    idx = boot.indices(len(x), f"{stream}/unit_default_rates")
    reps = spearman_reps(x, y, idx) if len(x) > 1 else None
    out["spearman_unit_default_rate"] = boot.interval(
        np.nan if rho is None else rho, reps, f"{stream}/unit_default_rates", len(x)
    )
    types = units.set_index("unit_id")["bias_type"]
    by_type = (
        neutral.assign(
            bias_type=neutral["unit_id"].map(types),
            s1=neutral["first"] == "s",
            s2=neutral["second"] == "s",
        )
        .groupby("bias_type")[["s1", "s2"]]
        .mean()
    )
    out["default_rate_by_bias_type"] = {
        t: {first: float(r.s1), second: float(r.s2)} for t, r in by_type.iterrows()
    }
    out["spearman_type_default_rate"] = estimate_json(
        spearman(by_type["s1"].to_numpy(float), by_type["s2"].to_numpy(float)), n=int(len(by_type))
    )
    return out, pairs[["unit_id", "seed", "variant", "first", "second"]]
