"""The vendor batch endpoints, plugged into tests/helpers/chat_server.py's ChatServer.

OpenAI: ``POST /v1/files`` (multipart, purpose=batch), ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``, ``GET /v1/files/{id}/content``
(output file: the 2xx lines; error file: the other statuses and the error-only lines).
Gemini: ``POST /v1beta/models/{model}:batchGenerateContent`` (inlined requests),
``GET /v1beta/batches/{id}``, ``POST /v1beta/batches/{id}:cancel`` (inlined responses).
Both list their batches (``GET /v1/batches``, ``GET /v1beta/batches``).

Each request line is answered by the server's own ``answer(body, n)`` when the batch runs.
A batch stays running while ``hold`` is set (``polls_seen`` counts the polls), then ends at
the next poll: ``completed`` / ``BATCH_STATE_SUCCEEDED``, or ``expired`` when ``expire_after``
is set (only that many lines answered, the others ``batch_expired`` errors). ``fault(id)``
may turn one line into an error-only line (``"error"``), drop it (``"drop"``) or leave it.
``create_delay_s``: a batch create registers the batch at once but answers that much later (a
slow ``POST /batches``: the client may give up on a batch that exists and is billed).
"""

from __future__ import annotations

import email.parser
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

Result = tuple[int, Any]


