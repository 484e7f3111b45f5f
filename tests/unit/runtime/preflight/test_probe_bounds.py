"""The ``server: auto`` probe and the other model-call checks hold every bound (docs/errors.md,
"Every bound on every path"): ``check --timeout`` is the probe's total deadline, a stage's probe
keeps its entry's ``deadline_s``; an answer is read at most ``max_response_bytes`` (streamed and
cut); JSON nested 200,000 deep is an ignored form, not a ``RecursionError``. Loopback servers
only: one that trickles a byte at a time, one that sends an endless body, one that nests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from implicit_bench.runtime.preflight.backends import load_registries
from implicit_bench.runtime.preflight.checks import ModelUse, check_dialects, check_http

load_registries()


class _Server:
    """POST answers ``body()`` chunk by chunk, ``pause`` seconds apart; GET /v1/models lists
    model ``m``."""

    def __init__(self, body: Callable[[], Iterator[bytes]], pause: float = 0.0):
        outer = self
        self.posts = 0

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                data = json.dumps({"data": [{"id": "m"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.posts += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in body():
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                        time.sleep(pause)
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up: what the test wants

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> _Server:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _trickle() -> Iterator[bytes]:
    while True:
        yield b" "


def _endless() -> Iterator[bytes]:
    yield b'{"choices": [{"message": {"content": "'
    while True:
        yield b"x" * 65536


def _deep() -> Iterator[bytes]:
    yield b"[" * 200_000 + b"]" * 200_000


def _nested_content() -> Iterator[bytes]:
    text = "[" * 200_000 + "]" * 200_000
    yield json.dumps({"choices": [{"message": {"content": text}}]}).encode()


def _use(server: _Server, **extra) -> ModelUse:
    block = {
        "backend": "openai",
        "model": "m",
        "base_url": server.base_url,
        "api_key_env": None,
        "structured_output": True,
        "server": "auto",
    }
    return ModelUse("judges.auto", {**block, **extra})


def test_check_probe_of_a_trickling_server_ends_at_the_timeout():
    """One byte every 0.2 s: each read succeeds, so only a deadline stops it. It ran past
    150 s with ``--timeout 2``."""
    with _Server(_trickle, pause=0.2) as server:
        start = time.monotonic()
        (note,) = check_dialects([_use(server)], timeout=1.5)
        took = time.monotonic() - start
    assert took < 4.0, took
    assert "cannot constrain" in note and "deadline" in note


def test_a_stage_probe_keeps_its_entry_deadline(tmp_path, monkeypatch):
    """The client's own probe (first structured call of a stage): every form together within
    the entry's ``deadline_s``, not ``timeout_s`` per read per form."""
    from implicit_bench.backends.llm.openai import OpenAIClient, OpenAIParams

    monkeypatch.chdir(tmp_path)  # the probe's finding goes to the run log
    with _Server(_trickle, pause=0.2) as server:
        params = OpenAIParams(
            model="m",
            base_url=server.base_url,
            api_key_env=None,
            structured_output=True,
            server="auto",
            timeout_s=1.0,
            deadline_s=2.0,
        )
        llm = OpenAIClient(params)
        start = time.monotonic()
        assert llm.dialect() is None  # nothing honoured in time: unconstrained, said once
        took = time.monotonic() - start
    assert took < 4.0, took


@pytest.mark.parametrize("body", [_endless, _deep, _nested_content])
def test_a_huge_or_deeply_nested_probe_answer_is_an_ignored_form(body):
    """An endless answer is cut at ``max_response_bytes`` (it ended ``check`` in
    ``MemoryError``), and JSON nested 200,000 deep is read as no answer (``RecursionError``)."""
    import tracemalloc

    with _Server(body) as server:
        tracemalloc.start()
        try:
            (note,) = check_dialects([_use(server, max_response_bytes=2 << 20)], timeout=20)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert "cannot constrain" in note
    assert peak < 64 << 20, peak
    if body is _endless:
        assert "max_response_bytes" in note


def test_the_one_token_request_of_check_is_bounded_too():
    """A server without a listing gets one chat request of one token in ``check``: a trickle
    is cut at ``--timeout`` (it used httpx's per-read timeout only)."""

    class _NoListing(_Server):
        pass

    with _NoListing(_trickle, pause=0.2) as server:
        server.httpd.RequestHandlerClass.do_GET = lambda self: (  # type: ignore[method-assign]
            self.send_response(404),
            self.send_header("Content-Length", "0"),
            self.end_headers(),
        )
        start = time.monotonic()
        (problem,) = check_http([_use(server)], timeout=1.5)
        took = time.monotonic() - start
    assert took < 4.0, took
    assert "did not answer a one-token request" in problem


def test_check_command_with_a_trickling_auto_server_ends_within_its_timeout(tmp_path, monkeypatch):
    import yaml

    from implicit_bench.cli.main import main

    monkeypatch.chdir(tmp_path)
    with _Server(_trickle, pause=0.2) as server:
        block = dict(_use(server).block, concurrency=1)
        params = {"judges": {"auto": block}, "render": {"run": []}}
        params["judge"] = {"tasks": {"rubric": {"judges": ["auto"]}}}
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
        start = time.monotonic()
        result = CliRunner().invoke(main, ["check", "--no-disk", "--timeout", "2"])
        took = time.monotonic() - start
    assert took < 8.0, (took, result.output)
    assert "server: auto" in result.output and "cannot constrain" in result.output
