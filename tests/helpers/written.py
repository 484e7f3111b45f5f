"""Expected values of numbers read back from metrics / tables files, which are written to
``io.OUTPUT_DIGITS`` significant digits (docs/metrics.md, "Written precision")."""

from __future__ import annotations

import pytest

from implicit_bench._util.files import OUTPUT_DIGITS, significant


def as_written(expected: float) -> float:
    """``expected`` as a metrics file holds it."""
    return significant(float(expected), OUTPUT_DIGITS)


def approx_written(expected: float | list[float], **tolerance: float) -> object:
    """``pytest.approx`` of ``expected`` (a number or a list) as a metrics file holds it."""
    if isinstance(expected, list):
        return pytest.approx([as_written(x) for x in expected], **tolerance)
    return pytest.approx(as_written(expected), **tolerance)
