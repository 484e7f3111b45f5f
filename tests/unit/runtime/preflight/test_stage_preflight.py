"""The preflight before each stage that calls models
(src/implicit_bench/runtime/preflight/stage.py),
against a real local OpenAI-compatible server (tests/helpers/chat_server.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest

from implicit_bench.params import load_params
from implicit_bench.runtime.preflight.checks import models_in_use, preflight_stage
from implicit_bench.runtime.preflight.stage import MODEL_STAGES, SKIP_ENV
from tests.helpers.chat_server import ChatServer
from tests.helpers.paths import REPO_ROOT
from tests.helpers.preflight_fixtures import (
    KEY_ENV,
    free_port,
    run_judge_stage,
    write_judge_params,
)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(SKIP_ENV, raising=False)
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    return tmp_path


def test_missing_key_exits_1_with_one_line_and_no_request(workdir, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with ChatServer(models=["judge-model"]) as server:
        write_judge_params(workdir, server.base_url)
        result, took = run_judge_stage()
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, lines
    assert (
        lines[0].startswith("judge: preflight: judges.api:") and f"{KEY_ENV} is not set" in lines[0]
    )
    assert server.hits == 0 and took < 10  # never an unauthenticated request


def test_unknown_model_exits_1_with_one_line_and_no_model_call(workdir, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    with ChatServer(models=["other-model"]) as server:
        write_judge_params(workdir, server.base_url, model="no-such-model")
        result, took = run_judge_stage()
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert (
        len(lines) == 1
        and "does not serve model 'no-such-model'" in lines[0]
        and "other-model" in lines[0]
    ), lines
    assert [r["path"] for r in server.requests] == ["/v1/models"]  # the listing only: 0 model calls
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-test"
    assert took < 10


def test_endpoint_down_exits_1_with_one_line_within_ten_seconds(workdir):
    write_judge_params(workdir, f"http://127.0.0.1:{free_port()}/v1", key_env=None)
    result, took = run_judge_stage()
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "cannot be reached" in lines[0], lines
    assert took < 10


def test_a_slow_endpoint_costs_the_timeout_once(workdir, monkeypatch):
    monkeypatch.setenv("IMPLICIT_BENCH_PREFLIGHT_TIMEOUT", "1")
    with ChatServer(models=["judge-model"], delay_s=4) as server:
        write_judge_params(workdir, server.base_url, key_env=None)
        result, took = run_judge_stage()
    assert result.exit_code == 1 and "did not answer within 1 s" in result.output
    assert [r["body"] for r in server.requests] == [None]  # GET /models, no model call
    assert took < 4


def test_without_a_listing_the_stage_makes_no_one_token_request(workdir, monkeypatch):
    """A server with no GET /models (404) answered: the stage goes on, the
    preflight called no model."""
    from implicit_bench.runtime.preflight.checks import models_in_use as uses

    with ChatServer(models=None) as server:
        write_judge_params(workdir, server.base_url, key_env=None)
        params = load_params("params.yaml")
        assert preflight_stage("judge", params) == []
    assert [r["path"] for r in server.requests] == ["/v1/models"]
    assert [u.where for u in uses(params, "judge")] == ["judges.api"]


@pytest.mark.parametrize("how", ["flag", "env", "params"])
def test_the_three_switches_skip_it(workdir, monkeypatch, how):
    down = f"http://127.0.0.1:{free_port()}/v1"
    args: list[str] = []
    if how == "flag":
        args = ["--no-preflight"]
    elif how == "env":
        monkeypatch.setenv(SKIP_ENV, "1")
    write_judge_params(
        workdir, down, key_env=None, **({"base": {"preflight": False}} if how == "params" else {})
    )
    result, _ = run_judge_stage(args)
    assert (
        "preflight" not in result.output
    )  # the stage itself ran (and fails on its missing inputs)
    assert result.exit_code != 0


def test_each_stage_checks_only_its_own_models():
    params = {
        "llms": {
            "kg_llm": {"backend": "openai", "model": "a"},
            "rw": {"backend": "openai", "model": "b"},
        },
        "generators": {"g": {"backend": "sim", "model": "sim:g"}},
        "judges": {"j": {"backend": "sim", "model": "sim:j"}},
        "kg": {"extractor": "llm", "llm": "kg_llm"},
        "render": {"run": ["g"]},
        "judge": {"tasks": {"blind": {"judges": ["j"]}}},
        "debias": {
            "configs": {"rw": {"method": "rewrite"}},
            "rewriter": "rw",
            "generator": "g",
            "embedder": {"backend": "sim", "model": "sim:e"},
        },
    }
    assert [u.where for u in models_in_use(params, "kg")] == ["llms.kg_llm"]
    assert [u.where for u in models_in_use(params, "rewrite")] == ["llms.rw"]
    assert [u.where for u in models_in_use(params, "retrieve")] == ["debias.embedder"]
    assert [u.where for u in models_in_use(params, "debias_render")] == ["generators.g"]
    assert [u.where for u in models_in_use(params, "triplets")] == []
    assert len(models_in_use(params)) == 5  # `implicit-bench check`: all of them, each once


def test_every_stage_with_models_is_a_model_stage_with_a_script():
    """MODEL_STAGES (the stages that get the hook) covers every stage _stage_models names."""
    from implicit_bench.runtime.preflight.checks import _stage_models

    params = load_params(REPO_ROOT / "profiles" / "paper.yaml")
    params["diversity_study"] = {**(params.get("diversity_study") or {}), "enabled": True}
    assert set(_stage_models(params)) <= set(MODEL_STAGES)
    assert all((REPO_ROOT / "stages" / f"{name}.py").is_file() for name in MODEL_STAGES)


def test_the_default_simulated_profile_is_unaffected(monkeypatch):
    """The default params: every model stage passes its preflight, with no
    network, in negligible time."""

    def no_network(*args, **kwargs):
        raise AssertionError("the default profile's preflight made a request")

    monkeypatch.setattr(httpx, "get", no_network)
    monkeypatch.setattr(httpx, "post", no_network)
    params = load_params(REPO_ROOT / "params.yaml")
    start = time.monotonic()
    for stage in MODEL_STAGES:
        assert preflight_stage(stage, params) == [], stage
    assert time.monotonic() - start < 1.0


def test_python_stages_script_runs_it_as_dvc_does(tmp_path):
    """`python stages/judge.py` (DVC's command line) in a fresh process: one
    line, exit 1, no request."""
    with ChatServer(models=["judge-model"]) as server:
        write_judge_params(tmp_path, server.base_url)
        env = {k: v for k, v in os.environ.items() if k not in (KEY_ENV, SKIP_ENV)}
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT / "src"), str(REPO_ROOT)])
        done = subprocess.run(
            [sys.executable, str(REPO_ROOT / "stages" / "judge.py")],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert (
        done.stderr.strip().splitlines() == [done.stderr.strip()]
        and f"{KEY_ENV} is not set" in done.stderr
    )
    assert server.hits == 0


def test_model_stages_and_only_they_carry_the_preflight():
    """The model stages' scripts use ModelStageCommand; the others stay plain FriendlyCommands,
    so the preflight modules are not in their import closure (their DVC deps)."""
    for script in sorted((REPO_ROOT / "stages").glob("*.py")):
        text = script.read_text(encoding="utf-8")
        if "@click.command" not in text:
            continue
        is_model = "cls=ModelStageCommand" in text
        assert is_model == (script.stem in MODEL_STAGES), script.name
