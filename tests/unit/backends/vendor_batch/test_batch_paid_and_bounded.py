"""Vendor batches: a create that may have been paid for is looked up, never re-sent blind; an
output file is read line by line in bounded memory; an output over ``batch_max_file_bytes`` is
downloaded once per run, not at every poll (docs/errors.md, "A request that may have been paid
for" and "Every bound on every path"). Local servers only (tests/helpers/batch_emulator.py)."""

from __future__ import annotations

import io
import json
import tracemalloc

from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.backends.judges.stage import executor_dispatch, run_judge_stage
from implicit_bench.backends.vendor_batch.base import (
    BatchAnswer,
    BatchParams,
    BatchPoll,
    Ledger,
    VendorError,
    run_batches,
)
from implicit_bench.runtime.cache import DiskCache
from tests.helpers.batch_emulator import BatchEmulator
from tests.helpers.chat_server import ChatServer, completion
from tests.helpers.judge_fixtures import make_inputs

DISPATCH = executor_dispatch({}, progress=False)
CHAT = "/v1/chat/completions"


def _params(server: ChatServer, **extra) -> JudgeStageParams:
    judge = {
        "backend": "openai",
        "model": "gpt-test",
        "base_url": server.base_url,
        "api_key_env": None,
        "backoff_s": 0.0,
        "max_retries": 2,
        "batch": True,
        "batch_poll_s": 0.02,
        **extra,
    }
    return JudgeStageParams(
        judges={"gpt": judge},
        tasks={"rubric": None},
        configs=["base"],
        progress=False,
        max_failure_rate=0.5,
    )


def _sync_calls(server: ChatServer) -> int:
    return sum(1 for r in server.requests if r["path"] == CHAT)


def test_a_create_answered_after_the_timeout_is_looked_up_not_sent_again(tmp_path):
    """``POST /batches`` answered after ``timeout_s`` (the vendor created the batch): the run
    finds it by its tag and polls it; one batch billed, every request answered."""
    make_inputs(tmp_path)  # 11 rubric requests
    emulator = BatchEmulator(create_delay_s=1.5)
    answer = lambda body, n: (200, completion('{"score": 3}'))  # noqa: E731
    with ChatServer(answer, batches=emulator) as server:
        result = run_judge_stage(_params(server, timeout_s=0.4), tmp_path, dispatch=DISPATCH)
        assert emulator.calls["POST /v1/batches"] == 1  # was 3: 33 requests billed for 11
        assert len(emulator.batches) == 1 and _sync_calls(server) == 0
        assert result.frame.valid.all() and result.model_calls == 11
        assert result.metrics["vendor_batches"]["gpt"]["submitted"] == ["batch_1"]


class _Vendor:
    """A vendor whose create times out; ``lists_after``: the create call after which its
    listing shows the batches created so far (None: it never created them)."""

    name = "slow"
    max_bytes = 1 << 20

    def __init__(self, creates: bool, listed_from_call: int):
        self.creates = creates
        self.listed_from_call = listed_from_call
        self.sent: list[str] = []  # tags of the create calls
        self.finds = 0
        self.made: dict[str, str] = {}

    def line(self, custom_id, body):
        return {"custom_id": custom_id, "body": body}

    def submit(self, lines, tag):
        self.sent.append(tag)
        if self.creates:
            self.made[tag] = f"b{len(self.sent)}"
            raise VendorError("POST /batches: transport error: ReadTimeout", uncertain=True)
        return self._ok(tag)

    def _ok(self, tag):
        self.made[tag] = f"b{len(self.sent)}"
        return self.made[tag]

    def find(self, tag):
        self.finds += 1
        return self.made.get(tag) if self.finds >= self.listed_from_call else None

    def poll(self, batch_id):
        return BatchPoll("completed", True)

    def results(self, batch_id, poll):
        return iter([BatchAnswer("r1", 200, {"ok": 1}), BatchAnswer("r2", 200, {"ok": 1})])

    def cancel(self, batch_id):
        pass


