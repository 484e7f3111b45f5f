"""``batch: true`` on an image API entry (``openai_images``, ``gemini``).

The render stage gives such an entry's missing items to its worker in chunks of
``batch_max_requests`` (``batch_concurrency`` chunks in flight); :func:`generate_by_batch`
answers one chunk through the vendor's batch API. The ledger is the model-call cache
``batch_ledger`` (``cache/batches.sqlite``). A request's custom id is a hash of its item id,
seed and request body, so two seeds of one prompt are two requests, and a changed setting is a
new request. Ids are never closed here (the render stage stores the images after this returns):
a rerun reads a finished batch again (free) for the items not stored, never resubmits them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from implicit_bench._util.hashing import stable_hash
from implicit_bench.backends.generators.base import RenderRequest, RenderResult
from implicit_bench.backends.vendor_batch.base import (
    BatchAnswer,
    BatchParams,
    Ledger,
    Vendor,
    run_batches,
)
from implicit_bench.params import PositiveInt
from implicit_bench.runtime.cache import DiskCache


class GeneratorBatchParams(BatchParams):
    """``BatchParams`` and the render side's two keys."""

    batch_ledger: str = "cache/batches.sqlite"  # the model-call cache holding the batch ids
    batch_concurrency: PositiveInt = 16  # vendor batches in flight (render chunks)


def request_id(request: RenderRequest, body: dict[str, Any]) -> str:
    """The custom id of one image request."""
    return stable_hash({"item": request.item_id, "seed": int(request.seed), "body": body})


def generate_by_batch(
    requests: Sequence[RenderRequest],
    vendor: Vendor,
    config: GeneratorBatchParams,
    body: Callable[[RenderRequest], dict[str, Any]],
    read: Callable[[BatchAnswer], RenderResult],
    one: Callable[[RenderRequest], RenderResult],
    scope: dict[str, Any],
) -> list[RenderResult]:
    """One result per request, in order: read from the batch, else asked item by item
    (``one``: the synchronous endpoint), else failed with why (a batch still running: the
    next run resumes it)."""
    bodies = {request_id(r, body(r)): r for r in requests}
    results: dict[str, RenderResult] = {}

    def on_answers(answers: list[BatchAnswer]) -> None:
        for answer in answers:
            results[answer.custom_id] = read(answer)

    cache = DiskCache(config.batch_ledger)
    try:
        outcome = run_batches(
            vendor,
            list(bodies),
            lambda cid: body(bodies[cid]),
            Ledger(cache, scope),
            config,
            on_answers,
            close_when_read=False,
        )
    finally:
        cache.close()
    for cid in outcome.retry:
        results[cid] = one(bodies[cid])
    for cid, why in {**outcome.failed, **outcome.pending}.items():
        results[cid] = RenderResult("failed", None, why)
    return [results[request_id(r, body(r))] for r in requests]
