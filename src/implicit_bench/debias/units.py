"""The units of the debiasing stages: the KG table, the fixed subset every configuration
renders, and the unit whose fields a configuration uses (own or retrieved)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from implicit_bench.errors import InputError
from implicit_bench.hashing import derive_seed
from implicit_bench.io import read_table
from implicit_bench.params import SubsetParams
from implicit_bench.tables import RETRIEVAL_PATH

UNIT_FIELDS = ("unit_id", "head", "relation", "stereotype", "anti_stereotype", "prompt_neutral")


def load_kg(path: str | Path) -> pd.DataFrame:
    """The units table (the KG): the retrieval fields and the three prompts, ids as strings."""
    units = read_table(path)
    for column in (*UNIT_FIELDS, "prompt_stereotype", "prompt_anti_stereotype"):
        if column not in units.columns:
            raise InputError(path, None, column, "missing column")
    units = units.assign(unit_id=units["unit_id"].astype(str))
    dup = units["unit_id"].duplicated()
    if dup.any():
        row = int(dup.to_numpy().argmax()) + 1
        raise InputError(path, row, "unit_id", f"duplicate unit id {units['unit_id'].iloc[row - 1]!r}")
    for column in ("head", "stereotype", "anti_stereotype", "prompt_neutral"):
        bad = units[column].isna() | (units[column].astype(str).str.strip() == "")
        if bad.any():
            row = int(bad.to_numpy().argmax()) + 1
            raise InputError(path, row, column, "empty")
    return units.reset_index(drop=True)


def subset_units(units: pd.DataFrame, subset: SubsetParams) -> pd.DataFrame:
    """A fixed pseudo-random subset: units ordered by a hash of (seed, unit id); the first
    ``max_units`` are kept, returned in unit-id order. Adding units to the KG never changes
    which of the old units come first."""
    if subset.max_units == 0 or subset.max_units >= len(units):
        return units.sort_values("unit_id", ignore_index=True)
    order = units["unit_id"].map(lambda u: derive_seed(subset.seed, u))
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
