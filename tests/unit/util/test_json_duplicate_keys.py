"""A JSON object naming one key twice is ambiguous, so invalid, never its last value: model
answers (jsonparse.parse_json_answer) and API answer bodies (``"choices"`` twice)."""

from __future__ import annotations

import httpx
import pytest
from pydantic import BaseModel

from implicit_bench._util.jsonparse import DuplicateKeyError, loads_strict, parse_json_answer
from implicit_bench.backends.llm.openai import _content


class Score(BaseModel):
    score: int


@pytest.mark.parametrize(
    "raw",
    [
        '{"score": 0, "score": 5}',
        'Here: ```json\n{"score": 0, "score": 5}\n```',
        'text {"score": 1, "x": {"a": 1, "a": 2}} more',
    ],
)
def test_duplicate_keys_in_an_answer_are_invalid(raw):
    parsed = parse_json_answer(raw, Score)
    assert not parsed.valid and parsed.value is None
    assert "duplicate key" in parsed.error


def test_unique_keys_still_parse():
    assert parse_json_answer('{"score": 5}', Score).value == Score(score=5)
    assert parse_json_answer("[" * 100_000, None).error == "not JSON: nested too deeply"


def test_loads_strict():
    assert loads_strict(b'{"a": {"b": 1}, "c": [{"b": 2}]}') == {"a": {"b": 1}, "c": [{"b": 2}]}
    with pytest.raises(DuplicateKeyError, match="'choices'"):
        loads_strict('{"choices": [], "choices": []}')
    with pytest.raises(ValueError, match="nested too deeply"):
        loads_strict("[" * 100_000)


def test_chat_answer_with_choices_twice_is_malformed():
    body = (
        b'{"choices": [{"message": {"content": "{\\"score\\": 0}"}}],'
        b' "choices": [{"message": {"content": "{\\"score\\": 5}"}}]}'
    )
    text, error = _content(httpx.Response(200, content=body))
    assert text == "" and "malformed response" in error and "DuplicateKeyError" in error
