"""Vendor batch APIs (``batch: true``) against local servers speaking the batch endpoints
(tests/helpers/batch_emulator.py in tests/helpers/chat_server.py): the OpenAI-compatible judge, the
OpenAI
images backend and Gemini; a stage killed mid-poll resumes its batch without a second
submission; partial failures and expired batches are retried item by item; refusals and
unparsable answers as in the synchronous path; every wait bounded."""

from __future__ import annotations

import base64
import io
import json
import math
import os
import signal
import subprocess
import sys

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.backends.judges.stage import executor_dispatch, run_judge_stage
from implicit_bench.backends.llm.structured import LLMUnavailableError
from implicit_bench.backends.vendor_batch.base import (
    BatchAnswer,
    BatchParams,
    BatchPoll,
    Ledger,
    run_batches,
)
from implicit_bench.render.params import RenderParams
from implicit_bench.render.stage import render_all
from implicit_bench.runtime.cache import DiskCache
from implicit_bench.runtime.execution import ExecutorConfig
from tests.helpers.batch_emulator import BatchEmulator
from tests.helpers.chat_server import ChatServer, completion
from tests.helpers.judge_fixtures import make_inputs
from tests.helpers.render_fixtures import units_frame

DISPATCH = executor_dispatch({}, progress=False)
CHAT = "/v1/chat/completions"


def _judge(server: ChatServer, **extra) -> dict:
    return {
        "backend": "openai",
        "model": "gpt-test",
        "base_url": server.base_url,
        "api_key_env": None,
        "backoff_s": 0.0,
        "max_retries": 0,
        "batch": True,
        "batch_poll_s": 0.02,
        **extra,
    }


def _params(server: ChatServer, **extra) -> JudgeStageParams:
    return JudgeStageParams(
        judges={"gpt": _judge(server, **extra)},
        tasks={"rubric": None},
        configs=["base"],
        progress=False,
        max_failure_rate=0.5,
    )


def _sync_calls(server: ChatServer) -> int:
    return sum(1 for r in server.requests if r["path"] == CHAT)


class _Answers:
    """Answer 1: a refusal; answer 2: not JSON; every other: a score of 3."""

    def __init__(self):
        self.n = 0

    def __call__(self, body, n):
        self.n += 1
        if self.n == 1:
            message = {"role": "assistant", "content": None, "refusal": "I can't judge this."}
            return 200, {"choices": [{"index": 0, "message": message}]}
        if self.n == 2:
            return 200, completion("not json at all")
        return 200, completion('{"score": 3}')


def test_judge_batch_maps_answers_back_and_retries_the_error_file_item_by_item(
    tmp_path, monkeypatch
):
    secret = "sk-batch-SECRET-4242"
    monkeypatch.setenv("IB_BATCH_KEY", secret)
    make_inputs(tmp_path)  # 11 ok images: 11 rubric requests
    faults = iter(["error", "drop"])  # line 1: in the error file; line 2: in no file at all
    emulator = BatchEmulator(fault=lambda cid: next(faults, None))
    with ChatServer(_Answers(), batches=emulator) as server:
        params = _params(server, api_key_env="IB_BATCH_KEY")
        result = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        batch_calls = [r for r in server.requests if r["path"].startswith(("/v1/files", "/v1/b"))]
        assert all(r["headers"]["Authorization"] == f"Bearer {secret}" for r in batch_calls)
        stored = b"".join(p.read_bytes() for p in (tmp_path / "cache").glob("judge.sqlite*"))
        stored += (tmp_path / params.metrics).read_bytes()
        assert secret.encode() not in stored  # the key is sent, never stored
        # one request file, one batch; the two lines it did not answer asked on the
        # synchronous endpoint, one by one; nothing else sent
        assert emulator.calls["POST /v1/files"] == 1 and emulator.calls["POST /v1/batches"] == 1
        assert len(emulator.batches["batch_1"]["requests"]) == 11
        assert _sync_calls(server) == 2 and result.model_calls == 11
        line = json.loads(emulator.files["file-1"].decode().splitlines()[0])
        assert line["method"] == "POST" and line["url"] == CHAT
        assert line["body"]["model"] == "gpt-test" and line["body"]["temperature"] == 0.0
        frame = result.frame
        refused = frame[frame.error.fillna("").str.contains("the model refused")]
        assert len(refused) == 1 and refused.raw.isna().all()  # as today: a failed call
        invalid = frame[frame.raw == "not json at all"]
        assert len(invalid) == 1 and not invalid.valid.any()  # kept as an invalid record
        assert (frame.loc[frame.valid, "value"] == "3").all() and frame.valid.sum() == 9
        counts = result.metrics["counts"]["gpt"]["rubric"]
        assert counts["backend_errors"] == 1 and counts["unparsable"] == 1

        # a rerun sends only what is in no cache: the refused request, in a new batch
        again = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert emulator.calls["POST /v1/batches"] == 2
        assert len(emulator.batches["batch_2"]["requests"]) == 1
        assert again.model_calls == 1 and again.frame.valid.sum() == 10
        assert _sync_calls(server) == 2


