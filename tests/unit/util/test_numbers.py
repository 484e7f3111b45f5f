"""One home for number rules: implicit_bench._util.numbers, worked by hand."""

from __future__ import annotations

import math

import numpy as np

from implicit_bench._util.numbers import (
    finite,
    fixed,
    percent_points,
    percent_text,
    real_number,
    rounded,
)


def test_finite_converts_and_drops_non_finite():
    assert finite(None) is None and finite(math.nan) is None and finite(-math.inf) is None
    assert finite(np.float32(0.5)) == 0.5 and finite("2") == 2.0 and finite(3) == 3.0


def test_real_number_takes_numbers_only():
    assert real_number(True) is None and real_number("1.5") is None and real_number(None) is None
    assert real_number(math.inf) is None and real_number(math.nan) is None
    assert real_number(2) == 2.0 and real_number(0.25) == 0.25


def test_rounded_and_percent_points():
    assert rounded(1 / 3, 6) == 0.333333 and rounded(math.nan, 6) is None
    assert percent_points(None) is None and percent_points(0.123456) == 12.3456
    assert percent_points(0.123456, 2) == 12.35


def test_text_forms():
    assert fixed(None) == "-" and fixed(None, missing="n/a") == "n/a"
    assert fixed(1.23456) == "1.235" and fixed(0.5, 1, signed=True) == "+0.5"
    assert fixed(-0.25, 2, signed=True) == "-0.25"
    assert percent_text(0.1234) == "12.3" and percent_text(None) == "-"
    assert percent_text(0.5, 0, missing="n/a") == "50"
