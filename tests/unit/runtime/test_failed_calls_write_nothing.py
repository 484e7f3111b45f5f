"""A stage whose model calls all fail, or fail above ``max_failure_rate``, exits
non-zero and writes nothing, so DVC does not record the failed run (judge, rewrite, the LLM
negation writer; kg and triplets already did for all-failed)."""

from __future__ import annotations

import socket

import pandas as pd
import pytest

from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.backends.judges.stage import executor_dispatch, run_judge_stage
from implicit_bench.runtime.failures import LLMUnavailableError, check_failure_rate
from tests.helpers.chat_server import ChatServer, completion
from tests.helpers.judge_fixtures import make_inputs

DISPATCH = executor_dispatch({}, progress=False)  # the production dispatcher


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _judges(url: str) -> dict:
    return {
        "api": {
            "backend": "openai",
            "model": "m",
            "base_url": url,
            "api_key_env": None,
            "backoff_s": 0.0,
            "max_retries": 0,
        }
    }


def _params(url: str, **extra) -> JudgeStageParams:
    return JudgeStageParams(
        judges=_judges(url), tasks={"rubric": None}, configs=["base"], progress=False, **extra
    )


def test_judge_with_the_server_down_exits_non_zero_and_writes_nothing(tmp_path):
    make_inputs(tmp_path)
    params = _params(_closed_port_url())
    with pytest.raises(
        LLMUnavailableError, match=r"judge: all 11 judge calls failed .*ConnectError"
    ):
        run_judge_stage(params, tmp_path, dispatch=DISPATCH)
    assert not (tmp_path / params.out).exists() and not (tmp_path / params.metrics).exists()


def test_judge_stage_command_exits_1_with_the_server_down(tmp_path, monkeypatch, repo_root):
    import runpy

    import yaml
    from click.testing import CliRunner

    make_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    # the server goes down after the stage's preflight (that case:
    # tests/unit/runtime/preflight/test_stage_preflight.py)
    monkeypatch.setenv("IMPLICIT_BENCH_NO_PREFLIGHT", "1")
    (tmp_path / "params.yaml").write_text(
        yaml.safe_dump(
            {
                "judge": {"tasks": {"rubric": None}, "configs": ["base"], "progress": False},
                "judges": _judges(_closed_port_url()),
            }
        )
    )
    stage = runpy.run_path(str(repo_root / "stages" / "judge.py"))["main"]
    result = CliRunner().invoke(stage, [])
    assert result.exit_code == 1, result.output
    assert "all 11 judge calls failed" in result.output and "DVC does not record" in result.output


def test_judge_above_the_threshold_fails_and_below_it_keeps_invalid_rows(tmp_path):
    make_inputs(tmp_path)
    state = {"fail": 6}

    def answer(body, n):
        if state["fail"] > 0:
            state["fail"] -= 1
            return 503, {"error": {"message": "down"}}
        return 200, completion('{"score": 2}')

    with ChatServer(answer) as server:
        with pytest.raises(LLMUnavailableError, match="6 of 11 judge calls failed"):
            run_judge_stage(_params(server.base_url), tmp_path, dispatch=DISPATCH)  # default 0.5
        state["fail"] = 6
        make_inputs(tmp_path / "b")  # a fresh cache: 11 calls again, 6 fail
        result = run_judge_stage(
            _params(server.base_url, max_failure_rate=0.6), tmp_path / "b", dispatch=DISPATCH
        )
    assert int((~result.frame["valid"]).sum()) == 6


@pytest.mark.parametrize("bad", [True, float("nan"), 1.5, -0.1, "half"])
def test_max_failure_rate_is_a_finite_share(bad):
    with pytest.raises(ValueError, match="max_failure_rate"):
        _params("http://127.0.0.1:1/v1", max_failure_rate=bad)


def test_check_failure_rate_by_hand():
    check_failure_rate("s", 0, 0, 0.0, None)  # no calls
    check_failure_rate("s", 1, 2, 0.5, None)  # exactly at the threshold
    with pytest.raises(LLMUnavailableError, match="s: 2 of 3 LLM calls failed"):
        check_failure_rate("s", 2, 3, 0.5, "HTTP 503")
    with pytest.raises(LLMUnavailableError, match="all 3 LLM calls failed"):
        check_failure_rate("s", 3, 3, 1.0, None)  # all failed: always an error


def test_rewrite_with_the_llm_down_exits_non_zero(tmp_path):
    from implicit_bench.backends.llm import build_llm
    from implicit_bench.debias.rewriting import run_rewriting
    from implicit_bench.debias.stage import DebiasParams

    kg = pd.DataFrame(
        [
            {
                "unit_id": "u1",
                "head": "mover",
                "relation": None,
                "stereotype": "man",
                "anti_stereotype": "woman",
                "prompt_neutral": "A mover.",
            }
        ]
    )
    client = build_llm(
        {
            "backend": "openai",
            "model": "m",
            "base_url": _closed_port_url(),
            "api_key_env": None,
            "cache": None,
            "max_retries": 0,
        }
    )
    retrieval = pd.DataFrame({"unit_id": ["u1"], "retrieved_removed": ["u1"]})
    with pytest.raises(LLMUnavailableError, match="rewrite: all 3 LLM calls failed"):
        run_rewriting(kg, kg, retrieval, DebiasParams(), client)


def test_negation_writer_with_the_llm_down_exits_non_zero():
    from implicit_bench.construction.triplets.hooks import NegationPromptParams, extend_units

    units = pd.DataFrame(
        {
            "unit_id": ["1"],
            "stereotype": ["man"],
            "anti_stereotype": ["woman"],
            "head": ["mover"],
            "prompt_neutral": ["A mover."],
            "prompt_stereotype": ["A man mover."],
            "prompt_anti_stereotype": ["A woman mover."],
        }
    )
    llms = {
        "t": {
            "backend": "openai",
            "model": "m",
            "base_url": _closed_port_url(),
            "api_key_env": None,
            "cache": None,
            "max_retries": 0,
        }
    }
    with pytest.raises(LLMUnavailableError, match="negation_prompts: all 1 LLM calls failed"):
        extend_units(units, NegationPromptParams(writer="llm", llm="t"), llms)
