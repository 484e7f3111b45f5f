"""A vendor batch that answers one custom id twice with different answers: an error for that
request (neither answer stored, the call counted as failed), never silently the last line; the
same answer twice is one answer (docs/errors.md, "Records of multi-round runs and
benchmarks"). Against a fake vendor and against the OpenAI batch endpoints of a local server
(tests/helpers/batch_emulator.py)."""

from __future__ import annotations

import json

from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.backends.judges.stage import executor_dispatch, run_judge_stage
from implicit_bench.backends.vendor_batch.base import (
    BatchAnswer,
    BatchParams,
    BatchPoll,
    Ledger,
    run_batches,
)
from implicit_bench.runtime.cache import DiskCache
from tests.helpers.batch_emulator import BatchEmulator
from tests.helpers.chat_server import ChatServer, completion
from tests.helpers.judge_fixtures import make_inputs

DISPATCH = executor_dispatch({}, progress=False)


def _params(server: ChatServer) -> JudgeStageParams:
    """One OpenAI-compatible batch judge of the rubric task on ``server``."""
    judge = {
        "backend": "openai",
        "model": "gpt-test",
        "base_url": server.base_url,
        "api_key_env": None,
        "backoff_s": 0.0,
        "max_retries": 0,
        "batch": True,
        "batch_poll_s": 0.02,
    }
    return JudgeStageParams(
        judges={"gpt": judge},
        tasks={"rubric": None},
        configs=["base"],
        progress=False,
        max_failure_rate=0.5,
    )


class _Twice:
    """A vendor whose one batch ends at once: r1 answered 200 twice with different bodies, r2
    twice alike, r3 once, r4 a 500 and then a 200 (two different answers too)."""

    name = "twice"
    max_bytes = 1 << 20

    def __init__(self):
        self.submitted: list[list[dict]] = []

    def line(self, custom_id, body):
        return {"custom_id": custom_id, "body": body}

    def submit(self, lines, tag):
        self.submitted.append(lines)
        return f"b{len(self.submitted)}"

    def poll(self, batch_id):
        return BatchPoll("completed", True)

    def results(self, batch_id, poll):
        if batch_id != "b1":  # a later batch answers each of its requests once
            for line in self.submitted[int(batch_id[1:]) - 1]:
                yield BatchAnswer(line["custom_id"], 200, {"score": 9})
            return
        yield BatchAnswer("r1", 200, {"score": 1})
        yield BatchAnswer("r2", 200, {"score": 2})
        yield BatchAnswer("r3", 200, {"score": 3})
        yield BatchAnswer("r4", 500, {"error": "overloaded"})
        yield BatchAnswer("r1", 200, {"score": 5})
        yield BatchAnswer("r2", 200, {"score": 2})
        yield BatchAnswer("r4", 200, {"score": 4})

    def cancel(self, batch_id):
        pass

    def find(self, tag):
        return None


def test_an_id_answered_twice_differently_is_failed_not_the_last(tmp_path):
    vendor = _Twice()
    cache = DiskCache(tmp_path / "l.sqlite")
    got: list[BatchAnswer] = []
    outcome = run_batches(
        vendor,
        ["r1", "r2", "r3", "r4"],
        lambda c: {"q": c},
        Ledger(cache, {"vendor": "twice"}),
        BatchParams(batch=True, batch_poll_s=0.01),
        got.extend,
        sleep=lambda s: None,
    )
    cache.close()
    assert [(a.custom_id, a.body) for a in got] == [("r2", {"score": 2}), ("r3", {"score": 3})]
    assert sorted(outcome.failed) == ["r1", "r4"] and not outcome.retry and not outcome.pending
    why = outcome.failed["r1"]
    assert "\n" not in why and why.startswith("vendor batch b1 answered r1 twice")
    assert "different answers" in why and "neither is kept" in why


def test_a_caller_that_stores_later_gets_the_ids_answered_twice_submitted_again(tmp_path):
    """``close_when_read=False`` (the render stage): a rerun reads the ended batch again for
    the ids it did not store, but submits the ids answered twice in a new batch (else it would
    read the same two answers for ever)."""
    vendor = _Twice()
    cache = DiskCache(tmp_path / "l.sqlite")
    ledger = Ledger(cache, {"vendor": "twice"})
    got: list[tuple[str, dict]] = []

    def run(ids):
        return run_batches(
            vendor,
            ids,
            lambda c: {"q": c},
            ledger,
            BatchParams(batch=True, batch_poll_s=0.01),
            lambda answers: got.extend((a.custom_id, a.body) for a in answers),
            close_when_read=False,
            sleep=lambda s: None,
        )

    first = run(["r1", "r2", "r3", "r4"])
    assert sorted(first.failed) == ["r1", "r4"]
    again = run(["r1", "r4"])  # what the caller still lacks
    cache.close()
    assert not again.failed and again.submitted == ["b2"] and not again.resumed
    assert [line["custom_id"] for line in vendor.submitted[1]] == ["r1", "r4"]
    assert got[-2:] == [("r1", {"score": 9}), ("r4", {"score": 9})]


class _Repeats(BatchEmulator):
    """The OpenAI batch endpoints, whose first output file answers its first request twice:
    the second line with another score."""

    repeated = False

    def _finish_openai(self, batch, answered, errors) -> None:
        super()._finish_openai(batch, answered, errors)
        if self.repeated:
            return
        self.repeated = True
        file_id = batch["output_file_id"]
        lines = self.files[file_id].decode().splitlines()
        first = json.loads(lines[0])
        first["response"]["body"] = completion('{"score": 0}')
        self.files[file_id] += (json.dumps(first) + "\n").encode()


def test_a_judge_batch_whose_output_answers_an_id_twice(tmp_path):
    make_inputs(tmp_path)  # 11 ok images: 11 rubric requests
    emulator = _Repeats()
    with ChatServer(lambda body, n: (200, completion('{"score": 3}')), batches=emulator) as server:
        params = _params(server)
        result = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        frame = result.frame
        twice = frame[frame.error.fillna("").str.contains("twice with different answers")]
        assert len(twice) == 1 and twice.raw.fillna("").eq("").all()  # neither answer kept
        assert frame.valid.sum() == 10 and (frame.loc[frame.valid, "value"] == "3").all()
        assert not any(r["path"] == "/v1/chat/completions" for r in server.requests)
        # not stored: the next run asks that one request again, in a new batch
        again = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert emulator.calls["POST /v1/batches"] == 2
        assert len(emulator.batches["batch_2"]["requests"]) == 1
        assert again.frame.valid.sum() == 11