def test_a_batch_judge_runs_beside_a_streamed_judge(tmp_path):
    """Two judges in one stage: the batch judge waits for its batch in a thread while the
    streamed judge answers on the synchronous endpoint; both complete."""
    make_inputs(tmp_path)
    emulator = BatchEmulator()
    with ChatServer(lambda body, n: (200, completion('{"score": 1}')), batches=emulator) as server:
        streamed = {k: v for k, v in _judge(server).items() if not k.startswith("batch")}
        params = JudgeStageParams(
            judges={"sync": {**streamed, "model": "other"}, "gpt": _judge(server)},
            tasks={"rubric": None},
            configs=["base"],
            progress=False,
        )
        result = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert result.model_calls == 22 and result.frame.valid.all()
        assert _sync_calls(server) == 11 and emulator.calls["POST /v1/batches"] == 1
        assert set(result.metrics["vendor_batches"]) == {"gpt"}


def test_a_batch_refused_as_a_whole_is_not_sent_item_by_item(tmp_path):
    make_inputs(tmp_path)
    emulator = BatchEmulator(refuse=True)
    with ChatServer(lambda body, n: (200, completion('{"score": 1}')), batches=emulator) as server:
        params = _params(server)
        with pytest.raises(LLMUnavailableError, match="batch_1 failed: invalid_request"):
            run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert _sync_calls(server) == 0  # never 11 full-price requests behind the user's back
        result = run_judge_stage(params, tmp_path, dispatch=DISPATCH)  # submitted again
        assert emulator.calls["POST /v1/batches"] == 2 and result.frame.valid.all()


def test_expired_batch_answers_kept_and_the_rest_retried_synchronously(tmp_path):
    make_inputs(tmp_path)
    emulator = BatchEmulator(expire_after=4)
    with ChatServer(lambda body, n: (200, completion('{"score": 5}')), batches=emulator) as server:
        result = run_judge_stage(_params(server), tmp_path, dispatch=DISPATCH)
        assert emulator.batches["batch_1"]["status"] == "expired"
        assert emulator.lines_answered == 4  # four answered in the batch
        assert _sync_calls(server) == 7 and emulator.calls["POST /v1/batches"] == 1
        assert result.frame.valid.all() and (result.frame.value == "5").all()


def test_killed_mid_poll_resumes_the_submitted_batch_without_a_second_submission(
    tmp_path, repo_root
):
    make_inputs(tmp_path)
    emulator = BatchEmulator(hold=True)  # the batch runs until released
    with ChatServer(lambda body, n: (200, completion('{"score": 4}')), batches=emulator) as server:
        params = _params(server)
        script = (
            "from pathlib import Path; from implicit_bench.backends.judges.stage import *; "
            f"p = JudgeStageParams.model_validate_json({params.model_dump_json()!r}); "
            f"run_judge_stage(p, Path({str(tmp_path)!r}), "
            "dispatch=executor_dispatch({}, progress=False))"
        )
        env = {**os.environ, "PYTHONPATH": f"{repo_root / 'src'}{os.pathsep}{repo_root}"}
        proc = subprocess.Popen([sys.executable, "-c", script], env=env)
        try:
            assert emulator.polled.wait(60)  # submitted, recorded, now polling
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        assert proc.returncode == -signal.SIGKILL
        assert emulator.calls["POST /v1/batches"] == 1 and emulator.lines_answered == 0
        cache = DiskCache(tmp_path / "cache/judge.sqlite")
        recorded = [cache.get(k) for k in list(cache.keys())]
        batches = [e for e in recorded if isinstance(e, dict) and "custom_ids" in e]
        assert [b["batch"] for b in batches] == ["batch_1"] and len(batches[0]["custom_ids"]) == 11
        cache.close()

        emulator.hold.clear()  # the vendor finishes the batch meanwhile
        resumed = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert emulator.calls["POST /v1/batches"] == 1  # never submitted (paid) twice
        assert emulator.calls["POST /v1/files"] == 1 and _sync_calls(server) == 0
        assert resumed.model_calls == 11 and resumed.frame.valid.all()
        assert (resumed.frame.value == "4").all()
        batches = resumed.metrics["vendor_batches"]["gpt"]
        assert batches["submitted"] == [] and batches["resumed"] == ["batch_1"]
        assert batches["retried_item_by_item"] == 0 and batches["still_running"] == 0
        # and the rerun after that asks nothing, polls nothing
        polls = emulator.calls["poll"]
        assert run_judge_stage(params, tmp_path, dispatch=DISPATCH).model_calls == 0
        assert emulator.calls["poll"] == polls


