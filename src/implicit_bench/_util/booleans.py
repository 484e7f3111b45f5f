"""Strict parsing of boolean columns read from CSV or Parquet.

``astype(bool)`` calls every non-empty string true (``"no"``, ``"false"``, ``"0"``), so a
boolean read from text is parsed here instead: ``true``/``false``, ``yes``/``no`` and ``1``/``0``
(any case, surrounding spaces ignored) and real booleans or the integers 0 and 1. Anything
else, blanks included, is an ``errors.InputError`` naming the file, the row and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.errors import InputError

TRUE_WORDS = frozenset({"true", "yes", "1"})
FALSE_WORDS = frozenset({"false", "no", "0"})


def parse_bool(value: Any) -> bool | None:
    """True / False for a recognised value, None for anything else (blanks included)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {1: True, 0: False}.get(value) if value == value else None  # noqa: PLR0124 - NaN
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalars
        return parse_bool(value.item())
    if isinstance(value, str):
        text = value.strip().lower()
        if text in TRUE_WORDS:
            return True
        if text in FALSE_WORDS:
            return False
    return None


def parse_bool_column(series: pd.Series, path: str | Path, field: str) -> pd.Series:
    """The column as bools; the first value that is not a recognised boolean raises
    ``InputError`` (1-based data row)."""
    parsed = [parse_bool(v) for v in series.tolist()]
    for row, (raw, value) in enumerate(zip(series.tolist(), parsed, strict=True), start=1):
        if value is None:
            raise InputError(path, row, field, f"expected true/false, yes/no or 1/0, got {raw!r}")
    return pd.Series(parsed, index=series.index, dtype=bool)
