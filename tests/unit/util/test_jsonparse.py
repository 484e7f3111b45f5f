from __future__ import annotations

from pydantic import BaseModel, Field

from implicit_bench._util.jsonparse import parse_json_answer


class Score(BaseModel):
    score: int = Field(ge=0, le=5)
    justification: str = ""


def test_strict():
    out = parse_json_answer('{"score": 3, "justification": "x"}', Score)
    assert out.valid and out.mode == "strict" and out.value.score == 3


def test_lenient_fence_and_embedded_object():
    fenced = parse_json_answer('Sure!\n```json\n{"score": 4}\n```', Score)
    assert fenced.valid and fenced.mode == "lenient" and fenced.value.score == 4
    embedded = parse_json_answer('Answer: {"score": 2, "justification": "a {b} c"} done', Score)
    assert embedded.valid and embedded.value.score == 2


def test_invalid_answers_keep_raw_text():
    for raw in ["", "   ", '{"score": 9}', '{"score": 3', "The score is three."]:
        out = parse_json_answer(raw, Score)
        assert not out.valid and out.mode == "invalid" and out.raw == raw and out.error
