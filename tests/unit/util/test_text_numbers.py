"""``text_floats`` gives ``pd.to_numeric(..., errors="coerce").astype(float)`` cell for cell."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from implicit_bench._util.text_numbers import text_floats

TEXTS = ["1", "2", " 3", "x", None, "1e3", "nan", "inf", "-0", "", "0x10", "1_000", "2.50", "2.5"]


@pytest.mark.parametrize(
    "values",
    [
        pd.Series(TEXTS * 3, dtype="str"),
        pd.Series(TEXTS, dtype=object, index=range(10, 10 + len(TEXTS))),
        pd.Series(["1", 2, 3.5, None, [1]], dtype=object),  # an unhashable cell
        pd.Series([1, 2, 3]),
        pd.Series([1.5, None]),
    ],
)
def test_the_same_numbers_as_to_numeric(values):
    expected = pd.to_numeric(values, errors="coerce").astype(float)
    got = text_floats(values)
    assert got.index.equals(expected.index) and got.dtype == np.float64
    assert np.array_equal(got.to_numpy(), expected.to_numpy(), equal_nan=True)