def _killed_once_after_create(monkeypatch):
    """Ledger.record dies once (a kill between the vendor's create answer and the record)."""
    real = Ledger.record
    state = {"killed": False}

    def record(self, batch_id, custom_ids, tag):
        if not state["killed"]:
            state["killed"] = True
            raise KeyboardInterrupt
        return real(self, batch_id, custom_ids, tag)

    monkeypatch.setattr(Ledger, "record", record)


def test_kill_between_create_and_record_finds_the_batch_by_its_tag(tmp_path, monkeypatch):
    make_inputs(tmp_path)
    emulator = BatchEmulator()
    with ChatServer(lambda body, n: (200, completion('{"score": 2}')), batches=emulator) as server:
        params = _params(server)
        _killed_once_after_create(monkeypatch)
        with pytest.raises(KeyboardInterrupt):
            run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert emulator.calls["POST /v1/batches"] == 1
        result = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert emulator.calls["POST /v1/batches"] == 1  # found by metadata, not resubmitted
        assert result.model_calls == 11 and result.frame.valid.all()
        assert _sync_calls(server) == 0

    emulator = BatchEmulator()
    with ChatServer(_gemini_answer, batches=emulator) as server:
        config = _gemini(server, tmp_path)
        _killed_once_after_create(monkeypatch)
        # the executor records the chunk failed; every item failed: the render stage exits 1
        with pytest.raises(LLMUnavailableError, match="render nb: all 12 render calls failed"):
            _render({"nb": config}, tmp_path)
        _, results = _render({"nb": config}, tmp_path)
        assert emulator.calls["POST batchGenerateContent"] == 1  # found by its display name
        assert results["nb"]["by_status"] == {"ok": 11, "refused": 1, "failed": 0}


def test_deadline_keeps_the_batch_for_the_next_run_or_cancels_it(tmp_path):
    make_inputs(tmp_path)
    emulator = BatchEmulator(hold=True)
    with ChatServer(lambda body, n: (200, completion('{"score": 1}')), batches=emulator) as server:
        kept = _params(server, batch_wait_s=0.2)
        with pytest.raises(LLMUnavailableError, match="still running .* the next run resumes"):
            run_judge_stage(kept, tmp_path, dispatch=DISPATCH)  # all 11 pending: exit 1
        assert emulator.calls["POST /v1/batches"] == 1
        with pytest.raises(LLMUnavailableError, match="batch_1 still running"):
            run_judge_stage(_params(server, batch_max_polls=2), tmp_path, dispatch=DISPATCH)
        assert emulator.calls["POST /v1/batches"] == 1  # polled again, not resubmitted

        cancel = _params(server, batch_wait_s=0.2, batch_on_deadline="cancel")
        result = run_judge_stage(cancel, tmp_path, dispatch=DISPATCH)
        assert (
            emulator.calls["cancel"] == 1 and emulator.batches["batch_1"]["status"] == "cancelled"
        )
        # the cancelled batch answered nothing: all 11 asked item by item
        assert _sync_calls(server) == 11 and result.frame.valid.all()
        assert emulator.calls["POST /v1/batches"] == 1


# ----- generators ----------------------------------------------------------------------------
def _png(color) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (1024, 1024), color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _image_answer(body, n):
    """The OpenAI images endpoint: moderation refusals, an empty answer, images."""
    prompt = body["prompt"]
    if "Muslim" in prompt or "Black" in prompt:
        error = {"code": "moderation_blocked", "message": "rejected by the safety system"}
        return 400, {"error": error}
    if "Christian" in prompt:
        return 200, {"created": 1, "data": []}
    return 200, {"data": [{"b64_json": _png((len(prompt), 0, 0))}]}


