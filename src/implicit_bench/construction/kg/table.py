"""The KG units table (``data/interim/kg_units.parquet``): one row per unit.

List fields are stored as JSON lists (``stereotype_tails``, ``anti_stereotype_tails``,
``*_evidence``) next to the joined strings ``stereotype`` / ``anti_stereotype`` (", ").
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from pydantic import ValidationError

from implicit_bench.errors import InputError
from implicit_bench.protocol.records import KGUnit
from implicit_bench.protocol.tables import KG_UNIT_COLUMNS, KG_UNITS

LIST_FIELDS = (
    "stereotype_tails",
    "anti_stereotype_tails",
    "stereotype_evidence",
    "anti_stereotype_evidence",
)


def units_frame(units: list[KGUnit]) -> pd.DataFrame:
    rows = []
    for unit in units:
        row = unit.model_dump()
        for name in LIST_FIELDS:
            row[name] = json.dumps(row[name], ensure_ascii=False)
        row["stereotype"], row["anti_stereotype"] = unit.stereotype, unit.anti_stereotype
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(KG_UNIT_COLUMNS))
    return frame.astype({"frame_sensitive": bool}) if len(frame) else frame


def units_from_frame(frame: pd.DataFrame, path: str | Path = "kg_units") -> list[KGUnit]:
    """Validate a KG units table back into records; a bad row names file, row and field."""
    missing = [c for c in KG_UNITS.required if c not in frame.columns]
    if missing:
        raise InputError(path, None, missing[0], "missing column")
    fields = set(KGUnit.model_fields)
    units = []
    for index, row in enumerate(frame.to_dict("records"), start=1):
        data = {k: (None if _isna(v) else v) for k, v in row.items() if k in fields}
        for name in LIST_FIELDS:
            if name in data and isinstance(data[name], str):
                try:
                    data[name] = json.loads(data[name])
                except json.JSONDecodeError as exc:
                    raise InputError(path, index, name, f"not a JSON list: {exc.msg}") from None
            elif name in data and data[name] is None:
                data.pop(name)
        try:
            units.append(KGUnit(**data))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InputError(
                path, index, ".".join(str(p) for p in err["loc"]) or None, err["msg"]
            ) from None
    return units


def _isna(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)
