"""The subset of units taken through the later stages (param ``subset.max_units``).

Stratified by bias type, round robin: bias types in sorted order take turns, each contributing
its next unit, until ``max_units`` are taken or all units are used (so 24 units over 11 bias
types gives every type 2 and two types a third, in sorted order). Within a bias type, units
whose triplet passed every check come first; ties are ordered by ``derive_seed(seed, unit_id)``
(independent of row order). ``max_units = 0`` takes every unit.

``order: proportional`` (a pilot of a fixed unit set: ``run --benchmark REL --units N``) keeps
each bias type's share of the whole set: within a type units are ranked by
``derive_seed(seed, unit_id)``, the k-th of a type of n sits at (k + 1/2) / n on one scale, and
the first ``max_units`` on that scale are taken (systematic proportional allocation). Like the
other orders it is one fixed order whose prefixes nest: growing N keeps every unit taken.

``order: random`` (``run --sequential``) ranks all units by ``derive_seed(seed, unit_id)``
alone: a uniformly random order, fixed by the seed, whose prefixes are the rounds (each round
holds the previous one), the order the anytime-valid intervals assume (docs/analysis.md).
"""

from __future__ import annotations

import pandas as pd

from implicit_bench._util.hashing import derive_seeds
from implicit_bench.params import SubsetParams  # the one subset model (params section ``subset``)

__all__ = ["SubsetParams", "random_order", "stratified_subset"]


def random_order(unit_ids: list[str], seed: int) -> list[str]:
    """Every unit id, ranked by ``derive_seed(seed, unit_id)``: ``order: random``'s order."""
    keys = derive_seeds(seed, unit_ids)
    return [uid for _, uid in sorted(zip(keys, unit_ids, strict=True))]


def stratified_subset(
    frame: pd.DataFrame, max_units: int, seed: int, order: str = "stratified"
) -> pd.DataFrame:
    if max_units <= 0 or max_units >= len(frame):
        return frame.sort_values("unit_id").reset_index(drop=True)
    if order == "random":
        keep = set(random_order(frame["unit_id"].astype(str).tolist(), seed)[:max_units])
        chosen = frame[frame["unit_id"].astype(str).isin(keep)]
        return chosen.sort_values("unit_id").reset_index(drop=True)
    if order == "proportional":
        keys = frame.assign(_key=derive_seeds(seed, frame["unit_id"].astype(str).tolist()))
        keys = keys.sort_values(["bias_type", "_key"])
        rank = keys.groupby("bias_type").cumcount()
        size = keys.groupby("bias_type")["unit_id"].transform("size")
        keys["_scale"] = (rank + 0.5) / size
        chosen = keys.sort_values(["_scale", "_key"]).head(max_units)
        return chosen.drop(columns=["_key", "_scale"]).sort_values("unit_id").reset_index(drop=True)
    ranked = frame.assign(
        _failed=~frame["check_ok"].astype(bool) if "check_ok" in frame else False,
        _key=derive_seeds(seed, frame["unit_id"].astype(str).tolist()),
    ).sort_values(["bias_type", "_failed", "_key"])
    ranked["_turn"] = ranked.groupby("bias_type").cumcount()
    ranked = ranked.sort_values(["_turn", "bias_type"]).head(max_units)
    return (
        ranked.drop(columns=["_failed", "_key", "_turn"])
        .sort_values("unit_id")
        .reset_index(drop=True)
    )
