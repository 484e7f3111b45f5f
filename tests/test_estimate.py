"""The Estimate model: JSON form, strict reading, NaN handling."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from implicit_bench.errors import ConfigError
from implicit_bench.estimate import FIELDS, Estimate, estimate_json, is_estimate, read_estimate


def test_json_form_round_trips():
    e = Estimate.of(np.float64(0.25), (np.float64(0.1), 0.4), np.int64(12), 0.95)
    payload = e.to_json()
    assert payload == {"value": 0.25, "ci": [0.1, 0.4], "n": 12, "level": 0.95}
    assert list(payload) == list(FIELDS)
    assert Estimate.from_json(json.loads(json.dumps(payload))) == e
    assert (e.low, e.high) == (0.1, 0.4)


def test_undefined_values_become_null():
    e = Estimate.of(float("nan"), [float("nan"), 1.0], 3, 0.95)
    assert e.to_json() == {"value": None, "ci": None, "n": 3, "level": 0.95}
    assert estimate_json(None) == {"value": None, "ci": None, "n": None, "level": None}


@pytest.mark.parametrize(
    "bad",
    [
        {"value": 1.0, "ci": [0, 2], "n": 3},  # a key missing
        {"value": 1.0, "ci": [0, 2], "n": 3, "level": 0.95, "stream": "x"},  # an extra key
        {"value": 1.0, "ci_low": 0, "ci_high": 2, "n": 3, "level": 0.95},  # another spelling
        {"value": 1.0, "ci": [2, 0], "n": 3, "level": 0.95},  # low > high
        {"value": 1.0, "ci": [0, 2], "n": 3, "level": None},  # an interval without its level
        {"value": 1.0, "ci": [0, 2], "n": 2.5, "level": 0.95},  # n not whole
        {"value": True, "ci": None, "n": 1, "level": None},
        [1.0, [0, 2]],
    ],
)
def test_from_json_accepts_exactly_the_form(bad):
    with pytest.raises(ConfigError):
        Estimate.from_json(bad)


def test_helpers():
    assert is_estimate({"value": None, "ci": None, "n": None, "level": None})
    assert not is_estimate({"value": 1.0, "ci": None})
    assert read_estimate(None) is None
    pct = Estimate.of(0.5, (0.25, 0.75), 4, 0.95).scaled(100)
    assert pct.to_json() == {"value": 50.0, "ci": [25.0, 75.0], "n": 4, "level": 0.95}
    with pytest.raises(ValidationError):
        pct.value = 3.0  # frozen
