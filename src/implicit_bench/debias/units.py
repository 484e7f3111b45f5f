"""The units of the debiasing stages: the KG table, the fixed subset every configuration
renders, and the unit whose fields a configuration uses (own or retrieved)."""

from __future__ import annotations

import pandas as pd

from implicit_bench._util.hashing import derive_seeds
from implicit_bench.errors import InputError
from implicit_bench.params import SubsetParams
from implicit_bench.protocol.tables import RETRIEVAL_PATH

UNIT_FIELDS = ("unit_id", "head", "relation", "stereotype", "anti_stereotype", "prompt_neutral")
# The UNITS columns the debiasing stages read (``tables.UNITS.read(path, require=KG_COLUMNS)``):
# the retrieval fields and the three prompts.
KG_COLUMNS = (*UNIT_FIELDS, "prompt_stereotype", "prompt_anti_stereotype")


def subset_units(units: pd.DataFrame, subset: SubsetParams) -> pd.DataFrame:
    """A fixed pseudo-random subset: units ordered by a hash of (seed, unit id); the first
    ``max_units`` are kept, returned in unit-id order. Adding units to the KG never changes
    which of the old units come first."""
    if subset.max_units == 0 or subset.max_units >= len(units):
        return units.sort_values("unit_id", ignore_index=True)
    order = derive_seeds(subset.seed, units["unit_id"].astype(str).tolist())
    picked = units.assign(_order=order).sort_values(["_order", "unit_id"]).head(subset.max_units)
    return picked.drop(columns="_order").sort_values("unit_id", ignore_index=True)


def unit_for(info: str, unit_id: str, retrieval: pd.DataFrame | None) -> str | None:
    """The unit whose fields a configuration uses: none, the own unit, or the unit retrieved
    with the own unit removed from the KG."""
    if info == "none":
        return None
    if info == "own":
        return unit_id
    if retrieval is None:
        raise InputError(RETRIEVAL_PATH, unit_id, "retrieved_removed", "retrieval result needed")
    row = retrieval.loc[retrieval["unit_id"] == unit_id]
    if row.empty:
        raise InputError(RETRIEVAL_PATH, unit_id, "unit_id", "no retrieval result for this unit")
    return str(row["retrieved_removed"].iloc[0])
