"""One HTTP retry policy with an overall deadline, odd LLM answers, redaction, and
LLM stages that fail loudly when every call failed (items 6, 11, 14, 17)."""

from __future__ import annotations

import base64
import io
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pandas as pd
import pytest
from PIL import Image

from implicit_bench._util.redact import redact
from implicit_bench.runtime import httpretry
from implicit_bench.runtime.httpretry import RetryPolicy, retry_after_s, send
from tests.helpers.chat_server import ChatServer, completion

SECRET = "sk-test-secret-0123456789abcdef"


# ----- a programmable server
# ------------------------------------------------------------------------------
class Server:
    """Answers each request with the next (status, body, headers) of
    ``script`` (the last repeats)."""

    def __init__(self, script):
        self.script = list(script)
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append({"headers": dict(self.headers), "body": body})
                step = outer.script[min(len(outer.requests), len(outer.script)) - 1]
                status, payload, headers = step(self.headers) if callable(step) else step
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def waits(monkeypatch):
    recorded: list[float] = []
    monkeypatch.setattr(httpretry, "_sleep", recorded.append)
    return recorded


def _png_b64() -> str:
    """An answer of the requested size (1024x1024): a wrong size is a failed item."""
    buf = io.BytesIO()
    Image.new("RGB", (1024, 1024), (1, 2, 3)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _echo_auth(headers):
    """An error body that echoes the Authorization header (a careless proxy)."""
    return (
        401,
        {"error": {"message": f"bad credentials: Authorization: {headers.get('Authorization')}"}},
        None,
    )


# ----- item 17 / 11: the policy
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("2", 2.0),
        ("0", 0.0),
        ("1.5", 1.5),
        ("nan", None),
        ("NaN", None),
        ("inf", None),
        ("-3", None),
        ("soon", None),
        ("", None),
        (None, None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
    ],
)
def test_retry_after_values(header, expected):
    assert retry_after_s(header) == expected


@pytest.mark.parametrize("backend", ["llm", "images", "embedder"])
def test_every_backend_retries_only_retryable_statuses_and_honours_retry_after(
    backend, waits, monkeypatch
):
    """The same policy in all three backends: 503 then 429 (Retry-After 7, and nan) retried; 401
    and 404 final at once."""
    monkeypatch.setenv("HB_KEY", SECRET)
    ok = {
        "llm": completion("fine"),
        "images": {"data": [{"b64_json": _png_b64()}]},
        "embedder": {"data": [{"index": 0, "embedding": [0.1, 0.2]}]},
    }[backend]
    script = [
        (503, {"error": "busy"}, None),
        (429, {"error": "slow"}, {"Retry-After": "7"}),
        (429, {"error": "slow"}, {"Retry-After": "nan"}),
        (200, ok, None),
    ]
    with Server(script) as server:
        call = _backend_call(backend, server.url, max_attempts=5)
        ok_result = call()
        assert len(server.requests) == 4
    assert (
        waits[1] == 7.0 and waits[0] == waits[2] / 4 > 0
    )  # Retry-After, else exponential back-off
    assert ok_result is True
    for status in (401, 404):
        with Server([(status, {"error": {"message": "no"}}, None)]) as server:
            assert _backend_call(backend, server.url, max_attempts=5)() is False
            assert len(server.requests) == 1  # never retried


def _backend_call(backend: str, url: str, max_attempts: int):
    if backend == "llm":
        from implicit_bench.backends.llm import build_llm

        client = build_llm(
            {
                "backend": "openai",
                "model": "m",
                "base_url": url,
                "cache": None,
                "api_key_env": "HB_KEY",
                "max_retries": max_attempts - 1,
                "backoff_s": 0.5,
                "timeout_s": 5,
            }
        )
        return lambda: client.chat([{"role": "user", "content": "hi"}]).ok
    if backend == "images":
        from implicit_bench.backends.generators import RenderRequest, create_generator

        gen = create_generator(
            {
                "backend": "openai_images",
                "model": "m",
                "base_url": url,
                "api_key_env": "HB_KEY",
                "max_retries": max_attempts - 1,
                "backoff_s": 0.5,
                "timeout_s": 5,
            }
        )
        return lambda: gen.generate([RenderRequest("x", "a photo", 1)])[0].status == "ok"
    from implicit_bench.backends.embedders import EMBEDDERS, EmbedderParams

    emb = EMBEDDERS.create(
        "openai",
        EmbedderParams(
            backend="openai",
            model="m",
            base_url=url,
            api_key_env="HB_KEY",
            max_retries=max_attempts - 1,
            timeout_s=5,
        ),
    )
    emb.policy = RetryPolicy(
        max_attempts=max_attempts, backoff_s=0.5, backoff_max_s=30, timeout_s=5, deadline_s=60
    )

    def call():
        try:
            emb.embed(["a"])
        except RuntimeError:
            return False
        return True

    return call


