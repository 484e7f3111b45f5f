"""Streaming without a batch barrier, rpm quotas,
AIMD on 429 storms, bounded bodies (gzip bombs), bounded answers, NaN embeddings, the
embedder cache key, broken image answers retried. Every test talks to a real server on 127.0.0.1."""

from __future__ import annotations

import base64
import gzip
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from PIL import Image

from implicit_bench._util.streaming import stream_map
from implicit_bench.backends.llm import build_llm
from implicit_bench.runtime.cache import DiskCache
from implicit_bench.runtime.httpretry import RetryPolicy, read_bounded, send
from implicit_bench.runtime.throttle import HEADROOM, Throttle, estimate_tokens
from tests.helpers.chat_server import ChatServer, completion


class Gauge:
    """Counts requests in flight at the server and remembers the peak."""

    def __init__(self):
        self.now = self.peak = 0
        self.lock = threading.Lock()
        self.arrivals: list[float] = []

    def __enter__(self):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.arrivals.append(time.monotonic())
            return self.now

    def __exit__(self, *exc):
        with self.lock:
            self.now -= 1


def _llm(url: str, tmp_path, **kw):
    return build_llm(
        {
            "backend": "openai",
            "model": "m",
            "base_url": url,
            "api_key_env": None,
            "cache": str(tmp_path / "llm.sqlite"),
            "backoff_s": 0.01,
            **kw,
        }
    )


def _ask(n: int) -> list[list[dict]]:
    return [[{"role": "user", "content": f"q{i}"}] for i in range(n)]


# ----- streaming
# -------------------------------------------------------------------------------------------
def test_stream_map_keeps_concurrency_in_flight_and_hands_results_over_in_order_of_arrival():
    started, lock = [], threading.Lock()

    def work(i):
        with lock:
            started.append(i)
        time.sleep(0.5 if i == 0 else 0.02)
        if i == 5:
            raise ValueError("five")
        return i * 10

    seen = []
    stream_map(
        range(12),
        work,
        3,
        lambda item, value, error: seen.append(
            (item, value, type(error).__name__ if error else None)
        ),
    )
    assert sorted(i for i, _, _ in seen) == list(range(12))
    assert (
        seen[-1][0] == 0
    )  # the slow first item held one slot only: the other 11 finished before it
    assert (5, None, "ValueError") in seen and (4, 40, None) in seen


def test_llm_answers_are_cached_while_a_slow_request_is_still_in_flight(tmp_path):
    """No batch barrier: 19 answers are in the cache while request 0 is held by the server."""
    release, early = threading.Event(), {}
    gauge = Gauge()

    def answer(body, n):
        with gauge:
            if body["messages"][0]["content"] == "q0":
                release.wait(20)
            return 200, completion("a " + body["messages"][0]["content"])

    def watch(path):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if path.exists() and len(DiskCache(path)) >= 19:
                early["cached"] = len(DiskCache(path))
                break
            time.sleep(0.05)
        release.set()

    with ChatServer(answer) as server:
        client = _llm(server.base_url, tmp_path, concurrency=4)
        watcher = threading.Thread(target=watch, args=(tmp_path / "llm.sqlite",))
        watcher.start()
        answers = client.chat_many(_ask(20))
        watcher.join()
    assert early.get("cached") == 19  # every other answer was stored before the held one came back
    assert all(a.ok for a in answers) and answers[0].text == "a q0"
    assert gauge.peak <= 4 and client.calls == 20
    again = _llm(server.base_url, tmp_path, concurrency=4).chat_many(_ask(20))
    assert all(a.cached for a in again)


def test_judge_keeps_concurrency_in_flight_across_batches(tmp_path):
    from implicit_bench.backends.judges.params import JudgeStageParams
    from implicit_bench.backends.judges.stage import executor_dispatch, run_judge_stage
    from tests.helpers.judge_fixtures import make_inputs

    make_inputs(tmp_path)
    gauge = Gauge()

    def answer(body, n):
        with gauge:
            time.sleep(0.25)
            return 200, completion('{"choice": "C"}')

    with ChatServer(answer) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "m",
                "base_url": server.base_url,
                "api_key_env": None,
                "batch_size": 2,
                "concurrency": 5,
            }
        }
        params = JudgeStageParams(
            judges=judges, tasks={"blind": None}, configs=["base"], progress=False
        )
        result = run_judge_stage(params, tmp_path, dispatch=executor_dispatch({}, progress=False))
    assert result.model_calls == 11 and result.frame.valid.all()
    assert gauge.peak == 5  # batch_size 2 would cap a batch-then-wait client at 2


# ----- rate limits and 429s
# ---------------------------------------------------------------------------------
def _worst_window(times: list[float], width: float = 1.0) -> int:
    times = sorted(times)
    return max(sum(1 for t in times if s <= t < s + width) for s in times)


