"""Numbers of text cells, each distinct text parsed once.

A table column of numbers read as text (CSV) holds few distinct texts (seeds, 0-5 scores):
``pd.to_numeric`` on the whole column parses every cell in Python objects, about 20 times the
cost of factorising the column and parsing its distinct values (docs/analysis.md, "Speed").
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def text_floats(values: pd.Series) -> pd.Series:
    """``pd.to_numeric(values, errors="coerce").astype(float)``, the same numbers."""
    if not isinstance(values.dtype, pd.StringDtype) and values.dtype != object:
        return pd.to_numeric(values, errors="coerce").astype(float)
    try:
        codes, distinct = pd.factorize(values)
    except TypeError:  # an unhashable cell (a list): every cell
        return pd.to_numeric(values, errors="coerce").astype(float)
    numbers = pd.to_numeric(pd.Series(distinct, dtype=object), errors="coerce").astype(float)
    out = np.append(numbers.to_numpy(dtype=float), np.nan)[codes]  # code -1: a null cell
    return pd.Series(out, index=values.index, name=values.name)
