"""Judge identity (judge_identity.py): recorded per judgement row, compared part by part."""

from __future__ import annotations

import json

from implicit_bench.backends.judges.stage import PlannedJudgement, assemble
from implicit_bench.protocol.judge_identity import differences, judge_identity, template_sha256
from implicit_bench.protocol.judge_tasks import load_task

QWEN = {
    "backend": "transformers",
    "model": "Qwen/Qwen3-VL-30B-A3B-Instruct",
    "max_image_side": None,
}
GREEDY = {"greedy": True, "max_new_tokens": 256}


def test_assemble_writes_the_identity_of_each_judge_and_task() -> None:
    planned = [
        PlannedJudgement("k1", "q", "rubric", "c", "u1", "neutral", 42, None, "p", "h", "s", "/x"),
        PlannedJudgement(
            "k2", "q", "alignment", "c", "u1", "neutral", 42, None, "p", "h", "s", "/x"
        ),
    ]
    answers = {"k1": {"text": '{"score": 3}'}, "k2": {"text": '{"aligned": "yes"}'}}
    frame, _ = assemble(
        planned, answers, {}, {"q": QWEN["model"]}, {"q": {"identity": QWEN, "decoding": GREEDY}}
    )
    ids = [json.loads(t) for t in frame["judge_identity"]]
    assert {i["model"] for i in ids} == {"Qwen/Qwen3-VL-30B-A3B-Instruct"}
    by_task = dict(zip(frame["task"], ids, strict=True))
    assert by_task["rubric"]["template_sha256"] == template_sha256(load_task("rubric").prompt)
    assert by_task["rubric"]["template_sha256"] != by_task["alignment"]["template_sha256"]
    assert by_task["rubric"]["decoding"] == GREEDY
    assert by_task["rubric"]["image"] == {"max_image_side": None}


def test_differences_name_each_part() -> None:
    a = judge_identity(QWEN, GREEDY, "rate {head}")
    assert (
        differences(a, judge_identity(QWEN, {"greedy": True, "max_new_tokens": 300}, "rate {head}"))
        == []
    )
    served = {"backend": "openai", "model": "qwen/qwen3-vl-30b-a3b-instruct", "max_image_side": 768}
    b = judge_identity(served, {"temperature": 0.0, "max_tokens": 256}, "rate {head}")
    assert differences(a, b) == ["image downscaling"]  # same model and template, greedy both
    c = judge_identity({"model": "gpt-5.4"}, {"temperature": None}, "other {head}")
    assert differences(a, c) == ["model", "prompt template", "decoding", "image downscaling"]
    assert differences(a, None) == ["model", "prompt template", "decoding", "image downscaling"]