def test_rpm_quota_is_never_exceeded(tmp_path, monkeypatch):
    """rpm 20 per 1-s window: the client sends so that no 1-s window holds more than 20 (its
    own send times, exactly), and the server sees at most one more in a window (arrivals jitter
    by the OS's scheduling on a loaded machine: a request sent late lands next to an on-time
    one; the send-time check is the quota's guarantee)."""
    gauge = Gauge()
    sent: list[float] = []
    wait_quota = Throttle._wait_quota

    def recorded(self, *args):
        wait_quota(self, *args)
        sent.append(time.monotonic())

    monkeypatch.setattr(Throttle, "_wait_quota", recorded)

    def answer(body, n):
        with gauge:
            return 200, completion("ok")

    with ChatServer(answer) as server:
        client = _llm(server.base_url, tmp_path, concurrency=8, rpm=20, rate_window_s=1.0)
        start = time.monotonic()
        answers = client.chat_many(_ask(30))
        took = time.monotonic() - start
    assert all(a.ok for a in answers)
    assert len(sent) == 30 and _worst_window(sent) <= 20
    assert _worst_window(gauge.arrivals) <= 21
    assert took >= 29 / 20  # 30 requests at <= 20/s


def test_429_storm_lowers_concurrency_and_fails_nothing(tmp_path):
    """A server that takes 2 at once and answers 429 (Retry-After 0) beyond: every item succeeds,
    the AIMD window came down, and the client's in-flight count recovered towards the ceiling."""
    gauge = Gauge()
    rejected = []

    def answer(body, n):
        with gauge as now:
            if now > 2:
                rejected.append(n)
                return 429, {"error": {"message": "rate limited"}}
            time.sleep(0.02)
            return 200, completion("ok")

    with ChatServer(answer) as server:
        client = _llm(
            server.base_url,
            tmp_path,
            concurrency=8,
            max_retries=30,
            backoff_s=0.005,
            backoff_max_s=0.05,
        )
        answers = client.chat_many(_ask(60))
        throttle = client.throttle
    assert all(a.ok for a in answers) and len(answers) == 60
    assert rejected and throttle.decreases >= 1
    assert len(rejected) < 60  # the window adapts: far fewer 429s than requests


def test_throttle_aimd_arithmetic():
    clock = [0.0]
    t = Throttle(8, clock=lambda: clock[0], sleep=lambda s: clock.__setitem__(0, clock[0] + s))
    with t.slot() as sent:
        pass
    clock[0] = 1.0
    t.on_answer(sent, 429, None)
    assert t.window == 4.0
    t.on_answer(sent, 429, None)  # sent before the decrease: the same congestion, no second cut
    assert t.window == 4.0
    for _ in range(4):
        t.on_answer(2.0, 200, None)
    assert t.window == pytest.approx(4.0 + 1 / 4 + 1 / 4.25 + 1 / (4.25 + 1 / 4.25) + 0.2, abs=0.02)
    t.on_answer(3.0, 503, 2.0)  # Retry-After on an error: decrease and a 2 s pause for new requests
    assert t.pause_until == pytest.approx(3.0) and t.decreases == 2
    with t.slot():
        assert clock[0] == pytest.approx(3.0)
    rpm = Throttle(
        4, rpm=60, clock=lambda: clock[0], sleep=lambda s: clock.__setitem__(0, clock[0] + s)
    )
    start = clock[0]
    for _ in range(5):
        with rpm.slot():
            pass
    assert clock[0] - start == pytest.approx(
        4 / (60 * HEADROOM / 60)
    )  # evenly spaced at 98% of the quota