def _render(configs, tmp_path):
    params = RenderParams(configs=configs, seeds=[42], executor=ExecutorConfig(progress=False))
    return params, render_all(params, units_frame(), tmp_path / "images")


def test_openai_images_batch_refusals_and_partial_failure(tmp_path):
    faults = iter(["error"])
    emulator = BatchEmulator(fault=lambda cid: next(faults, None))
    with ChatServer(_image_answer, batches=emulator) as server:
        config = {
            "backend": "openai_images",
            "model": "gpt-image-test",
            "base_url": server.base_url,
            "api_key_env": None,
            "quality": "low",
            "max_retries": 0,
            "batch": True,
            "batch_poll_s": 0.02,
            "batch_ledger": str(tmp_path / "cache/batches.sqlite"),
        }
        params, results = _render({"api": config}, tmp_path)
        # 12 prompts (4 units x 3 variants, one seed): one batch; "Black" and "Muslim"
        # refused (moderation 400 in the error file), "Christian" answered no image: refused
        assert emulator.calls["POST /v1/batches"] == 1
        assert results["api"]["by_status"] == {"ok": 9, "refused": 3, "failed": 0}
        line = json.loads(emulator.files["file-1"].decode().splitlines()[0])
        assert line["url"] == "/v1/images/generations" and line["body"]["quality"] == "low"
        # the error-file line asked again on the synchronous endpoint, one request
        assert [r["path"] for r in server.requests].count("/v1/images/generations") == 1
        index = pd.read_parquet(tmp_path / "images/api/index.parquet").set_index(
            ["unit_id", "variant"]
        )
        assert "moderation_blocked" in index.loc[("u1", "stereotype"), "reason"]
        assert "no image" in index.loc[("u2", "anti_stereotype"), "reason"]
        # a rerun: every item done, nothing sent
        _, again = _render({"api": config}, tmp_path)
        assert again["api"]["run"]["skipped_done"] == 12 and emulator.calls["POST /v1/batches"] == 1


def _gemini_answer(body, n):
    text = body["contents"][0]["parts"][0]["text"]
    if "Muslim" in text:
        return 200, {"promptFeedback": {"blockReason": "SAFETY"}}
    image = {"inlineData": {"mimeType": "image/png", "data": _png((1, 2, 3))}}
    return 200, {"candidates": [{"content": {"parts": [image]}, "finishReason": "STOP"}]}


def _gemini(server, tmp_path, **extra):
    return {
        "backend": "gemini",
        "model": "gemini-image-test",
        "base_url": server.base_url.replace("/v1", "/v1beta"),
        "api_key_env": None,
        "image_size": "1K",
        "max_retries": 0,
        "batch": True,
        "batch_poll_s": 0.02,
        "batch_ledger": str(tmp_path / "cache/batches.sqlite"),
        **extra,
    }


def test_gemini_batch_inlined_answers_refusal_expiry_and_resume(tmp_path):
    emulator = BatchEmulator(hold=True)
    with ChatServer(_gemini_answer, batches=emulator) as server:
        config = _gemini(server, tmp_path, batch_wait_s=0.2, batch_max_requests=6)
        # two batches of 6 submitted, still running at the deadline: failed, kept open (every
        # item failed: the render stage exits 1, and the next run resumes the batches)
        with pytest.raises(LLMUnavailableError, match="render nb: all 12 render calls failed"):
            _render({"nb": config}, tmp_path)
        assert emulator.calls["POST batchGenerateContent"] == 2
        sent = emulator.batches["batches/g1"]["requests"][0][1]
        assert sent["generationConfig"]["seed"] == 42
        assert sent["generationConfig"]["imageConfig"]["imageSize"] == "1K"

        emulator.hold.clear()
        emulator.expire_after = 5  # each batch answers 5 of its 6 lines, then expires
        _, second = _render({"nb": _gemini(server, tmp_path, batch_max_requests=6)}, tmp_path)
        assert emulator.calls["POST batchGenerateContent"] == 2  # resumed, not resubmitted
        assert emulator.batches["batches/g1"]["status"] == "BATCH_STATE_EXPIRED"
        # the expired line of each batch asked on the synchronous endpoint
        sync = [
            r for r in server.requests if r["path"].endswith("/gemini-image-test:generateContent")
        ]
        assert len(sync) == 2
        # "Muslim": promptFeedback.blockReason SAFETY, refused as on the synchronous endpoint
        assert second["nb"]["by_status"] == {"ok": 11, "refused": 1, "failed": 0}
        _, third = _render({"nb": _gemini(server, tmp_path)}, tmp_path)
        assert third["nb"]["run"]["skipped_done"] == 12
        assert emulator.calls["POST batchGenerateContent"] == 2