def _run(vendor, ledger):
    got: list[str] = []
    outcome = run_batches(
        vendor,
        ["r1", "r2"],
        lambda c: {"q": c},
        ledger,
        BatchParams(batch=True, batch_poll_s=0.01),
        lambda answers: got.extend(a.custom_id for a in answers),
        sleep=lambda s: None,
    )
    return outcome, got


def test_a_create_not_listed_yet_is_left_pending_and_the_next_run_finds_it(tmp_path):
    """The vendor made the batch but lists it only later: this run sends nothing more (its ids
    pending, saying why), the next run looks the tag up first and polls what it finds."""
    vendor = _Vendor(creates=True, listed_from_call=2)
    cache = DiskCache(tmp_path / "l.sqlite")
    ledger = Ledger(cache, {"vendor": "slow"})
    outcome, got = _run(vendor, ledger)
    assert len(vendor.sent) == 1 and got == [] and not outcome.failed
    assert set(outcome.pending) == {"r1", "r2"}
    assert "not sent again" in outcome.pending["r1"] and "ReadTimeout" in outcome.pending["r1"]
    outcome, got = _run(vendor, ledger)
    assert len(vendor.sent) == 1  # found by its tag: one batch billed
    assert got == ["r1", "r2"] and outcome.resumed == ["b1"] and not outcome.pending
    cache.close()


def test_a_create_that_made_nothing_is_sent_after_the_lookup_of_the_next_run(tmp_path):
    """The create timed out and the vendor made nothing: the next run looks the tag up, finds
    none, and only then sends the batch (once)."""
    vendor = _Vendor(creates=False, listed_from_call=1)
    vendor.submit = _first_times_out(vendor.submit)
    cache = DiskCache(tmp_path / "l.sqlite")
    ledger = Ledger(cache, {"vendor": "slow"})
    outcome, _ = _run(vendor, ledger)
    assert len(vendor.sent) == 0 and set(outcome.pending) == {"r1", "r2"}
    finds = vendor.finds
    outcome, got = _run(vendor, ledger)
    assert vendor.finds == finds + 1  # looked up before it was sent
    assert len(vendor.sent) == 1 and got == ["r1", "r2"] and not outcome.pending
    cache.close()


def _first_times_out(submit):
    state = {"calls": 0}

    def wrapped(lines, tag):
        state["calls"] += 1
        if state["calls"] == 1:
            raise VendorError("POST /batches: HTTP 502: bad gateway", 502, uncertain=True)
        return submit(lines, tag)

    return wrapped


def test_a_create_refused_for_sure_is_reported_not_looked_up(tmp_path):
    """A 400 (or a connection never made) created nothing: no lookup, the ids fail with the
    reason and the next run submits them."""

    class _Refused(_Vendor):
        def submit(self, lines, tag):
            self.sent.append(tag)
            raise VendorError("POST /batches: HTTP 400: bad file", 400)

    vendor = _Refused(creates=False, listed_from_call=1)
    cache = DiskCache(tmp_path / "l.sqlite")
    outcome, _ = _run(vendor, Ledger(cache, {"vendor": "refused"}))
    assert vendor.finds == 0 and "HTTP 400" in outcome.failed["r1"]
    cache.close()