def test_estimate_tokens_counts_text_and_not_inline_images():
    body = [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 10000}},
                {"type": "text", "text": "x" * 40},
            ],
        }
    ]
    chars = (
        len("user") + len("image_url") + len("text") + 40 + 85 * 4
    )  # the image: 85 tokens, not 10,000 chars
    assert estimate_tokens(body, 100) == -(-chars // 4) + 100


# ----- bounded bodies and answers
# --------------------------------------------------------------------------
class RawServer:
    """Sends one fixed raw answer (status, headers, body) to every request."""

    def __init__(self, body: bytes, headers: dict[str, str]):
        self.hits = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.hits += 1
                self.send_response(200)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

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


def test_gzip_bomb_and_oversized_bodies_fail_bounded_and_are_not_retried():
    import httpx

    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 MiB of zeros in about 64 KiB
    policy = RetryPolicy(
        max_attempts=3, backoff_s=0, timeout_s=5, deadline_s=30, max_response_bytes=1 << 20
    )
    with (
        RawServer(bomb, {"Content-Encoding": "gzip", "Content-Type": "application/json"}) as server,
        httpx.Client() as client,
    ):
        result = send(client, "POST", server.url + "/chat/completions", policy, json={})
        assert not result.ok and "once decompressed" in result.error and server.hits == 1
    with (
        RawServer(b"x" * (2 << 20), {"Content-Type": "application/json"}) as server,
        httpx.Client() as client,
    ):
        result = send(client, "POST", server.url + "/chat/completions", policy, json={})
        assert not result.ok and "max_response_bytes" in result.error and server.hits == 1
    # streamed without Content-Length: counted while it arrives
    with pytest.raises(Exception, match="max_response_bytes"):
        read_bounded(iter([b"y" * 600_000, b"y" * 600_000]), "", 1 << 20)
    # decompressed output is bounded per step, not after the fact
    chunks = [bomb[i : i + 4096] for i in range(0, len(bomb), 4096)]
    with pytest.raises(Exception, match="once decompressed"):
        read_bounded(iter(chunks), "gzip", 1 << 20)
    ok = gzip.compress(json.dumps(completion("small")).encode())
    with (
        RawServer(ok, {"Content-Encoding": "gzip", "Content-Type": "application/json"}) as server,
        httpx.Client() as client,
    ):
        result = send(client, "POST", server.url + "/chat/completions", policy, json={})
        assert result.ok and result.response.json()["choices"][0]["message"]["content"] == "small"


def test_overlong_answer_is_an_error_never_parsed_or_cached(tmp_path):
    with ChatServer(lambda body, n: (200, completion("z" * 5000))) as server:
        client = _llm(server.base_url, tmp_path, max_answer_chars=4000)
        answer = client.chat([{"role": "user", "content": "hi"}])
        assert not answer.ok and "max_answer_chars=4000" in answer.error
        assert len(DiskCache(tmp_path / "llm.sqlite")) == 0


# ----- embedder
# ---------------------------------------------------------------------------------------------
def _embedding_server(vector):
    def answer(body, n):
        return 200, {
            "data": [{"index": i, "embedding": vector} for i, _ in enumerate(body["input"])]
        }

    return ChatServer(answer)


def test_nan_embedding_is_rejected_and_never_cached(tmp_path):
    from implicit_bench.backends.embedders import EmbedderParams, build_embedder

    with _embedding_server([0.1, float("nan")]) as server:
        # json.dumps writes NaN; the server sends it as a bare NaN token, which Python's json reads
        emb = build_embedder(
            EmbedderParams(
                backend="openai",
                model="m",
                base_url=server.base_url,
                cache=str(tmp_path / "e.sqlite"),
                max_retries=0,
            )
        )
        with pytest.raises(RuntimeError, match="NaN"):
            emb.embed(["a", "b"])
        assert len(DiskCache(tmp_path / "e.sqlite")) == 0


def test_embedder_cache_key_includes_base_url_and_streams(tmp_path):
    from implicit_bench.backends.embedders import EmbedderParams, build_embedder

    gauge = Gauge()

    together = threading.Barrier(
        3, timeout=20
    )  # each answer waits until 3 requests are at the server

    def answer(body, n):
        with gauge:
            if (
                len(body["input"]) == 2
            ):  # the first embedder's six requests (the second sends one text)
                together.wait()
            return 200, {
                "data": [
                    {"index": i, "embedding": [1.0, float(len(t))]}
                    for i, t in enumerate(body["input"])
                ]
            }

    with ChatServer(answer) as one, ChatServer(answer) as two:
        config = {
            "backend": "openai",
            "model": "m",
            "cache": str(tmp_path / "e.sqlite"),
            "batch_size": 2,
            "concurrency": 3,
        }
        a = build_embedder(EmbedderParams(base_url=one.base_url, **config))
        b = build_embedder(EmbedderParams(base_url=two.base_url, **config))
        assert a.key("x") != b.key("x")
        vectors = a.embed([f"t{i}" for i in range(12)])
        assert vectors.shape == (12, 2) and np.isfinite(vectors).all()
        assert gauge.peak == 3 and one.hits == 6
        b.embed(["t1"])
        assert two.hits == 1  # another server: not served from the first one's vectors


# ----- image answers
# ----------------------------------------------------------------------------------------
def test_broken_image_answers_are_retried_failures_not_refusals():
    from implicit_bench.backends.generators import RenderRequest, create_generator

    buf = io.BytesIO()
    Image.new("RGB", (1024, 1024), (9, 9, 9)).save(buf, format="PNG")  # the requested size
    good = base64.b64encode(buf.getvalue()).decode()
    broken = [
        "%%% not base64 %%%",
        base64.b64encode(b"plain text, not an image").decode(),
        good[:40],
    ]

    def answer(body, n):
        return 200, {"data": [{"b64_json": broken[n - 1] if n <= 3 else good}]}

    with ChatServer(answer) as server:
        gen = create_generator(
            {
                "backend": "openai_images",
                "model": "m",
                "base_url": server.base_url,
                "api_key_env": None,
                "max_retries": 3,
                "backoff_s": 0,
            }
        )
        result = gen.generate([RenderRequest("x", "a photo", 1)])[0]
        assert result.status == "ok" and result.attempts == 4 and server.hits == 4
    with ChatServer(lambda body, n: (200, {"data": [{"b64_json": broken[0]}]})) as server:
        gen = create_generator(
            {
                "backend": "openai_images",
                "model": "m",
                "base_url": server.base_url,
                "api_key_env": None,
                "max_retries": 1,
                "backoff_s": 0,
            }
        )
        result = gen.generate([RenderRequest("x", "a photo", 1)])[0]
        assert result.status == "failed" and "does not decode" in result.reason and server.hits == 2