# ----- the driver's bounds -----------------------------------------------------------------
class _Stuck:
    """A vendor whose batches never end (answers nothing); counts what it is asked."""

    name = "stuck"
    max_bytes = 1 << 20

    def __init__(self):
        self.submitted: list[list[dict]] = []
        self.polls = 0
        self.cancels = 0

    def line(self, custom_id, body):
        return {"custom_id": custom_id, "body": body}

    def submit(self, lines, tag):
        self.submitted.append(lines)
        return f"b{len(self.submitted)}"

    def poll(self, batch_id):
        self.polls += 1
        return BatchPoll("in_progress", False)

    def results(self, batch_id, poll):
        return iter(())

    def cancel(self, batch_id):
        self.cancels += 1

    def find(self, tag):
        return None


@settings(max_examples=60, deadline=None)
@given(
    poll_s=st.floats(min_value=1e-3, max_value=1e6),
    wait_s=st.floats(min_value=1e-3, max_value=1e7),
    max_polls=st.integers(min_value=1, max_value=500),
    cancel=st.booleans(),
)
def test_every_wait_is_finite_and_bounded_by_the_deadline_and_the_cap(
    tmp_path_factory, poll_s, wait_s, max_polls, cancel
):
    now = [0.0]
    waits: list[float] = []

    def sleep(s):
        waits.append(s)
        now[0] += s

    params = BatchParams(
        batch=True,
        batch_poll_s=poll_s,
        batch_wait_s=wait_s,
        batch_max_polls=max_polls,
        batch_max_requests=2,
        batch_on_deadline="cancel" if cancel else "keep",
        batch_cancel_wait_s=wait_s,
    )
    vendor = _Stuck()
    cache = DiskCache(tmp_path_factory.mktemp("ledger") / "l.sqlite")
    ledger = Ledger(cache, {"vendor": "stuck"})
    ids = ["r1", "r2", "r3"]
    run = lambda: run_batches(  # noqa: E731
        vendor,
        ids,
        lambda c: {"q": c},
        ledger,
        params,
        lambda a: None,
        clock=lambda: now[0],
        sleep=sleep,
    )
    outcome = run()
    rounds = 2 if cancel else 1  # a cancel gets its own wait, bounded alike
    assert all(math.isfinite(w) and 0 <= w <= poll_s for w in waits)
    assert sum(waits) <= rounds * wait_s + 1e-6
    assert vendor.polls <= rounds * max_polls * 2  # two batches (2 + 1 requests) per sweep
    assert [len(s) for s in vendor.submitted] == [2, 1] and outcome.submitted == ["b1", "b2"]
    assert set(outcome.pending) == set(ids) and not outcome.retry
    assert vendor.cancels == (2 if cancel else 0)
    again = run()  # a rerun resumes both batches, submits nothing
    assert len(vendor.submitted) == 2 and again.resumed == ["b1", "b2"]
    cache.close()


def test_batch_keys_never_change_an_image_or_a_judge_cache_key():
    from implicit_bench.backends.generators import GENERATORS
    from implicit_bench.backends.generators.batch import GeneratorBatchParams
    from implicit_bench.backends.judges.openai_vlm import OpenAIJudge, OpenAIJudgeParams

    # every backend taking the batch keys declares them runtime keys (out of the settings hash)
    configs = [GENERATORS.params_model(name) for name in GENERATORS.names()]
    batched = [c for c in configs if issubclass(c, GeneratorBatchParams)]
    assert batched
    for config in batched:
        assert set(GeneratorBatchParams.model_fields) <= config.runtime_keys
    plain = OpenAIJudge(OpenAIJudgeParams(model="m"))
    batched = OpenAIJudge(OpenAIJudgeParams(model="m", batch=True, batch_poll_s=5))
    assert plain.identity() == batched.identity() and plain.decoding() == batched.decoding()