class BatchEmulator:
    def __init__(
        self,
        hold: bool = False,
        expire_after: int | None = None,
        fault: Callable[[str], str | None] | None = None,
        refuse: bool = False,
        create_delay_s: float = 0.0,
    ):
        self.create_delay_s = create_delay_s
        self.refuse = refuse  # the next batch fails validation as a whole
        self.hold = threading.Event()
        if hold:
            self.hold.set()
        self.expire_after = expire_after
        self.fault = fault or (lambda custom_id: None)
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.calls: Counter[str] = Counter()  # "POST /v1/batches", "poll", "cancel", ...
        self.polled = threading.Event()  # set at the first poll of a running batch
        self.lines_answered = 0
        self._lock = threading.Lock()

    @staticmethod
    def owns(path: str) -> bool:
        return path.startswith(("/v1/files", "/v1/batches", "/v1beta/batches")) or (
            ":batchGenerateContent" in path
        )

    def handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, server: Any
    ) -> Result | None:
        if not self.owns(path):
            return None
        with self._lock:
            result = self._route(method, path.split("?")[0], headers, raw, server)
        creates = method == "POST" and (
            path.split("?")[0] == "/v1/batches" or ":batchGenerateContent" in path
        )
        if creates and self.create_delay_s:
            time.sleep(self.create_delay_s)  # created already; the answer comes late
        return result

    # ----- routing -------------------------------------------------------------------------
    def _route(self, method: str, path: str, headers: dict[str, str], raw: bytes, server: Any):
        if method == "POST" and path == "/v1/files":
            self.calls["POST /v1/files"] += 1
            return self._upload(headers, raw)
        if method == "GET" and path == "/v1/batches":  # newest first, one page
            views = [self._openai_view(b) for b in self.batches.values() if b["kind"] == "openai"]
            return 200, {"object": "list", "data": views[::-1], "has_more": False}
        if method == "GET" and path == "/v1beta/batches":
            ops = [self._gemini_view(b) for b in self.batches.values() if b["kind"] == "gemini"]
            return 200, {"operations": ops}
        if method == "POST" and path == "/v1/batches":
            self.calls["POST /v1/batches"] += 1
            return self._create_openai(json.loads(raw))
        if m := re.fullmatch(r"/v1/files/([\w-]+)/content", path):
            if m.group(1) not in self.files:
                return 404, {"error": {"message": "no such file"}}
            return 200, self.files[m.group(1)]
        if m := re.fullmatch(r"/v1/batches/([\w-]+)(/cancel)?", path):
            batch = self.batches.get(m.group(1))
            if batch is None:
                return 404, {"error": {"message": "no such batch"}}
            if m.group(2):
                self.calls["cancel"] += 1
                batch["cancel"] = True
            else:
                self.calls["poll"] += 1
            self._advance(batch, server)
            return 200, self._openai_view(batch)
        if m := re.fullmatch(r"/v1beta/models/([^/:]+):batchGenerateContent", path):
            self.calls["POST batchGenerateContent"] += 1
            return self._create_gemini(m.group(1), json.loads(raw))
        if m := re.fullmatch(r"/v1beta/(batches/[\w-]+)(:cancel)?", path):
            batch = self.batches.get(m.group(1))
            if batch is None:
                return 404, {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}
            if m.group(2):
                self.calls["cancel"] += 1
                batch["cancel"] = True
            else:
                self.calls["poll"] += 1
            self._advance(batch, server)
            return 200, self._gemini_view(batch)
        return 404, {"error": {"message": f"no route {method} {path}"}}

    # ----- OpenAI ----------------------------------------------------------------------------
    def _upload(self, headers: dict[str, str], raw: bytes) -> Result:
        ctype = next(v for k, v in headers.items() if k.lower() == "content-type")
        message = email.parser.BytesParser().parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw
        )
        fields = {
            part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
            for part in message.get_payload()
        }
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return 400, {"error": {"message": "purpose=batch and a file are required"}}
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = fields["file"]
        return 200, {"id": file_id, "object": "file", "purpose": "batch"}

    def _create_openai(self, body: dict[str, Any]) -> Result:
        data = self.files.get(body.get("input_file_id"))
        if data is None or body.get("completion_window") != "24h":
            return 400, {"error": {"message": "bad input_file_id or completion_window"}}
        lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        if any(line["url"] != body["endpoint"] for line in lines):
            return 400, {"error": {"message": "a line's url is not the batch endpoint"}}
        batch_id = f"batch_{len(self.batches) + 1}"
        self.batches[batch_id] = {
            "id": batch_id,
            "kind": "openai",
            "status": "in_progress",
            "requests": [(line["custom_id"], line["body"]) for line in lines],
            "metadata": body.get("metadata"),
        }
        return 200, self._openai_view(self.batches[batch_id])

    def _openai_view(self, batch: dict[str, Any]) -> dict[str, Any]:
        view = {
            "id": batch["id"],
            "object": "batch",
            "status": batch["status"],
            "metadata": batch["metadata"],
            "output_file_id": batch.get("output_file_id"),
            "error_file_id": batch.get("error_file_id"),
            "errors": batch.get("errors"),
        }
        return view

    # ----- Gemini ----------------------------------------------------------------------------
    def _create_gemini(self, model: str, body: dict[str, Any]) -> Result:
        batch = body["batch"]
        items = batch["input_config"]["requests"]["requests"]
        name = f"batches/g{len(self.batches) + 1}"
        self.batches[name] = {
            "id": name,
            "kind": "gemini",
            "model": model,
            "status": "BATCH_STATE_PENDING",
            "requests": [(item["metadata"]["key"], item["request"]) for item in items],
            "display_name": batch.get("display_name"),
        }
        return 200, self._gemini_view(self.batches[name])

    def _gemini_view(self, batch: dict[str, Any]) -> dict[str, Any]:
        view: dict[str, Any] = {
            "name": batch["id"],
            "metadata": {"state": batch["status"], "displayName": batch["display_name"]},
            "done": "answers" in batch,
        }
        if "error" in batch:
            view["error"] = batch["error"]
        if isinstance(batch.get("answers"), list):
            view["response"] = {"inlinedResponses": {"inlinedResponses": batch["answers"]}}
        return view

    # ----- running a batch -------------------------------------------------------------------
    def _advance(self, batch: dict[str, Any], server: Any) -> None:
        """A running batch stays running while ``hold`` is set (unless cancelled), else ends."""
        if "answers" in batch:
            return
        if self.refuse:
            self.refuse = False
            batch["answers"] = True
            if batch["kind"] == "openai":
                batch["status"] = "failed"
                error = {"code": "invalid_request", "message": "model not available in batch"}
                batch["errors"] = {"object": "list", "data": [error]}
            else:
                batch["status"] = "BATCH_STATE_FAILED"
                batch["error"] = {"code": 400, "message": "model not available in batch"}
            return
        if self.hold.is_set() and not batch.get("cancel"):
            self.polled.set()
            batch["status"] = "in_progress" if batch["kind"] == "openai" else "BATCH_STATE_RUNNING"
            return
        answered, errors = [], []
        stop = None if not batch.get("cancel") else 0
        if self.expire_after is not None:
            stop = self.expire_after
        for i, (custom_id, body) in enumerate(batch["requests"]):
            if stop is not None and i >= stop:
                code = "batch_cancelled" if batch.get("cancel") else "batch_expired"
                errors.append((custom_id, None, code))
                continue
            fault = self.fault(custom_id)
            if fault == "drop":
                continue
            if fault == "error":
                errors.append((custom_id, None, "server_error"))
                continue
            self.lines_answered += 1
            status, payload = server.answer(body, self.lines_answered)
            answered.append((custom_id, status, payload))
        if batch["kind"] == "openai":
            self._finish_openai(batch, answered, errors)
        else:
            self._finish_gemini(batch, answered, errors)

    def _finish_openai(self, batch, answered, errors) -> None:
        out, err = [], []
        for custom_id, status, payload in answered:
            line = {
                "id": f"req-{custom_id[:8]}",
                "custom_id": custom_id,
                "response": {"status_code": status, "request_id": "r", "body": payload},
                "error": None,
            }
            (out if 200 <= status < 300 else err).append(line)
        for custom_id, _, code in errors:
            err.append(
                {
                    "id": f"req-{custom_id[:8]}",
                    "custom_id": custom_id,
                    "response": None,
                    "error": {"code": code, "message": f"{code} (emulated)"},
                }
            )
        for key, lines in (("output_file_id", out), ("error_file_id", err)):
            if lines:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                batch[key] = file_id
        batch["status"] = (
            "cancelled"
            if batch.get("cancel")
            else "expired"
            if self.expire_after is not None
            else "completed"
        )
        batch["answers"] = True

    def _finish_gemini(self, batch, answered, errors) -> None:
        items = []
        for custom_id, status, payload in answered:
            if 200 <= status < 300:
                items.append({"response": payload, "metadata": {"key": custom_id}})
            else:
                error = payload.get("error", {}) if isinstance(payload, dict) else {}
                items.append(
                    {
                        "error": {"code": status, "message": str(error.get("message", ""))},
                        "metadata": {"key": custom_id},
                    }
                )
        for custom_id, _, code in errors:
            items.append(
                {
                    "error": {"code": 500, "message": code, "status": "INTERNAL"},
                    "metadata": {"key": custom_id},
                }
            )
        batch["status"] = (
            "BATCH_STATE_CANCELLED"
            if batch.get("cancel")
            else "BATCH_STATE_EXPIRED"
            if self.expire_after is not None
            else "BATCH_STATE_SUCCEEDED"
        )
        batch["answers"] = items
