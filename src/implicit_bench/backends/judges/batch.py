"""A judge entry with ``batch: true``: its uncached requests go through the vendor's batch API.

The judge stage's :func:`~implicit_bench.backends.judges.stage.answer_missing` hands the missing
calls
of such a judge here instead of to the executor. The batch ids live in the judge's own
model-call cache (``judge.cache``), beside the answers: a killed stage's rerun polls the
batches it submitted and never submits (pays for) them twice; answers are stored by
``on_result`` as each batch is read back, before its ids are closed. Requests a batch did not
answer are asked item by item on the synchronous endpoint (docs/judging.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from implicit_bench.backends.judges.base import JudgeRequest
from implicit_bench.backends.vendor_batch.base import BatchAnswer, BatchOutcome, Ledger, run_batches
from implicit_bench.protocol.judge_tasks import load_task
from implicit_bench.runtime.cache import DiskCache


def answer_by_batch(
    backend: Any,
    calls: list[Any],
    cache: DiskCache,
    on_result: Callable[[list[Any], list[tuple[str, str, str | None]] | None, str | None], None],
    worker: Any,
) -> BatchOutcome:
    """Answer ``calls`` (:class:`~implicit_bench.backends.judges.stage.JudgeCall`, none cached) of
    one
    batch judge; every answer or error goes to ``on_result`` as in the streamed path.
    ``worker``: a set-up :class:`~implicit_bench.backends.judges.stage.JudgeWorker` of this judge
    (reads
    the images; answers the item-by-item retries); closed here."""
    backend = worker.backend
    by_key = {call.key: call for call in calls}
    unbuilt: dict[str, str] = {}

    def body_of(key: str) -> dict[str, Any] | None:
        call = by_key[key]
        try:
            schema = load_task(call.task).json_schema() if call.task else None
            return backend.request_body(JudgeRequest(call.prompt, worker._image(call), schema))
        except (OSError, KeyError) as exc:
            unbuilt[key] = f"image unreadable: {exc}"
            return None

    def on_answers(answers: list[BatchAnswer]) -> None:
        results = [(a.custom_id, *backend.batch_answer(a)) for a in answers]
        on_result([by_key[a.custom_id] for a in answers], results, None)

    vendor = backend.batch_vendor()
    scope = {
        "vendor": vendor.name,
        "base_url": backend.params.base_url.rstrip("/"),
        "endpoint": vendor.endpoint,
    }
    try:
        outcome = run_batches(
            vendor, list(by_key), body_of, Ledger(cache, scope), backend.params, on_answers
        )
        if outcome.retry:  # item by item on the synchronous endpoint (one retry policy)
            retry = [by_key[key] for key in outcome.retry]
            on_result(retry, worker(retry), None)
        left = {**unbuilt, **outcome.failed, **outcome.pending}
        if left:
            on_result([by_key[k] for k in left], [(k, "", why) for k, why in left.items()], None)
    finally:
        worker.close()
        vendor.client.close()
    return outcome
