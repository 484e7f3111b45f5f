"""_util.nested.dig: reads like the `((m.get(a) or {}).get(b) or {})...` chain it replaces."""

from __future__ import annotations

import pytest

from implicit_bench._util.nested import dig


def _chain(m, a, b, c):
    return (((m or {}).get(a) or {}).get(b) or {}).get(c)


@pytest.mark.parametrize(
    "data",
    [
        {"a": {"b": {"c": 1}}},
        {"a": {"b": {"c": None}}},
        {"a": {"b": {}}},
        {"a": {"b": None}},
        {"a": {}},
        {"a": None},
        {"a": []},  # falsy: read as empty, as the chain does
        {},
        None,
    ],
)
def test_dig_equals_the_chain(data):
    assert dig(data, "a", "b", "c") == _chain(data, "a", "b", "c")


def test_dig_values():
    data = {"a": {"b": {"c": 1}}, "n": None}
    assert dig(data, "a", "b", "c") == 1
    assert dig(data, "a", "b") == {"c": 1}
    assert dig(data, "n", "x") is None
    assert dig(data) == data  # no keys: the mapping itself


def test_a_level_that_is_not_a_mapping_is_an_error_as_in_the_chain():
    with pytest.raises(AttributeError):
        dig({"a": [1]}, "a", "b")
    with pytest.raises(AttributeError):
        _chain({"a": [1]}, "a", "b", "c")
