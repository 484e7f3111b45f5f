"""Gemini's batch mode with inlined requests and responses.

- submit: ``POST /models/{model}:batchGenerateContent`` ``{"batch": {"display_name": tag,
  "input_config": {"requests": {"requests": [{"request": GenerateContentRequest,
  "metadata": {"key": custom_id}}, ...]}}}}`` (inlined requests: at most 20 MB in all);
  the answer names the batch ``batches/{id}``;
- poll: ``GET /batches/{id}``: ``metadata.state`` ``BATCH_STATE_PENDING`` / ``RUNNING``, or
  ``SUCCEEDED`` / ``FAILED`` / ``CANCELLED`` / ``EXPIRED`` (ended; ``JOB_STATE_*`` read alike);
- results: ``response.inlinedResponses.inlinedResponses[]``: ``{"metadata": {"key"},
  "response": GenerateContentResponse}`` or ``{"metadata", "error": {"code", "message"}}``;
- cancel: ``POST /batches/{id}:cancel``;
- find (after a kill between create and record): ``GET /batches`` pages, by display name.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx

from implicit_bench._util.jsonparse import loads_strict
from implicit_bench._util.redact import redact
from implicit_bench.backends.vendor_batch.base import BatchAnswer, BatchPoll, VendorError
from implicit_bench.runtime.httpretry import RetryPolicy, send

ENDED = ("SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED")
MAX_INLINE_BYTES = 20_000_000  # Gemini: inlined requests of one batch, in all


class GeminiBatches:
    name = "gemini"
    max_bytes = MAX_INLINE_BYTES - (1 << 20)  # the envelope's margin

    def __init__(self, client: httpx.Client, policy: RetryPolicy, model: str, max_file_bytes: int):
        self.client = client  # base_url = the API root (.../v1beta), key in x-goog-api-key
        self.policy = policy
        self.model = model
        self.poll_policy = replace(policy, max_response_bytes=max_file_bytes)  # inlined answers

    def _call(self, method: str, path: str, policy: RetryPolicy | None = None, **kw: Any) -> Any:
        result = send(self.client, method, path, policy or self.policy, **kw)
        if not result.ok:
            raise VendorError.of(f"{method} {path}: {result.error}", result)
        try:
            payload = loads_strict(result.response.content)
        except ValueError:
            raise VendorError(
                redact(f"unreadable answer: {result.response.text[:200]!r}")
            ) from None
        if not isinstance(payload, dict):
            raise VendorError(f"answer is {type(payload).__name__}, not an object")
        return payload

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"request": body, "metadata": {"key": custom_id}}

    def submit(self, lines: list[dict[str, Any]], tag: str) -> str:
        body = {
            "batch": {
                "display_name": tag,
                "input_config": {"requests": {"requests": lines}},
            }
        }
        answer = self._call(  # billed: a create that timed out is looked up, not re-sent
            "POST", f"/models/{self.model}:batchGenerateContent", idempotent=False, json=body
        )
        name = answer.get("name")
        if not isinstance(name, str) or not name.startswith("batches/"):
            raise VendorError(f"batch create answered no batches/ name: {str(answer)[:200]}")
        return name

    def poll(self, batch_id: str) -> BatchPoll:
        answer = self._call("GET", f"/{batch_id}", policy=self.poll_policy)
        meta = answer.get("metadata") if isinstance(answer.get("metadata"), dict) else {}
        state = str(meta.get("state") or answer.get("state") or "unknown")
        ended = state.upper().endswith(ENDED) or bool(answer.get("done"))
        failed = None
        if state.upper().endswith("FAILED"):
            error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
            failed = str(error.get("message") or "no reason given")
        return BatchPoll(state, ended, answer, failed)

    def results(self, batch_id: str, poll: BatchPoll) -> Iterator[BatchAnswer]:
        for item in inlined(poll.info if isinstance(poll.info, dict) else {}):
            meta = item.get("metadata")
            key = meta.get("key") if isinstance(meta, dict) else None
            if not isinstance(key, str):
                continue  # an answer is only ever mapped back by the key sent with it
            if isinstance(item.get("response"), dict):
                yield BatchAnswer(key, 200, item["response"])
                continue
            error = item.get("error") if isinstance(item.get("error"), dict) else {}
            code = error.get("code")
            reason = redact(
                f"{error.get('status') or ''}: {error.get('message') or ''}".strip(": ")
            )
            status = code if isinstance(code, int) and 100 <= code < 600 else None
            body = {"error": error} if error else None
            yield BatchAnswer(key, status, body, reason or "no response in the batch")

    def cancel(self, batch_id: str) -> None:
        self._call("POST", f"/{batch_id}:cancel")

    def find(self, tag: str, max_pages: int = 20) -> str | None:
        """The batch whose display name is ``tag`` (``GET /batches``, at most ``max_pages``
        pages); None when there is none."""
        token: str | None = None
        for _ in range(max_pages):
            params = {"pageSize": 100, **({"pageToken": token} if token else {})}
            page = self._call("GET", "/batches", params=params)
            found = page.get("operations") or page.get("batches") or []
            for op in found if isinstance(found, list) else []:
                meta = op.get("metadata") if isinstance(op, dict) else None
                name = (meta or {}).get("displayName") or (meta or {}).get("display_name")
                if name == tag and isinstance(op.get("name"), str):
                    return op["name"]
            token = page.get("nextPageToken")
            if not token:
                return None
        return None


def inlined(operation: dict[str, Any]) -> list[dict[str, Any]]:
    """The inlined responses of a batch operation, in either nesting the API uses."""
    response = operation.get("response") if isinstance(operation.get("response"), dict) else {}
    # raw: the vendor's JSON answer, not params
    for holder in (response, response.get("output") or {}, operation.get("output") or {}):
        if not isinstance(holder, dict):
            continue
        found = holder.get("inlinedResponses")
        if isinstance(found, dict):
            found = found.get("inlinedResponses")
        if isinstance(found, list):
            return [item for item in found if isinstance(item, dict)]
    return []