def test_send_marks_a_non_idempotent_request_uncertain_and_never_repeats_it():
    """``httpretry.send(idempotent=False)``: a read timeout and a 5xx are returned at once,
    ``uncertain``; a 429 (the server did not act) is sent again."""
    import httpx

    from implicit_bench.runtime.httpretry import RetryPolicy, send

    calls = {"n": 0}

    def handler(request):
        calls["n"] += 1
        if request.url.path == "/timeout":
            raise httpx.ReadTimeout("slow", request=request)
        if request.url.path == "/busy" and calls["n"] == 1:
            return httpx.Response(429, headers={"Retry-After": "0"}, stream=httpx.ByteStream(b""))
        if request.url.path == "/busy":
            return httpx.Response(200, stream=httpx.ByteStream(b'{"id": "b1"}'))
        return httpx.Response(502, stream=httpx.ByteStream(b"bad gateway"))

    policy = RetryPolicy(max_attempts=4, backoff_s=0.0)
    client = httpx.Client(transport=httpx.MockTransport(handler), base_url="http://x")
    for path in ("/timeout", "/gateway"):
        calls["n"] = 0
        result = send(client, "POST", path, policy, idempotent=False, sleep=lambda s: None)
        assert calls["n"] == 1 and result.uncertain and not result.ok
        again = send(client, "POST", path, policy, sleep=lambda s: None)  # idempotent: retried
        assert not again.uncertain
    calls["n"] = 0
    result = send(client, "POST", "/busy", policy, idempotent=False, sleep=lambda s: None)
    assert result.ok and calls["n"] == 2


def _output_lines(n: int, width: int) -> bytes:
    body = {"choices": [{"message": {"content": "x" * width}}]}
    return b"".join(
        json.dumps({"custom_id": f"r{i}", "response": {"status_code": 200, "body": body}}).encode()
        + b"\n"
        for i in range(n)
    )


def test_an_output_file_is_read_line_by_line_in_bounded_memory():
    """``OpenAIBatches.results`` streams the file to disk and reads it a line at a time: the
    peak of Python allocations stays far below the file's size (it was read whole, twice)."""
    import httpx

    from implicit_bench.backends.vendor_batch.openai import OpenAIBatches
    from implicit_bench.runtime.httpretry import RetryPolicy

    content = _output_lines(4000, 10_000)  # about 40 MB
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, stream=httpx.ByteStream(content))
    )
    vendor = OpenAIBatches(
        httpx.Client(transport=transport, base_url="http://x"),
        RetryPolicy(max_attempts=1),
        CHAT,
        max_file_bytes=1 << 30,
    )
    poll = BatchPoll("completed", True, {"output_file_id": "file-1"})
    tracemalloc.start()
    try:
        count = 0
        for answer in vendor.results("b1", poll):
            count += answer.status == 200
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 4000
    assert peak < len(content) / 4, f"peak {peak} bytes for a {len(content)}-byte file"


def test_lines_skips_a_line_over_the_bound_without_holding_it():
    from implicit_bench.backends.vendor_batch.openai import lines

    body = io.BytesIO(b"a\n" + b"x" * 100 + b"\nb\nlast")
    assert list(lines(body, 10)) == [b"a\n", b"b\n", b"last"]


def test_an_output_over_its_bound_is_downloaded_once_and_the_batch_kept(tmp_path):
    """An output file over ``batch_max_file_bytes``: one download (cut at the bound) in the
    run, the ids left open with a reason naming the key, nothing resubmitted or asked item by
    item (its answers were paid for). It was downloaded again at every poll."""
    make_inputs(tmp_path)
    emulator = BatchEmulator()
    big = lambda body, n: (200, completion('{"score": 3}' + " " * 5000))  # noqa: E731
    with ChatServer(big, batches=emulator) as server:
        params = _params(server, batch_max_file_bytes=20_000, batch_wait_s=2.0)
        try:
            run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        except Exception as exc:  # noqa: BLE001 - every call pending: the stage fails
            assert "batch_max_file_bytes" in str(exc), exc
        downloads = [r for r in server.requests if r["path"].endswith("/content")]
        assert len(downloads) == 1  # was one per poll (50 in 11 s)
        assert emulator.calls["POST /v1/batches"] == 1 and _sync_calls(server) == 0
        cache = DiskCache(tmp_path / "cache/judge.sqlite")
        entries = [cache.get(k) for k in list(cache.keys())]
        assert any(isinstance(e, dict) and e.get("open") for e in entries)  # kept open
        cache.close()
