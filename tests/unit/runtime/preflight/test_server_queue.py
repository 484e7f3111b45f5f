"""Servers that answer one request at a time: the preflight measures it and warns, time
queued client-side is not charged to a request's deadline, and an abandoned attempt's connection
is closed before the request is sent again."""

from __future__ import annotations

import json
import socket
import threading
import time

import httpx

from implicit_bench.runtime.httpretry import RetryPolicy, send
from implicit_bench.runtime.preflight.backends import load_registries
from implicit_bench.runtime.preflight.checks import PARALLELISM_TRIES, ModelUse, check_parallelism
from implicit_bench.runtime.throttle import Throttle
from tests.helpers.chat_server import ChatServer, completion

load_registries()  # preflight() and the checks read every model registry (the CLI loads them)


def _use(chat: ChatServer, **extra) -> ModelUse:
    block = {"backend": "openai", "model": "m", "base_url": chat.base_url, "api_key_env": None}
    return ModelUse("judges.served", {**block, **extra})


def test_the_preflight_warns_when_the_server_answers_one_at_a_time():
    with ChatServer(delay_s=0.4, serial=True) as server:
        (warning,) = check_parallelism([_use(server)], timeout=10)
    assert warning.startswith("judges.served: ") and "answers one request at a time" in warning
    assert "concurrency is 4" in warning
    assert server.hits == 1 + 3 * PARALLELISM_TRIES  # warm-up; per try: one alone, two at once


def test_no_warning_for_a_parallel_server_or_concurrency_one():
    with ChatServer(delay_s=0.4) as server:
        assert check_parallelism([_use(server)], timeout=10) == []
    with ChatServer(delay_s=0.4, serial=True) as server:
        assert check_parallelism([_use(server, concurrency=1)], timeout=10) == []
        assert server.hits == 0


def test_time_queued_client_side_is_not_charged_to_the_deadline():
    """Two requests through one in-flight slot, 0.6 s each at the server, deadline 1 s: the
    second waits 0.6 s for the slot and still has its whole second once sent."""
    policy = RetryPolicy(max_attempts=1, timeout_s=5.0, deadline_s=1.0)
    throttle = Throttle(1)
    with ChatServer(delay_s=0.6) as server, httpx.Client() as client:
        url = server.base_url + "/chat/completions"
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        results: list = [None, None]

        def one(i: int) -> None:
            results[i] = send(client, "POST", url, policy, json=body, throttle=throttle)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
        start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.monotonic() - start
    assert took >= 1.1  # the second request really waited for the slot
    assert all(r.ok for r in results), [r.error for r in results]
    assert server.hits == 2


def test_an_abandoned_attempt_is_closed_before_it_is_sent_again():
    """A server that never answers the first attempt: the client's read timeout gives it up and
    closes its connection (the server sees EOF) before the second attempt connects."""
    events: list[tuple[str, float]] = []
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        first, _ = listener.accept()
        first.settimeout(10)
        try:  # read the request, answer nothing, until the client closes the connection
            while first.recv(65536):
                pass
            events.append(("first closed", time.monotonic()))
        except ConnectionResetError:
            events.append(("first closed", time.monotonic()))
        first.close()
        second, _ = listener.accept()
        events.append(("second connected", time.monotonic()))
        second.recv(65536)
        data = json.dumps(completion("ok")).encode()
        second.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(data)).encode()
            + b"\r\nConnection: close\r\n\r\n"
            + data
        )
        second.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    policy = RetryPolicy(max_attempts=2, backoff_s=0.0, timeout_s=0.5, deadline_s=20.0)
    with httpx.Client() as client:
        result = send(
            client,
            "POST",
            f"http://127.0.0.1:{port}/v1/chat/completions",
            policy,
            json={"model": "m", "messages": []},
        )
    thread.join(timeout=10)
    listener.close()
    assert result.ok and result.attempts == 2
    assert [name for name, _ in events] == ["first closed", "second connected"]


def test_an_unpinned_server_listing_nothing_passes_the_preflight():
    """``transformers serve`` without a pinned model lists none until one was asked for: the
    stage preflight passes without a model call, ``check`` asks for one token."""
    from implicit_bench.runtime.preflight.checks import check_http

    with ChatServer(models=[]) as server:
        assert check_http([_use(server)], timeout=5, probe=False) == []
        assert server.hits == 1  # the listing only
        assert check_http([_use(server)], timeout=5) == []
        assert [r["path"] for r in server.requests][-1] == "/v1/chat/completions"
    with ChatServer(lambda b, n: (404, {"detail": "model not found"}), models=[]) as server:
        (problem,) = check_http([_use(server)], timeout=5)
    assert "lists no model and answered HTTP 404" in problem


def test_check_says_what_an_auto_server_honours_and_that_transformers_cannot_constrain():
    from implicit_bench.runtime.preflight.checks import check_dialects
    from tests.helpers.chat_server import llama_cpp_like

    with ChatServer(llama_cpp_like) as server:
        auto = _use(server, structured_output=True, server="auto")
        plain = _use(server, structured_output=True, server="transformers")
        unconstrained = _use(server, server="auto")  # structured_output off: nothing to probe
        notes = check_dialects([auto, plain, unconstrained], timeout=10)
    assert notes == [
        f"judges.served: server: auto: {server.base_url} honours the llama_cpp form "
        "(openai: HTTP 500; llama_cpp: honoured)",
        "judges.served: server: transformers cannot constrain answers to the schema",
    ]
    assert server.hits == 2
