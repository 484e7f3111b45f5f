"""The OpenAI Batch API (and servers that speak it): Files upload, batch create / retrieve /
cancel, output and error files.

- submit: ``POST /files`` (multipart, ``purpose=batch``) with the JSONL request file, one line
  ``{"custom_id", "method": "POST", "url": endpoint, "body"}`` per request, then
  ``POST /batches`` ``{"input_file_id", "endpoint", "completion_window": "24h",
  "metadata": {"implicit_bench": tag}}``;
- poll: ``GET /batches/{id}``: ``status`` validating / in_progress / finalizing / cancelling
  (running) or completed / expired / failed / cancelled (ended);
- results: ``GET /files/{output_file_id}/content`` and ``GET /files/{error_file_id}/content``,
  one JSON line per request: ``{"custom_id", "response": {"status_code", "body"}, "error"}``;
- cancel: ``POST /batches/{id}/cancel``;
- find (after a kill between create and record): ``GET /batches`` pages, by ``metadata``.

Every request goes through :func:`implicit_bench.runtime.httpretry.send` (the one retry policy).
"""

from __future__ import annotations

import json
import secrets
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, BinaryIO

import httpx

from implicit_bench._util.jsonparse import loads_strict
from implicit_bench._util.redact import redact
from implicit_bench.backends.vendor_batch.base import BatchAnswer, BatchPoll, VendorError
from implicit_bench.runtime.httpretry import RetryPolicy, send

ENDED = frozenset({"completed", "expired", "failed", "cancelled"})
MAX_FILE_BYTES = 200_000_000  # OpenAI: a request file holds at most 200 MB


class OpenAIBatches:
    """One endpoint (``/v1/chat/completions``, ``/v1/images/generations``) of one API root."""

    name = "openai"
    max_bytes = MAX_FILE_BYTES

    def __init__(
        self,
        client: httpx.Client,
        policy: RetryPolicy,
        endpoint: str,
        max_file_bytes: int,
        headers: dict[str, str] | None = None,
    ):
        self.client = client  # base_url = the API root (https://api.openai.com/v1)
        self.policy = policy
        self.endpoint = endpoint
        self.headers = headers or {}
        self.download_policy = replace(policy, max_response_bytes=max_file_bytes)

    def _call(self, method: str, path: str, policy: RetryPolicy | None = None, **kw: Any) -> Any:
        kw["headers"] = {**self.headers, **(kw.get("headers") or {})}  # raw: requests kwargs
        result = send(self.client, method, path, policy or self.policy, **kw)
        if not result.ok:
            raise VendorError.of(f"{method} {path}: {result.error}", result)
        return result.response

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        try:
            payload = loads_strict(response.content)
        except ValueError:
            raise VendorError(redact(f"unreadable answer: {response.text[:200]!r}")) from None
        if not isinstance(payload, dict):
            raise VendorError(f"answer is {type(payload).__name__}, not an object")
        return payload

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": custom_id, "method": "POST", "url": self.endpoint, "body": body}

    def submit(self, lines: list[dict[str, Any]], tag: str) -> str:
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        boundary = secrets.token_hex(16)  # httpx keeps an explicit multipart boundary
        upload = self._json(
            self._call(
                "POST",
                "/files",
                data={"purpose": "batch"},
                files={"file": (f"{tag}.jsonl", data, "application/jsonl")},
                headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
            )
        )
        file_id = upload.get("id")
        if not isinstance(file_id, str) or not file_id:
            raise VendorError(f"file upload answered no id: {str(upload)[:200]}")
        batch = self._json(
            self._call(
                "POST",
                "/batches",
                idempotent=False,  # a batch is billed: a create that timed out is looked up
                json={
                    "input_file_id": file_id,
                    "endpoint": self.endpoint,
                    "completion_window": "24h",
                    "metadata": {"implicit_bench": tag},
                },
            )
        )
        batch_id = batch.get("id")
        if not isinstance(batch_id, str) or not batch_id:
            raise VendorError(f"batch create answered no id: {str(batch)[:200]}")
        return batch_id

    def poll(self, batch_id: str) -> BatchPoll:
        batch = self._json(self._call("GET", f"/batches/{batch_id}"))
        status = str(batch.get("status", "unknown"))
        failed = None
        if status == "failed":
            errors = batch.get("errors")
            data = errors.get("data") if isinstance(errors, dict) else None
            first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
            failed = f"{first.get('code') or ''}: {first.get('message') or 'no reason given'}"
        return BatchPoll(status, status in ENDED, batch, failed)

    def results(self, batch_id: str, poll: BatchPoll) -> Iterator[BatchAnswer]:
        info = poll.info if isinstance(poll.info, dict) else {}
        for key in ("output_file_id", "error_file_id"):
            file_id = info.get(key)
            if not isinstance(file_id, str) or not file_id:
                continue
            with tempfile.TemporaryFile() as body:  # on disk, read back line by line
                self._call(
                    "GET", f"/files/{file_id}/content", policy=self.download_policy, sink=body
                )
                body.seek(0)
                for raw in lines(body, self.policy.max_response_bytes):
                    answer = parse_line(raw)
                    if answer is not None:
                        yield answer

    def cancel(self, batch_id: str) -> None:
        self._call("POST", f"/batches/{batch_id}/cancel")

    def find(self, tag: str, max_pages: int = 20) -> str | None:
        """The newest batch whose ``metadata.implicit_bench`` is ``tag`` (``GET /batches``,
        newest first, at most ``max_pages`` pages of 100); None when there is none."""
        after: str | None = None
        for _ in range(max_pages):
            params = {"limit": 100, **({"after": after} if after else {})}
            page = self._json(self._call("GET", "/batches", params=params))
            data = page.get("data") if isinstance(page.get("data"), list) else []
            for batch in data:
                meta = batch.get("metadata") if isinstance(batch, dict) else None
                if isinstance(meta, dict) and meta.get("implicit_bench") == tag:
                    return str(batch["id"])
            if not page.get("has_more") or not data:
                return None
            after = str(data[-1].get("id")) if isinstance(data[-1], dict) else None
        return None


def lines(body: BinaryIO, max_line_bytes: int) -> Iterator[bytes]:
    """The lines of an output / error file, one at a time. A line longer than
    ``max_line_bytes`` (the bound of one synchronous answer, ``max_response_bytes``) is
    skipped to its end, never held whole: its request is unanswered (asked again item by
    item)."""
    while raw := body.readline(max_line_bytes + 1):
        if len(raw) <= max_line_bytes or raw.endswith(b"\n"):
            yield raw
            continue
        while (rest := body.readline(max_line_bytes + 1)) and not rest.endswith(b"\n"):
            pass  # the rest of the long line


def parse_line(raw: bytes) -> BatchAnswer | None:
    """One output / error file line; None for a blank or unreadable line (its request is then
    unanswered: asked again item by item)."""
    if not raw.strip():
        return None
    try:
        line = loads_strict(raw)
    except ValueError:
        return None
    if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
        return None
    response = line.get("response")
    error = line.get("error")
    reason = None
    if isinstance(error, dict):
        reason = redact(f"{error.get('code') or ''}: {error.get('message') or ''}".strip(": "))
    elif error:
        reason = redact(str(error)[:300])
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        return BatchAnswer(line["custom_id"], response["status_code"], response.get("body"), reason)
    return BatchAnswer(line["custom_id"], None, None, reason or "no response in the batch")
