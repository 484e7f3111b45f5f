"""A real OpenAI-compatible chat-completions HTTP server on 127.0.0.1, for backend tests.

``answer(body) -> (status, payload)`` decides each response; every request (path, headers,
body) is recorded. Start it as a context manager: ``with ChatServer(answer) as server:``.

``ChatServer(answer, batches=BatchEmulator())`` also speaks the vendor batch endpoints
(tests/helpers/batch_emulator.py): OpenAI's Files and Batches API and Gemini's batchGenerateContent,
each request line answered by the same ``answer``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[dict[str, Any], int], tuple[int, Any]]


def completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }


def echo(body: dict[str, Any], n: int) -> tuple[int, Any]:
    """Default behaviour: answer with the last message's content, prefixed."""
    return 200, completion("echo: " + body["messages"][-1]["content"])


class ChatServer:
    def __init__(
        self,
        answer: Answer = echo,
        models: list[str] | None = None,
        delay_s: float = 0.0,
        port: int = 0,
        serial: bool = False,
        batches: Any = None,
    ):
        self.answer = answer
        self.batches = batches  # a tests.batch_emulator.BatchEmulator, or None
        self.models = models  # GET /v1/models lists these (None: no listing, 404), as vLLM does
        self.delay_s = delay_s  # a slow endpoint: every response waits this long
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        # serial: one POST answered at a time, the others queued (transformers serve without
        # --continuous-batching, llama-cpp-python's server)
        self._serial = threading.Lock() if serial else None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _batch(self, method: str, raw: bytes) -> bool:
                """Answer a batch endpoint request (True), or leave it to the chat handler."""
                if server.batches is None:
                    return False
                handled = server.batches.handle(method, self.path, dict(self.headers), raw, server)
                if handled is None:
                    return False
                status, payload = handled
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a slow create, a too-large file)
                return True

            def do_GET(self) -> None:  # noqa: N802
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": None}
                    )
                if self._batch("GET", b""):
                    return
                if server.delay_s:
                    time.sleep(server.delay_s)
                if server.models is None or self.path.rstrip("/") != "/v1/models":
                    status, data = 404, b'{"error": "not found"}'
                else:
                    status = 200
                    data = json.dumps(
                        {
                            "object": "list",
                            "data": [{"id": m, "object": "model"} for m in server.models],
                        }
                    ).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a slow-endpoint test)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if server.batches is not None and server.batches.owns(self.path):
                    with server._lock:
                        server.requests.append(
                            {"path": self.path, "headers": dict(self.headers), "body": None}
                        )
                    self._batch("POST", raw)
                    return
                body = json.loads(raw or b"{}")
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                    n = len(server.requests)
                if server._serial is not None:
                    with server._serial:
                        if server.delay_s:
                            time.sleep(server.delay_s)
                        status, payload = server.answer(body, n)
                else:
                    if server.delay_s:
                        time.sleep(server.delay_s)
                    status, payload = server.answer(body, n)
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def hits(self) -> int:
        return len(self.requests)


def llama_cpp_like(body, n):
    """llama-cpp-python 0.3.36: json_schema is a 500 naming the literal it wants; json_object with
    a schema is honoured; anything else is free text."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return 500, {
            "error": {
                "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                "'msg': \"Input should be 'text' or 'json_object'\"}]",
                "type": "internal_server_error",
            }
        }
    if fmt.get("type") == "json_object" and "schema" in fmt:
        props = fmt["schema"]["properties"]
        return 200, completion(json.dumps({k: True if k == "probe_ok" else "yes" for k in props}))
    return 200, completion("Hello there!")
