"""The subset of units taken through the later stages (param ``subset.max_units``).

Stratified by bias type, round robin: bias types in sorted order take turns, each contributing
its next unit, until ``max_units`` are taken or all units are used (so 24 units over 11 bias
types gives every type 2 and two types a third, in sorted order). Within a bias type, units
whose triplet passed every check come first; ties are ordered by ``derive_seed(seed, unit_id)``
(independent of row order). ``max_units = 0`` takes every unit.
"""

from __future__ import annotations

import pandas as pd

from implicit_bench.hashing import derive_seed
from implicit_bench.params import SubsetParams  # the one subset model (params section ``subset``)

__all__ = ["SubsetParams", "stratified_subset"]


def stratified_subset(frame: pd.DataFrame, max_units: int, seed: int) -> pd.DataFrame:
    if max_units <= 0 or max_units >= len(frame):
        return frame.sort_values("unit_id").reset_index(drop=True)
    ranked = frame.assign(
        _failed=~frame["check_ok"].astype(bool) if "check_ok" in frame else False,
        _key=[derive_seed(seed, uid) for uid in frame["unit_id"]],
    ).sort_values(["bias_type", "_failed", "_key"])
    ranked["_turn"] = ranked.groupby("bias_type").cumcount()
    ranked = ranked.sort_values(["_turn", "bias_type"]).head(max_units)
    return (
        ranked.drop(columns=["_failed", "_key", "_turn"])
        .sort_values("unit_id")
        .reset_index(drop=True)
    )
