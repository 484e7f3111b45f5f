"""Refusal rate by bias type (docs/extending.md, "Adding a metric": the worked example).

Per configuration (generator) and bias type: the share of neutral image requests of the
analysed units that the generator refused (image index ``status == "refused"``), as an
``Estimate`` with a cluster-bootstrap interval over units; ``_all`` pools every type. Table 4
counts the same refusals without an interval. Empty when no image index is read.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from implicit_bench.analysis.context import EvalContext


def refusal_rate(ctx: EvalContext) -> dict[str, Any]:
    images = ctx.tables.images
    out: dict[str, Any] = {}
    if images is None:
        return {"refusal_rate": out}
    neutral = images[images["unit_id"].isin(set(ctx.unit_ids)) & (images["variant"] == "neutral")]
    if ctx.seeds is not None:
        neutral = neutral[neutral["seed"].isin(ctx.seeds)]
    for config, rows in neutral.groupby("config", sort=True):
        per_unit = (
            rows.assign(refused=rows["status"] == "refused")
            .groupby("unit_id")["refused"]
            .agg(["sum", "size"])
        )
        per_unit = per_unit.reindex(ctx.unit_ids, fill_value=0)
        refused, requests = per_unit["sum"].to_numpy(float), per_unit["size"].to_numpy(float)
        entry: dict[str, Any] = {}
        for bias_type in [*ctx.present_types, "_all"]:
            pos = np.flatnonzero(
                (requests > 0) & ((ctx.types == bias_type) | (bias_type == "_all"))
            )
            if len(pos):
                stream = f"refusals/{config}/bias_type={bias_type}"
                entry[bias_type] = ctx.boot.ratio(refused[pos], requests[pos], stream)[0]
        out[str(config)] = entry
    return {"refusal_rate": out}