def test_a_trickling_server_is_cut_at_the_overall_deadline():
    """Headers at once, then one byte every 0.2 s: each read is quick, the whole is not."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    stop = threading.Event()

    def serve():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n"
        )
        while not stop.is_set():
            try:
                conn.sendall(b" ")
            except OSError:
                break
            time.sleep(0.2)
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1/chat/completions"
    start = time.monotonic()
    with httpx.Client() as client:
        result = send(
            client, "POST", url, RetryPolicy(max_attempts=3, timeout_s=5, deadline_s=1.5), json={}
        )
    elapsed = time.monotonic() - start
    stop.set()
    listener.close()
    assert not result.ok and "deadline" in result.error
    assert elapsed < 4  # deadline + at most one read timeout's worth of slack, not 10000 s


def test_deadline_is_a_param_of_every_http_backend():
    from implicit_bench.backends.embedders import EmbedderParams
    from implicit_bench.backends.generators.openai_images import OpenAIImagesParams
    from implicit_bench.backends.judges.openai_vlm import OpenAIJudgeParams
    from implicit_bench.backends.llm.openai import OpenAIParams

    for model in (
        OpenAIParams(backend="openai", model="m"),
        OpenAIJudgeParams(backend="openai", model="m"),
        OpenAIImagesParams(model="m"),
        EmbedderParams(),
    ):
        assert model.deadline_s > 0


# ----- item 11: odd LLM answers
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("payload", "text", "ok"),
    [
        ({"choices": [{"message": "just a string"}]}, "", False),
        ({"choices": [{"message": None}]}, "", False),
        ({"choices": [{"message": {"content": 42}}]}, "", False),
        ({"choices": [{"message": {"content": None}}]}, "", False),
        (
            {
                "choices": [
                    {
                        "message": {
                            "content": [
                                {"type": "text", "text": "a"},
                                {"type": "text", "text": "b"},
                            ]
                        }
                    }
                ]
            },
            "ab",
            True,
        ),
        ({"choices": [{"message": {"content": [{"type": "image"}]}}]}, "", False),
        ({"choices": []}, "", False),
        ({"choices": [{"message": {"content": "plain"}}]}, "plain", True),
    ],
)
def test_odd_llm_answers_are_handled_and_never_cached(tmp_path, payload, text, ok):
    from implicit_bench.backends.llm import build_llm

    with ChatServer(lambda body, n: (200, payload)) as server:
        config = {
            "backend": "openai",
            "model": "m",
            "base_url": server.base_url,
            "api_key_env": None,
            "cache": str(tmp_path / "c.sqlite"),
            "max_retries": 0,
        }
        answer = build_llm(config).chat([{"role": "user", "content": "q"}])
        assert (answer.text, answer.ok) == (text, ok)
        again = build_llm(config)
        second = again.chat([{"role": "user", "content": "q"}])
        assert second.cached is ok and second.text == text  # only text was cached
        assert again.calls == int(not ok)


def test_retry_after_nan_does_not_crash(waits):
    from implicit_bench.backends.llm import build_llm

    script = [(503, {"error": "x"}, {"Retry-After": "nan"}), (200, completion("ok"), None)]
    with Server(script) as server:
        client = build_llm(
            {
                "backend": "openai",
                "model": "m",
                "base_url": server.url,
                "cache": None,
                "api_key_env": None,
                "max_retries": 2,
                "backoff_s": 0.25,
            }
        )
        assert client.chat([{"role": "user", "content": "q"}]).text == "ok"
    assert waits == [0.25]


def test_a_poisoned_cache_entry_is_asked_again(tmp_path):
    from implicit_bench.backends.llm import build_llm
    from implicit_bench.runtime.cache import DiskCache

    with ChatServer(lambda body, n: (200, completion("fresh"))) as server:
        config = {
            "backend": "openai",
            "model": "m",
            "base_url": server.base_url,
            "api_key_env": None,
            "cache": str(tmp_path / "c.sqlite"),
        }
        client = build_llm(config)
        messages = [{"role": "user", "content": "q"}]
        DiskCache(tmp_path / "c.sqlite").put_many(
            [(client.key(messages), {"text": 42})]
        )  # an old bad entry
        assert build_llm(config).chat(messages).text == "fresh"


# ----- item 14: secrets never stored
# ----------------------------------------------------------------------
def test_redact_patterns(monkeypatch):
    monkeypatch.setenv("SOME_API_KEY", "plainvalue-123456")
    text = (
        f'Authorization: Bearer {SECRET}; {{"api_key": "abc12345xyz"}} x-api-key=k9k9k9k9 '
        "token=tok_live_1 and plainvalue-123456 and Basic dXNlcjpwYXNzd29yZA=="
    )
    out = redact(text)
    for secret in (
        SECRET,
        "abc12345xyz",
        "k9k9k9k9",
        "tok_live_1",
        "plainvalue-123456",
        "dXNlcjpwYXNzd29yZA==",
    ):
        assert secret not in out
    assert redact("HTTP 503: upstream busy") == "HTTP 503: upstream busy"


def test_an_echoed_authorization_header_never_reaches_the_judgements_table(tmp_path, monkeypatch):
    from implicit_bench.backends.judges.params import JudgeStageParams
    from implicit_bench.backends.judges.stage import run_judge_stage
    from tests.helpers.judge_fixtures import make_inputs

    monkeypatch.setenv("HB_JUDGE_KEY", SECRET)
    make_inputs(tmp_path)
    with Server([_echo_auth]) as server:
        params = JudgeStageParams.model_validate(
            {
                "judges": {
                    "api": {
                        "backend": "openai",
                        "model": "m",
                        "base_url": server.url,
                        "api_key_env": "HB_JUDGE_KEY",
                        "max_retries": 0,
                    }
                },
                "tasks": {"rubric": None},
                "progress": False,
                "cache": str(tmp_path / "j.sqlite"),
            }
        )
        # every call fails: the stage raises and writes no table; its error is redacted
        from implicit_bench.runtime.failures import LLMUnavailableError

        with pytest.raises(LLMUnavailableError) as info:
            run_judge_stage(params, tmp_path)
        assert (
            server.requests and server.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
        )
    assert SECRET[8:] not in str(info.value) and "REDACTED" in str(info.value)
    assert not (tmp_path / params.out).exists()


def test_an_echoed_key_never_reaches_an_image_reason_or_embedder_error(monkeypatch):
    monkeypatch.setenv("HB_KEY", SECRET)
    with Server([_echo_auth]) as server:
        from implicit_bench.backends.generators import RenderRequest, create_generator

        gen = create_generator(
            {
                "backend": "openai_images",
                "model": "m",
                "base_url": server.url,
                "api_key_env": "HB_KEY",
            }
        )
        result = gen.generate([RenderRequest("x", "a photo", 1)])[0]
        assert (
            result.status == "failed"
            and SECRET not in result.reason
            and "REDACTED" in result.reason
        )
        from implicit_bench.backends.embedders import EMBEDDERS, EmbedderParams

        emb = EMBEDDERS.create(
            "openai",
            EmbedderParams(backend="openai", model="m", base_url=server.url, api_key_env="HB_KEY"),
        )
        with pytest.raises(RuntimeError) as info:
            emb.embed(["a"])
        assert SECRET not in str(info.value)


# ----- item 6: every LLM call failed -> non-zero exit, full
# reason ---------------------------------------
def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_kg_with_the_endpoint_down_fails_with_the_whole_reason(tmp_path):
    from implicit_bench.backends.llm import LLMUnavailableError
    from implicit_bench.construction.kg.params import KGParams
    from implicit_bench.construction.kg.stage import run_kg
    from tests.helpers.construction_fixtures import crows

    params = KGParams(extractor="llm", llm="t")
    llms = {
        "t": {
            "backend": "openai",
            "model": "m",
            "base_url": _closed_port_url(),
            "api_key_env": None,
            "cache": None,
            "max_retries": 1,
            "backoff_s": 0,
        }
    }
    with pytest.raises(LLMUnavailableError) as info:
        run_kg([crows("cp-1", "A b c.", "A d c.")], params, llms)
    message = str(info.value)
    assert (
        "all 1 LLM calls failed" in message
        and "gave up after 2 attempts; last: transport error: ConnectError" in message
    )


def test_triplets_stage_with_the_endpoint_down_exits_non_zero(tmp_path, monkeypatch, repo_root):
    import runpy

    import yaml
    from click.testing import CliRunner

    from implicit_bench.construction.kg.table import units_frame
    from tests.helpers.construction_fixtures import unit

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    units_frame([unit("ss-a-u0", "nurse", ["caring"], ["rude"])]).to_parquet(
        tmp_path / "kg.parquet"
    )
    pd.DataFrame(
        {"pair_id": ["ss-a"], "stereotype_sentence": ["s"], "anti_stereotype_sentence": ["a"]}
    ).to_parquet(tmp_path / "pairs.parquet")
    (tmp_path / "params.yaml").write_text(
        yaml.safe_dump(
            {
                "triplets": {"writer": "llm", "llm": "t"},
                "llms": {
                    "t": {
                        "backend": "openai",
                        "model": "m",
                        "base_url": _closed_port_url(),
                        "api_key_env": None,
                        "cache": None,
                        "max_retries": 0,
                    }
                },
            }
        )
    )
    stage = runpy.run_path(str(repo_root / "stages" / "triplets.py"))["main"]
    # --no-preflight: the endpoint goes down after the preflight
    # (that case: tests/unit/runtime/preflight/test_stage_preflight.py)
    result = CliRunner().invoke(
        stage, ["--units", "kg.parquet", "--pairs", "pairs.parquet", "--no-preflight"]
    )
    assert (
        result.exit_code == 1
        and "all 1 LLM calls failed" in result.output
        and "ConnectError" in result.output
    )
    assert not (tmp_path / "data" / "interim" / "units.parquet").exists()  # nothing written


def test_invalid_reasons_are_categories_with_full_examples():
    from implicit_bench.backends.llm.structured import InvalidCounter, StructuredAnswer

    counter = InvalidCounter("kg")
    error = "gave up after 2 attempts; last: HTTP 503: upstream: busy"
    counter.add(StructuredAnswer("", None, False, "call_failed", error, False))
    report = counter.as_dict()
    assert report["invalid_by_reason"] == {"HTTP 503": 1} and report["call_failure_examples"] == [
        error
    ]
