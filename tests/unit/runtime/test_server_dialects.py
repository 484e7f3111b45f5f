"""Structured output per server dialect (``server:``), the ``auto`` probe, and errors classified
by what they say: a server's rejection of the request itself is never retried, a transient
failure is. Against local HTTP servers answering as each real server does."""

from __future__ import annotations

import json

import pytest
from PIL import Image
from pydantic import BaseModel

from implicit_bench.backends.generators import png_bytes
from implicit_bench.backends.judges.base import JudgeRequest
from implicit_bench.backends.judges.stage import judge_backends
from implicit_bench.backends.llm import build_llm, chat_json_many
from tests.helpers.chat_server import ChatServer, completion, llama_cpp_like


class Answer(BaseModel):
    word: str


SCHEMA = Answer.model_json_schema()


def _client(chat: ChatServer, **extra):
    return build_llm(
        {
            "backend": "openai",
            "model": "m",
            "base_url": chat.base_url,
            "api_key_env": None,
            "cache": None,
            "backoff_s": 0.0,
            "max_retries": 3,
            "structured_output": True,
            **extra,
        }
    )


def _ask(client, n: int = 1):
    msgs = [[{"role": "user", "content": f"q{i}"}] for i in range(n)]
    return chat_json_many(client, msgs, Answer)


def _json_answer(body, n):
    return 200, completion('{"word": "yes"}')


EXPECTED = {
    "openai": (
        "response_format",
        {
            "type": "json_schema",
            "json_schema": {"name": "Answer", "schema": SCHEMA, "strict": False},
        },
    ),
    "sglang": (
        "response_format",
        {
            "type": "json_schema",
            "json_schema": {"name": "Answer", "schema": SCHEMA, "strict": False},
        },
    ),
    "vllm": ("structured_outputs", {"json": SCHEMA}),
    "llama_cpp": ("response_format", {"type": "json_object", "schema": SCHEMA}),
    "tgi": ("response_format", {"type": "json_object", "value": SCHEMA}),
}


@pytest.mark.parametrize("server_kind", sorted(EXPECTED))
def test_the_stage_schema_goes_where_each_server_reads_it(server_kind, tmp_path, monkeypatch):
    monkeypatch.setenv("IMPLICIT_BENCH_RUN_LOG", str(tmp_path / "runs.jsonl"))
    with ChatServer(_json_answer) as server:
        answers = _ask(_client(server, server=server_kind), 2)
    assert all(a.valid for a in answers)
    field, value = EXPECTED[server_kind]
    for request in server.requests:
        body = request["body"]
        assert body[field] == value
        other = {"response_format", "structured_outputs"} - {field}
        assert not other & set(body)
    assert not (tmp_path / "runs.jsonl").exists()  # a known dialect is nothing to report


def test_a_server_that_cannot_constrain_gets_no_schema_and_is_said_once(
    tmp_path, monkeypatch, capfd
):
    monkeypatch.setenv("IMPLICIT_BENCH_RUN_LOG", str(tmp_path / "runs.jsonl"))
    with ChatServer(lambda b, n: (200, completion("Sure! yes"))) as server:
        answers = _ask(_client(server, server="transformers"), 3)
    assert [a.mode for a in answers] == ["invalid"] * 3  # counted, raw text kept
    assert all(
        "response_format" not in r["body"] and "structured_outputs" not in r["body"]
        for r in server.requests
    )
    err = capfd.readouterr().err
    assert err.count("cannot constrain answers to the schema") == 1
    (line,) = (tmp_path / "runs.jsonl").read_text().splitlines()
    logged = json.loads(line)
    assert logged["stage"] == "structured_output" and logged["constrained"] is False
    assert logged["server"] == "transformers"


