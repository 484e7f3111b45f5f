"""Submit, resume and poll vendor batches; map their answers back by custom id.

:func:`run_batches` takes the custom ids of the requests still to answer (their answers are in
no cache: the caller looked first) and:

1. looks each id up in the **ledger** (a :class:`~implicit_bench.runtime.cache.DiskCache`: the
judge's
   model-call cache, or ``batch_ledger`` for a generator). An id recorded in a batch that is
   still open is **not submitted again**: that batch is polled (a killed stage resumes it);
2. cuts the other ids into request files of at most ``batch_max_requests`` lines and
   ``batch_max_bytes`` bytes, submits each (the vendor's :meth:`Vendor.submit`), and records
   the batch id with the request ids it covers **before polling** (one SQLite transaction).
   An intent (the chunk's tag, a hash of its ids) is recorded just before the create call: a
   rerun that finds an intent without a batch id asks the vendor for a batch of that tag
   (:meth:`Vendor.find`, a bounded listing) before submitting, so a kill between the create
   call and the record does not pay twice either;
3. polls every open batch each ``batch_poll_s`` seconds, at most ``batch_max_polls`` sweeps
   and never past ``batch_wait_s`` (the bounded wait of every other HTTP wait of the project:
   each poll request goes through :func:`implicit_bench.runtime.httpretry.send`);
4. for every batch that ended (completed, expired, failed or cancelled), reads its answers
   (output and error files, or inlined responses) and hands the final ones to ``on_answers``
   (the caller parses and stores them), then closes the batch's ids in the ledger. A request
   the batch did not answer (an error line, a retryable status, an expired or failed batch,
   no line at all) is returned in ``retry``: the caller asks it item by item on the
   synchronous endpoint (docs/judging.md, "Vendor batch APIs", why). A batch the vendor
   refused as a whole (OpenAI ``failed``: the request file did not validate; Gemini
   ``BATCH_STATE_FAILED``) is not retried item by item: the same requests would fail alike
   (or cost the full price for every one); its ids are returned in ``failed`` with the
   vendor's reason and closed, so the next run submits them again. An id the batch
   answered twice with different answers is in ``failed`` too: neither answer is stored.

At the deadline an open batch is either kept (``batch_on_deadline: keep``: its ids stay open,
the next run polls it again; they are returned in ``pending``) or cancelled (``cancel``: the
answers it has are read, the rest retried item by item).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

import httpx

from implicit_bench._util.hashing import stable_hash
from implicit_bench._util.redact import redact
from implicit_bench.params import PositiveFloat, PositiveInt, StrictModel
from implicit_bench.runtime.cache import DiskCache, model_key
from implicit_bench.runtime.httpretry import describe, is_retryable


class BatchParams(StrictModel):
    """The ``batch*`` keys of an HTTP entry (judge or generator). None of them changes an
    answer: they are left out of every cache key and settings hash."""

    batch: bool = False  # send the requests through the vendor's batch API
    batch_poll_s: PositiveFloat = 60.0  # seconds between two polls of the open batches
    batch_wait_s: PositiveFloat = 90_000.0  # longest wait of one run (25 h > the 24 h window)
    batch_max_polls: PositiveInt = 2_000  # cap on poll sweeps of one run
    batch_max_requests: PositiveInt = 1_000  # requests per vendor batch (OpenAI: <= 50,000)
    batch_max_bytes: PositiveInt = 180 << 20  # request file bound (OpenAI 200 MB, Gemini 20 MB)
    batch_max_file_bytes: PositiveInt = 2 << 30  # bound of a downloaded output / error file
    batch_on_deadline: Literal["keep", "cancel"] = "keep"
    batch_cancel_wait_s: PositiveFloat = 600.0  # after a cancel: wait this long for its end


BATCH_KEYS = frozenset(BatchParams.model_fields)


@dataclass(frozen=True)
class BatchAnswer:
    """One line of a batch's answers: the HTTP status and JSON body of the request, or an
    error (no response: expired, cancelled, failed in the vendor's pipeline)."""

    custom_id: str
    status: int | None
    body: Any = None
    error: str | None = None

    @property
    def final(self) -> bool:
        """An answer the synchronous endpoint would have given too (2xx or a non-retryable
        error such as a moderation 400); the others are asked again item by item."""
        return self.status is not None and not is_retryable(self.status)

    def describe(self) -> str:
        """``HTTP <status>: <body>`` as the synchronous path reports a final error."""
        return describe(self.response()) if self.status is not None else "no response"

    def response(self) -> httpx.Response:
        """The answer as the synchronous endpoint's HTTP response (parsed by the same code)."""
        return httpx.Response(
            int(self.status or 0),
            content=json.dumps(self.body).encode(),
            headers={"Content-Type": "application/json"},
            request=httpx.Request("POST", "http://batch.invalid/" + self.custom_id),
        )


@dataclass(frozen=True)
class BatchPoll:
    """What a poll of one batch says: ``state`` as the vendor names it, whether it ended."""

    state: str
    ended: bool
    info: Any = None  # the vendor's batch object (read by ``results``)
    failed: str | None = None  # the whole batch was refused (validation): why


class VendorError(Exception):
    """A batch request that failed under the retry policy (message redacted; ``status``: the
    final HTTP status, None when no answer came). ``uncertain``: a create that failed after
    it may have reached the vendor (a timeout, a dropped connection, a 5xx): the batch may
    exist and be billed. ``too_large``: an answer over its byte bound (the same request would
    be again)."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        *,
        uncertain: bool = False,
        too_large: bool = False,
    ):
        super().__init__(message)
        self.status = status
        self.uncertain = uncertain
        self.too_large = too_large

    @classmethod
    def of(cls, message: str, result: Any) -> VendorError:
        """The error of a failed :class:`~implicit_bench.runtime.httpretry.CallResult`."""
        status = result.response.status_code if result.response is not None else None
        return cls(
            redact(message) or "",
            status,
            uncertain=result.uncertain,
            too_large=result.too_large,
        )


class Vendor(Protocol):
    name: str
    max_bytes: int  # the vendor's bound on one request file / inlined request

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]: ...

    def submit(self, lines: list[dict[str, Any]], tag: str) -> str: ...

    def poll(self, batch_id: str) -> BatchPoll: ...

    def results(self, batch_id: str, poll: BatchPoll) -> Iterator[BatchAnswer]: ...

    def cancel(self, batch_id: str) -> None: ...

    def find(self, tag: str) -> str | None: ...


@dataclass
class BatchOutcome:
    """What :func:`run_batches` did: ids to ask item by item, ids still open at the vendor
    (with why), ids not submitted (with why), batch ids submitted and resumed, polls made."""

    retry: list[str] = field(default_factory=list)
    pending: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    submitted: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    polls: int = 0


class Ledger:
    """Batch ids and the request ids they cover, in a model-call cache.

    ``vendor_batch_item`` entries (one per request id): ``{"batch": id, "open": bool}``;
    ``vendor_batch`` entries (one per batch): ``{"batch", "custom_ids", "submitted_at",
    "tag"}``. A request is open while its batch has not been read back by a run."""

    def __init__(self, cache: DiskCache, scope: dict[str, Any]):
        self.cache = cache
        self.scope = {"backend": "vendor_batch", **scope}

    def item_key(self, custom_id: str) -> str:
        return model_key("vendor_batch_item", self.scope, custom_id=custom_id)

    def batch_key(self, batch_id: str) -> str:
        return model_key("vendor_batch", self.scope, batch=batch_id)

    def open_batches(self, custom_ids: Sequence[str]) -> dict[str, list[str]]:
        """batch id -> the given request ids it holds open."""
        keys = {self.item_key(c): c for c in custom_ids}
        found = self.cache.get_many(keys)
        open_: dict[str, list[str]] = defaultdict(list)
        for key, entry in found.items():
            if (
                isinstance(entry, dict)
                and entry.get("open")
                and isinstance(entry.get("batch"), str)
            ):
                open_[entry["batch"]].append(keys[key])
        return dict(open_)

    def record(self, batch_id: str, custom_ids: list[str], tag: str) -> None:
        when = datetime.now(UTC).isoformat(timespec="seconds")
        entry = {"batch": batch_id, "custom_ids": custom_ids, "submitted_at": when, "tag": tag}
        self.cache.put_many(
            [(self.batch_key(batch_id), entry)]
            + [(self.item_key(c), {"batch": batch_id, "open": True}) for c in custom_ids]
        )

    def intent_key(self, tag: str) -> str:
        return model_key("vendor_batch_intent", self.scope, tag=tag)

    def intend(self, tag: str) -> None:
        """Written just before a batch is created: a rerun that finds it but no batch id looks
        the batch up at the vendor by its tag (a kill between create and :meth:`record`)."""
        when = datetime.now(UTC).isoformat(timespec="seconds")
        self.cache.put(self.intent_key(tag), {"tag": tag, "at": when})

    def intended(self, tag: str) -> bool:
        """An intent of ``tag`` whose batch was not read back yet."""
        entry = self.cache.get(self.intent_key(tag))
        return isinstance(entry, dict) and not entry.get("closed")

    def close(self, batch_id: str, custom_ids: list[str]) -> None:
        """The batch was read back: its ids (and its intent) are no longer open."""
        entries = [(self.item_key(c), {"batch": batch_id, "open": False}) for c in custom_ids]
        recorded = self.batch(batch_id)
        if isinstance(recorded, dict) and isinstance(recorded.get("tag"), str):
            tag = recorded["tag"]
            entries.append((self.intent_key(tag), {"tag": tag, "closed": True}))
        self.cache.put_many(entries)

    def batch(self, batch_id: str) -> dict[str, Any] | None:
        return self.cache.get(self.batch_key(batch_id))


def chunks(
    lines: Iterable[tuple[str, dict[str, Any]]], max_requests: int, max_bytes: int
) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Consecutive runs of ``(custom_id, line)`` of at most ``max_requests`` lines and
    ``max_bytes`` bytes of JSONL (a single larger line goes alone)."""
    chunk: list[tuple[str, dict[str, Any]]] = []
    size = 0
    for cid, line in lines:
        n = len(json.dumps(line, ensure_ascii=False).encode()) + 1
        if chunk and (len(chunk) >= max_requests or size + n > max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((cid, line))
        size += n
    if chunk:
        yield chunk


def run_batches(
    vendor: Vendor,
    custom_ids: Sequence[str],
    body_of: Callable[[str], dict[str, Any] | None],
    ledger: Ledger,
    params: BatchParams,
    on_answers: Callable[[list[BatchAnswer]], None],
    *,
    close_when_read: bool = True,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> BatchOutcome:
    """Answer ``custom_ids`` through the vendor's batch API (see the module docstring).

    ``body_of(id)``: the request body the synchronous endpoint would get (None: the request
    cannot be built; the caller reports it). ``close_when_read``: close a batch's ids once
    ``on_answers`` returned (it stored them); False for a caller that stores after this
    function returns (the render stage): a rerun then reads a finished batch again (free)
    for its ids not stored, never resubmits them."""
    outcome = BatchOutcome()
    wanted = list(dict.fromkeys(custom_ids))
    active = ledger.open_batches(wanted)
    outcome.resumed = sorted(active)
    covered = {c for ids in active.values() for c in ids}

    def fresh() -> Iterator[tuple[str, dict[str, Any]]]:
        """The request lines not in an open batch, built one chunk at a time (a judge's
        lines hold images: never all of them in memory at once)."""
        for cid in wanted:
            if cid not in covered and (body := body_of(cid)) is not None:
                yield cid, vendor.line(cid, body)

    max_bytes = min(params.batch_max_bytes, vendor.max_bytes)
    for chunk in chunks(fresh(), params.batch_max_requests, max_bytes):
        ids = [cid for cid, _ in chunk]
        tag = "implicit-bench-" + stable_hash(ids, 24)
        try:
            found = vendor.find(tag) if ledger.intended(tag) else None
            if found is not None:  # created by a run killed before it recorded the id
                ledger.record(found, ids, tag)
                active[found] = ids
                outcome.resumed.append(found)
                continue
            ledger.intend(tag)
            batch_id = vendor.submit([line for _, line in chunk], tag)
        except VendorError as exc:
            if not exc.uncertain:  # refused or never sent: nothing was created
                for cid in ids:
                    outcome.failed[cid] = f"batch not submitted: {exc}"
                continue
            batch_id = _look_up(vendor, tag, ids, exc, outcome)
            if batch_id is None:
                continue
        ledger.record(batch_id, ids, tag)  # before any poll: a killed run resumes this batch
        active[batch_id] = ids
        outcome.submitted.append(batch_id)

    deadline = clock() + params.batch_wait_s
    errors: dict[str, str] = {}  # batch id -> why its answers were not read yet
    cancelled = False
    sweeps = 0
    while active:
        outcome.polls += 1
        sweeps += 1
        for batch_id in list(active):
            try:
                poll = vendor.poll(batch_id)
            except VendorError as exc:
                if exc.too_large:  # the same answer would be as large at every poll
                    why = _too_large(batch_id, exc)
                    outcome.pending.update(dict.fromkeys(active.pop(batch_id), why))
                    continue
                if exc.status is not None and exc.status != 404 and not is_retryable(exc.status):
                    why = f"vendor batch {batch_id} not polled ({exc}): the next run resumes it"
                    outcome.pending.update(dict.fromkeys(active.pop(batch_id), redact(why)))
                    continue  # 401, 403...: polling again in this run cannot help
                if exc.status != 404:
                    continue  # a poll that failed: asked again at the next sweep
                poll = BatchPoll("not found", True)  # the vendor does not know it: ask again
            if not poll.ended:
                continue
            if poll.failed is not None:  # refused as a whole: the same file would fail again
                ids = active.pop(batch_id)
                why = redact(f"vendor batch {batch_id} failed: {poll.failed}")
                outcome.failed.update(dict.fromkeys(ids, why))
                ledger.close(batch_id, ids)
                continue
            try:
                final, twice = _final_answers(vendor, batch_id, poll, active[batch_id])
            except VendorError as exc:  # an output file not downloaded: tried next sweep
                if exc.too_large:  # ... unless it is over its bound: it will not shrink
                    why = _too_large(batch_id, exc)
                    outcome.pending.update(dict.fromkeys(active.pop(batch_id), why))
                    continue
                errors[batch_id] = str(exc)
                continue
            ids = active.pop(batch_id)
            if final:
                on_answers(list(final.values()))  # stored by the caller before ids are closed
            if close_when_read:
                ledger.close(batch_id, ids)
            elif twice:  # never stored by the caller: the next run submits them again
                ledger.close(batch_id, list(twice))
            outcome.failed.update(twice)  # an error, not asked again in this run
            outcome.retry.extend(c for c in ids if c not in final and c not in twice)
        if not active:
            break
        out_of_time = sweeps >= params.batch_max_polls or clock() + params.batch_poll_s > deadline
        if out_of_time and params.batch_on_deadline == "cancel" and not cancelled:
            for batch_id in active:
                with contextlib.suppress(VendorError):  # it may have ended: the polls tell
                    vendor.cancel(batch_id)
            cancelled = True
            deadline = clock() + params.batch_cancel_wait_s
            sweeps = 0
            continue
        if out_of_time:
            for batch_id, ids in active.items():
                why = (
                    f"vendor batch {batch_id} still running after {params.batch_wait_s:g} s / "
                    f"{params.batch_max_polls} polls: the next run resumes it (never resubmitted)"
                )
                if batch_id in errors:
                    why = f"vendor batch {batch_id} ended, answers not read ({errors[batch_id]}): "
                    why += "the next run reads them again (never resubmitted)"
                outcome.pending.update(dict.fromkeys(ids, redact(why)))
            break
        sleep(max(0.0, min(params.batch_poll_s, deadline - clock())))
    return outcome


def _too_large(batch_id: str, exc: VendorError) -> str:
    """Why a batch whose answers are over ``batch_max_file_bytes`` is left open: downloaded
    once per run, never again at every poll, never resubmitted (its answers were paid for)."""
    return (
        redact(
            f"vendor batch {batch_id} ended, its answers are not read ({exc}): raise "
            "batch_max_file_bytes and run again (the batch is kept, never resubmitted)"
        )
        or ""
    )


def _look_up(
    vendor: Vendor, tag: str, ids: list[str], exc: VendorError, outcome: BatchOutcome
) -> str | None:
    """After a create that may have reached the vendor (``exc.uncertain``): the batch of
    ``tag`` at the vendor, or None. It is never sent again blind: when the vendor lists no
    batch of that tag (or the listing fails) the ids are left ``pending`` with the intent
    still open, and the next run looks the tag up again before it sends anything."""
    try:
        found = vendor.find(tag)
    except VendorError as lookup:
        found, why = None, f"looking it up failed too ({lookup})"
    else:
        why = f"the vendor lists no batch tagged {tag} yet"
    if found is not None:
        return found
    reason = redact(
        f"batch create may have reached the vendor ({exc}); {why}: not sent again, the next "
        "run looks it up by its tag before sending it"
    )
    outcome.pending.update(dict.fromkeys(ids, reason))
    return None


def _final_answers(
    vendor: Vendor, batch_id: str, poll: BatchPoll, ids: list[str]
) -> tuple[dict[str, BatchAnswer], dict[str, str]]:
    """The final answers (2xx or a non-retryable status) an ended batch holds for ``ids``, and
    the ids it answered twice with different answers (id -> why): neither answer of such an
    id is kept, since nothing says which is the vendor's (the same answer twice is one)."""
    mine = set(ids)
    final: dict[str, BatchAnswer] = {}
    other: dict[str, BatchAnswer] = {}  # the answers not final (errors: small)
    twice: dict[str, str] = {}
    if poll.state != "not found":
        for answer in vendor.results(batch_id, poll):
            cid = answer.custom_id
            if cid not in mine:
                continue
            before = final.get(cid) or other.get(cid)
            if before is not None and before != answer:
                twice[cid] = redact(
                    f"vendor batch {batch_id} answered {cid} twice with different answers "
                    f"({before.describe()[:80]} / {answer.describe()[:80]}): neither is kept"
                )
            (final if answer.final else other)[cid] = answer
    for cid in twice:
        final.pop(cid, None)
    return final, twice
