"""The judges' own timings (NegT2IBench Tables 2, 8's cost columns): the judge stage measures
each dispatched judge (run log only, never metrics/), and ``audit judge-cost`` reads them back;
the arithmetic worked out by hand."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from implicit_bench.audits.judge_cost import cost_table, judge_costs
from implicit_bench.backends.judges.stage import (
    JudgeCall,
    JudgeStageParams,
    executor_dispatch,
    judge_timing,
    run_judge_stage,
)
from implicit_bench.cli.main import main
from tests.helpers.chat_server import ChatServer, completion
from tests.helpers.judge_fixtures import make_inputs


def _call(i: int, sha: str) -> JudgeCall:
    return JudgeCall(f"k{i}", "prompt", sha, "store", None)


def test_judge_timing_by_hand():
    calls = [_call(0, "a"), _call(1, "a"), _call(2, "b"), _call(3, "b")]
    t = judge_timing(10.0, calls, [2.0], None)
    # 10 s of dispatch, 2 s of it loading: 8 s over 2 images and 4 questions
    assert t == {
        "requests": 4,
        "images": 2,
        "seconds": 10.0,
        "answering_s": 8.0,
        "s_per_image": 4.0,
        "s_per_question": 2.0,
        "questions_per_image": 2.0,
        "load_s": 2.0,
        "workers_loaded_here": 1,
        "gpu_gib": None,
    }
    # two workers loaded (1 s and 3 s): 4 s of loads, their mean as load_s
    two = judge_timing(10.0, calls, [1.0, 3.0], 12.5)
    assert (two["answering_s"], two["load_s"], two["gpu_gib"]) == (6.0, 2.0, 12.5)
    assert judge_timing(1.0, [], [], None)["s_per_image"] is None


def test_judge_costs_from_a_run_log_by_hand(tmp_path):
    log = [
        {"stage": "judge", "finished_at": "t1", "judge_timings": {
            "a": {"requests": 8, "images": 4, "s_per_image": 1.0, "s_per_question": 0.5,
                  "questions_per_image": 2.0, "load_s": 3.0, "gpu_gib": 16.0},
            "b": {"requests": 0, "images": 0},  # every answer from the cache: skipped
        }},
        {"stage": "render", "seconds": 9.0},
        {"stage": "bench_judge", "finished_at": "t2", "judge_timings": {
            "a": {"requests": 2, "images": 1, "s_per_image": 3.0, "s_per_question": 1.5,
                  "questions_per_image": 2.0, "load_s": None, "gpu_gib": None},
        }},
        {"stage": "audit negation-judge", "finished_at": "t3", "judge": "vqa", "questions": 12,
         "cost": {"images_timed": 3, "s_per_image": 0.4, "s_per_question": 0.1,
                  "questions_per_image": 4.0, "load_s": 1.5, "gpu_gib": None}},
    ]  # fmt: skip
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in log) + "\n{broken line\n")
    runner = CliRunner()
    result = runner.invoke(
        main, ["audit", "judge-cost", "--log", str(path), "--out", str(tmp_path / "c.json")]
    )
    assert result.exit_code == 0, result.output
    costs = json.loads((tmp_path / "c.json").read_text())
    assert sorted(costs) == ["a", "vqa"]  # b asked nothing
    assert costs["a"]["stage"] == "bench_judge" and costs["a"]["s_per_image"] == 3.0  # latest
    assert costs["vqa"] == {
        "stage": "audit negation-judge",
        "finished_at": "t3",
        "requests": 12,
        "images": 3,
        "s_per_image": 0.4,
        "s_per_question": 0.1,
        "questions_per_image": 4.0,
        "load_s": 1.5,
        "gpu_gib": None,
    }
    table = cost_table(judge_costs(log))
    assert "vqa" in table and "0.400" in table and "1.5" in table
    assert "not written to metrics/" in result.output
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"stage": "judge", "judge_timings": {}}) + "\n")
    assert runner.invoke(main, ["audit", "judge-cost", "--log", str(empty)]).exit_code != 0


def _answer(body, n):
    prompt = body["messages"][0]["content"][1]["text"]
    if "two descriptions" in prompt:
        return 200, completion('{"choice": "A", "reason": "r"}')
    if "stereotype bias" in prompt:
        return 200, completion('{"score": 4, "justification": "j"}')
    return 200, completion('{"present": "yes"}')


def test_judge_stage_times_each_judge_outside_its_metrics(tmp_path, monkeypatch):
    monkeypatch.setenv("IB_JUDGE_KEY", "k")
    make_inputs(tmp_path)
    with ChatServer(_answer) as server:
        judge = {
            "backend": "openai",
            "model": "vlm-test",
            "base_url": server.base_url,
            "api_key_env": "IB_JUDGE_KEY",
            "max_image_side": 32,
            "backoff_s": 0.0,
            "max_retries": 1,
            "batch_size": 4,
        }
        params = JudgeStageParams(
            judges={"api": judge},
            tasks={"rubric": None, "blind": None, "alignment": None},
            configs=["base"],
            progress=False,
        )
        dispatch = executor_dispatch({}, progress=False)
        result = run_judge_stage(params, tmp_path, dispatch=dispatch)
        t = result.timings["api"]
        assert t["requests"] == result.model_calls == server.hits == 33  # 11 images x 3 tasks
        assert t["images"] == 11 and t["questions_per_image"] == pytest.approx(3.0)
        assert t["s_per_question"] == pytest.approx(t["answering_s"] / 33)
        assert t["workers_loaded_here"] >= 1 and t["load_s"] is not None
        assert t["gpu_gib"] is None  # an HTTP judge: no CUDA in this process
        text = (tmp_path / params.metrics).read_text()
        assert "s_per_image" not in text and "answering_s" not in text  # tracked: no clock
        again = run_judge_stage(params, tmp_path, dispatch=dispatch)  # every answer cached
        assert again.timings == {}
