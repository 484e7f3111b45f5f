"""``implicit-bench check`` against a real local OpenAI-compatible server
(tests/helpers/chat_server.py)."""

from __future__ import annotations

import socket
import time

from implicit_bench.runtime.preflight.backends import load_registries
from implicit_bench.runtime.preflight.checks import models_in_use, preflight
from tests.helpers.chat_server import ChatServer

load_registries()  # preflight() and the checks read every model registry (the CLI loads them)


def _params(
    base_url: str, model: str = "judge-model", key_env: str | None = "PREFLIGHT_TEST_KEY"
) -> dict:
    return {
        "generators": {"sim_local": {"backend": "sim", "model": "sim:sim_local"}},
        "judges": {
            "j": {"backend": "openai", "model": model, "base_url": base_url, "api_key_env": key_env}
        },
        "render": {"run": ["sim_local"]},
        "judge": {"tasks": {"blind": {"judges": ["j"]}}},
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_models_in_use_follow_the_stages():
    params = _params("http://x/v1")
    params["judges"]["unused"] = {"backend": "sim", "model": "sim:judge_a"}
    assert [u.where for u in models_in_use(params)] == ["generators.sim_local", "judges.j"]


def test_a_served_model_with_its_key_passes_and_the_key_is_sent(monkeypatch):
    monkeypatch.setenv("PREFLIGHT_TEST_KEY", "sk-test")
    with ChatServer(models=["judge-model", "other"]) as server:
        assert preflight(_params(server.base_url)) == []
    assert server.requests[0]["path"] == "/v1/models"
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-test"


def test_missing_key_is_one_line_and_no_request(monkeypatch):
    monkeypatch.delenv("PREFLIGHT_TEST_KEY", raising=False)
    with ChatServer(models=["judge-model"]) as server:
        problems = preflight(_params(server.base_url))
    assert (
        len(problems) == 1
        and "PREFLIGHT_TEST_KEY is not set" in problems[0]
        and problems[0].startswith("judges.j:")
    )
    assert server.hits == 0  # never an unauthenticated request


def test_unknown_model_is_one_line(monkeypatch):
    monkeypatch.setenv("PREFLIGHT_TEST_KEY", "sk-test")
    with ChatServer(models=["Qwen/Qwen3-VL-8B-Instruct"]) as server:
        problems = preflight(_params(server.base_url, model="no-such-model"))
    assert len(problems) == 1 and "does not serve model 'no-such-model'" in problems[0]
    assert "Qwen/Qwen3-VL-8B-Instruct" in problems[0]


def test_endpoint_down_is_one_line_and_quick():
    start = time.monotonic()
    problems = preflight(_params(f"http://127.0.0.1:{_free_port()}/v1", key_env=None), timeout=2)
    assert len(problems) == 1 and "cannot be reached" in problems[0]
    assert time.monotonic() - start < 10


def test_slow_endpoint_is_one_line_within_ten_seconds():
    with ChatServer(models=["judge-model"], delay_s=8) as server:
        start = time.monotonic()
        problems = preflight(_params(server.base_url, key_env=None))  # the default timeout: 5 s
        elapsed = time.monotonic() - start
    assert len(problems) == 1 and "did not answer within 5 s" in problems[0]
    assert elapsed < 10


def test_no_listing_falls_back_to_one_minimal_request():
    with ChatServer(models=None) as server:
        assert preflight(_params(server.base_url, key_env=None)) == []
    assert [r["path"] for r in server.requests] == ["/v1/models", "/v1/chat/completions"]
    assert server.requests[1]["body"]["max_tokens"] == 1


def test_local_models_devices_and_the_command(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from implicit_bench.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    (tmp_path / "params.yaml").write_text(
        "generators:\n"
        "  mine: {backend: diffusers, model: someone/not-downloaded-model}\n"
        "  tiny: {backend: diffusers, model: models/tiny/generator}\n"
        "render: {run: [mine, tiny]}\n"
        "judge: {tasks: {}}\n"
        "clip: {model: {backend: sim, model: 'sim:clip'}}\n"
    )
    result = CliRunner().invoke(main, ["check", "--no-disk"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 2, lines
    assert "someone/not-downloaded-model is not in the local Hugging Face cache" in lines[0]
    assert "huggingface-cli download someone/not-downloaded-model" in lines[0]
    assert "models/tiny/generator does not exist" in lines[1] and "dvc repro models" in lines[1]
