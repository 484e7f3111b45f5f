"""Answer parsing is linear in the answer and bounded in length (40,000 ``{`` took
52.6 s: every ``{`` started a scan of its own); deep nesting is an invalid answer."""

from __future__ import annotations

import time

import pytest

from implicit_bench._util.jsonparse import MAX_ANSWER_CHARS, _first_object, parse_json_answer


def _seconds(text: str) -> float:
    t0 = time.perf_counter()
    parse_json_answer(text)
    return time.perf_counter() - t0


@pytest.mark.parametrize(
    "text", ["{" * 40_000, '{"' + "{" * 40_000, "[" * 40_000, "{" * 40_000 + '"']
)
def test_forty_thousand_braces_parse_fast_and_invalid(text):
    assert _seconds(text) < 3.0  # was 52.6 s
    assert not parse_json_answer(text).valid


def test_scan_is_linear_in_the_answer():
    small, large = "{" * 20_000, "{" * 160_000
    _seconds(small)  # warm
    ratio = _seconds(large) / max(_seconds(small), 1e-4)
    assert ratio < 24  # 8x the text: about 8x the time (quadratic: 64x)


def test_answer_longer_than_the_bound_is_invalid_unparsed():
    text = '{"score": 1}' + " " * MAX_ANSWER_CHARS
    parsed = parse_json_answer(text)
    assert not parsed.valid and "longer than 1000000" in parsed.error and parsed.raw == text


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            'Sure: {"score": 4, "why": "a } in a string"} done',
            '{"score": 4, "why": "a } in a string"}',
        ),
        ('{{"a": 1}', '{"a": 1}'),
        ('{"a": {"b": 2}} {"c": 3}', '{"a": {"b": 2}}'),
        ('x {"a": "\\"}"} y', '{"a": "\\"}"}'),
        ('say "hi {" then {"a": 1}', '{"a": 1}'),  # as the per-start scan found it
        ("no object", None),
    ],
)
def test_first_object_by_hand(text, expected):
    assert _first_object(text) == expected