def test_auto_probes_once_and_records_what_the_server_honoured(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("IMPLICIT_BENCH_RUN_LOG", str(tmp_path / "runs.jsonl"))
    with ChatServer(llama_cpp_like) as server:
        client = _client(server, server="auto")
        answers = _ask(client, 3)
    assert all(a.valid for a in answers)
    probes = server.requests[:2]
    assert probes[0]["body"]["response_format"]["type"] == "json_schema"  # rejected, not retried
    assert probes[1]["body"]["response_format"]["type"] == "json_object"  # honoured
    assert len(server.requests) == 2 + 3  # one probe per form tried, then the requests
    assert all(
        r["body"]["response_format"] == {"type": "json_object", "schema": SCHEMA}
        for r in server.requests[2:]
    )
    assert client.dialect() == "llama_cpp"
    logged = json.loads((tmp_path / "runs.jsonl").read_text().splitlines()[0])
    assert logged["dialect"] == "llama_cpp" and logged["constrained"] is True
    assert logged["probe"] == ["openai: HTTP 500", "llama_cpp: honoured"]
    assert capfd.readouterr().err.count("honours the llama_cpp form") == 1


def test_auto_on_a_server_that_ignores_every_form_sends_no_schema(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("IMPLICIT_BENCH_RUN_LOG", str(tmp_path / "runs.jsonl"))
    with ChatServer(lambda b, n: (200, completion("Hello"))) as server:
        client = _client(server, server="auto")
        _ask(client, 2)
    assert len(server.requests) == 4 + 2  # openai, llama_cpp, vllm, tgi forms ignored
    assert all("response_format" not in r["body"] for r in server.requests[4:])
    assert "cannot constrain" in capfd.readouterr().err


# what each server answers when it rejects the request itself (measured against
# transformers serve 5.24 and llama-cpp-python 0.3.36; vLLM, SGLang, TGI and OpenAI from their
# validation errors)
REJECTIONS = {
    "openai": (
        400,
        {
            "error": {
                "message": "Invalid type for 'response_format'",
                "type": "invalid_request_error",
            }
        },
    ),
    "vllm": (
        400,
        {"object": "error", "message": "1 validation error: extra_forbidden", "code": 400},
    ),
    "sglang": (500, {"object": "error", "message": "json_schema is not supported by this backend"}),
    "llama_cpp": llama_cpp_like({"response_format": {"type": "json_schema"}}, 1),
    "transformers": (422, {"detail": "Unexpected fields: {'guided_json', 'top_k'}"}),
    "tgi": (422, {"error": "Input validation error: `value` must be a valid JSON schema"}),
}


@pytest.mark.parametrize("server_kind", sorted(REJECTIONS))
def test_a_rejected_request_is_sent_once(server_kind, tmp_path):
    status, payload = REJECTIONS[server_kind]
    with ChatServer(lambda b, n: (status, payload)) as server:
        (answer,) = _ask(_client(server, server=server_kind))
    assert answer.mode == "call_failed" and f"HTTP {status}" in answer.error
    assert server.hits == 1  # max_retries: 3, none spent


@pytest.mark.parametrize(
    "status, payload",
    [
        (503, {"error": "Service Unavailable"}),
        (500, {"error": "Internal Server Error"}),
        (502, "<html>Bad Gateway</html>"),
    ],
)
def test_a_transient_failure_spends_the_retry_budget(status, payload, tmp_path):
    with ChatServer(lambda b, n: (status, payload)) as server:
        (answer,) = _ask(_client(server))
    assert answer.mode == "call_failed" and "gave up after 4 attempts" in answer.error
    assert server.hits == 4


def test_image_parts_to_a_text_only_server_are_one_line_naming_the_entry(tmp_path):
    """llama-cpp-python's server fed a judge request: HTTP 500 ``can only concatenate str (not
    "list") to str``; sent once, then no image request goes to it again."""

    def text_only(body, n):
        if any(isinstance(m["content"], list) for m in body["messages"]):
            return 500, {"error": {"message": 'can only concatenate str (not "list") to str'}}
        return 200, completion("ok")

    image = png_bytes(Image.new("RGB", (8, 8)))
    with ChatServer(text_only) as server:
        backends, _ = judge_backends(
            {
                "textonly": {
                    "backend": "openai",
                    "model": "smol",
                    "base_url": server.base_url,
                    "api_key_env": None,
                    "backoff_s": 0.0,
                    "max_retries": 5,
                    "concurrency": 1,
                }
            }
        )
        judge = backends["textonly"]
        judge.load()
        answers = judge.answer([JudgeRequest("which?", image), JudgeRequest("which?", image)])
    assert server.hits == 1
    errors = [e for _, e in answers]
    assert errors[0] == errors[1] and "\n" not in errors[0]
    assert errors[0].startswith("judges.textonly: ")
    assert "does not take image parts" in errors[0] and "can only concatenate" in errors[0]


def test_bounds_are_added_to_the_schema_sent_and_to_the_cache_key(tmp_path):
    bounds = {"constraint_max_chars": 60, "constraint_min_chars": 1, "constraint_max_items": 1}
    with ChatServer(_json_answer) as server:
        bounded = _client(server, server="llama_cpp", **bounds)
        _ask(bounded)
        _ask(_client(server, server="llama_cpp"))
    sent = server.requests[0]["body"]["response_format"]["schema"]
    assert sent["properties"]["word"] == {
        "title": "Word",
        "type": "string",
        "maxLength": 60,
        "minLength": 1,
    }
    assert server.requests[1]["body"]["response_format"]["schema"] == SCHEMA  # unbounded
    assert bounded.decoding(8)["constraint_max_chars"] == 60
    plain = _client(server, server="llama_cpp")
    msgs = [{"role": "user", "content": "q"}]
    assert bounded.key(msgs, 8, SCHEMA) != plain.key(msgs, 8, SCHEMA)