def test_an_answer_is_mapped_back_by_its_custom_id_only():
    from implicit_bench.backends.vendor_batch.openai import parse_line

    ok = parse_line(b'{"custom_id": "a", "response": {"status_code": 200, "body": {"x": 1}}}')
    assert ok == BatchAnswer("a", 200, {"x": 1}) and ok.final
    expired = parse_line(
        b'{"custom_id": "b", "response": null, '
        b'"error": {"code": "batch_expired", "message": "expired"}}'
    )
    assert expired.status is None and not expired.final and "batch_expired" in expired.error
    throttled = parse_line(b'{"custom_id": "c", "response": {"status_code": 429, "body": {}}}')
    assert not throttled.final  # asked again item by item
    assert parse_line(b"") is None and parse_line(b"{broken") is None
    assert parse_line(b'{"response": {"status_code": 200}}') is None  # no id: never guessed


class _Done(_Stuck):
    """A vendor whose batches end at once, answering every line 200."""

    def poll(self, batch_id):
        self.polls += 1
        return BatchPoll("completed", True)

    def results(self, batch_id, poll):
        lines = self.submitted[int(batch_id[1:]) - 1]
        return iter(BatchAnswer(line["custom_id"], 200, {"ok": 1}) for line in lines)


def test_a_read_back_batch_is_closed_and_never_read_again(tmp_path):
    """Requests still missing after their batch was read back (the caller kept nothing, e.g.
    refusals) go in a new batch next time: neither the ids nor the chunk's intent stay open."""
    vendor = _Done()
    cache = DiskCache(tmp_path / "l.sqlite")
    ledger = Ledger(cache, {"vendor": "done"})
    got: list[str] = []
    for _ in range(2):
        outcome = run_batches(
            vendor,
            ["r1", "r2"],
            lambda c: {"q": c},
            ledger,
            BatchParams(batch=True, batch_poll_s=0.01),
            lambda answers: got.extend(a.custom_id for a in answers),
            sleep=lambda s: None,
        )
        assert not outcome.retry and not outcome.pending and not outcome.resumed
    assert len(vendor.submitted) == 2 and got == ["r1", "r2", "r1", "r2"]
    cache.close()


def test_request_files_are_cut_by_lines_and_bytes_and_built_one_at_a_time(tmp_path):
    from implicit_bench.backends.vendor_batch.base import chunks

    lines = [(f"r{i}", {"x": "a" * 90}) for i in range(5)]  # 101 bytes of JSONL each
    assert [len(c) for c in chunks(lines, 10, 250)] == [2, 2, 1]
    assert [len(c) for c in chunks(lines, 3, 10_000)] == [3, 2]
    assert [len(c) for c in chunks(lines[:1], 3, 10)] == [1]  # a larger line goes alone

    events: list[str] = []

    class _Logged(_Stuck):
        def submit(self, lines, tag):
            events.append("submit")
            return super().submit(lines, tag)

    def body_of(cid):
        events.append(cid)
        return {"q": cid}

    cache = DiskCache(tmp_path / "l.sqlite")
    run_batches(
        _Logged(),
        [f"r{i}" for i in range(6)],
        body_of,
        Ledger(cache, {"vendor": "logged"}),
        BatchParams(batch=True, batch_max_requests=2, batch_wait_s=1e-3),
        lambda answers: None,
        sleep=lambda s: None,
    )
    # a chunk is submitted once the next line is built: never more than one chunk in memory
    assert events == ["r0", "r1", "r2", "submit", "r3", "r4", "submit", "r5", "submit"]
    cache.close()


def test_a_poll_refused_for_good_stops_at_once_and_keeps_the_batch(tmp_path):
    """A 401 / 403 to a poll cannot heal within the run: no polling until the deadline, the
    batch stays open for the next run; a 5xx is polled again."""
    from implicit_bench.backends.vendor_batch.base import VendorError

    class _Refused(_Stuck):
        def poll(self, batch_id):
            self.polls += 1
            status = 503 if self.polls == 1 else 401
            raise VendorError(f"GET /batches/{batch_id}: HTTP {status}", status)

    vendor = _Refused()
    cache = DiskCache(tmp_path / "l.sqlite")
    outcome = run_batches(
        vendor,
        ["r1"],
        lambda c: {"q": c},
        Ledger(cache, {"vendor": "refused"}),
        BatchParams(batch=True, batch_poll_s=1.0),
        lambda answers: None,
        sleep=lambda s: None,
    )
    assert vendor.polls == 2 and "HTTP 401" in outcome.pending["r1"]
    assert Ledger(cache, {"vendor": "refused"}).open_batches(["r1"]) == {"b1": ["r1"]}
    cache.close()
