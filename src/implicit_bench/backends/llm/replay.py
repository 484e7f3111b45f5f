"""Backend ``replay``: answers recorded in a JSONL file, keyed by request hash.

File format: one JSON object per line with at least

    {"request_hash": "<64 hex>", "text": "<the answer>"}

where ``request_hash = implicit_bench.backends.llm.request_hash(messages)`` (sha256 of the
canonical JSON
``{"messages": [...]}``: sorted keys, no whitespace). Other keys (``messages``, ``model``,
``backend``...) are allowed and ignored. Write one from any run's cache with
``implicit-bench llm export-replay``. A request with no recorded answer is an error that names
the file and the hash; decoding parameters are properties of the recording, not of the replay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from implicit_bench._util.hashing import sha256_file
from implicit_bench.backends.llm.base import LLMClient, LLMParams, Messages, request_hash
from implicit_bench.errors import InputError


class ReplayParams(LLMParams):
    backend: Literal["replay"] = "replay"
    model: str = "replay"
    path: str


def load_replay(path: str | Path) -> dict[str, str]:
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, None, "replay file not found")
    answers: dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        for row, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, row, None, f"not JSON: {exc.msg}") from None
            if not isinstance(record, dict):
                raise InputError(path, row, None, "expected a JSON object")
            for field in ("request_hash", "text"):
                if not isinstance(record.get(field), str):
                    raise InputError(path, row, field, "missing or not a string")
            answers[record["request_hash"]] = record["text"]
    return answers


class ReplayClient(LLMClient):
    backend = "replay"
    Params = ReplayParams

    def __init__(self, params: ReplayParams):
        super().__init__(params)
        self.params: ReplayParams = params
        self._answers = load_replay(params.path)
        self._sha = sha256_file(params.path)

    def identity(self) -> dict[str, Any]:
        return {"model": self.params.model, "replay_sha256": self._sha}

    def _generate(self, batch: list[Messages], max_tokens: int) -> list[tuple[str, str | None]]:
        out = []
        for messages in batch:
            rhash = request_hash(messages)
            if rhash not in self._answers:
                first = messages[-1]["content"][:80].replace("\n", " ")
                raise InputError(
                    self.params.path,
                    None,
                    "request_hash",
                    f"no recorded answer for request {rhash} (last message starts {first!r})",
                )
            out.append((self._answers[rhash], None))
        return out


def export_replay(cache_path: str | Path, out_path: str | Path) -> int:
    """Write every answer in an LLM cache as replay JSONL (sorted by request hash)."""
    from implicit_bench._util.files import write_jsonl
    from implicit_bench.runtime.cache import DiskCache

    cache = DiskCache(cache_path)
    rows = {}
    for key in cache.keys():  # noqa: SIM118 (DiskCache is not iterable)
        value = cache.get(key)
        if isinstance(value, dict) and "request_hash" in value and "text" in value:
            rows[value["request_hash"]] = {
                "request_hash": value["request_hash"],
                "text": value["text"],
                "backend": value.get("backend"),
                "model": value.get("model"),
            }
    return write_jsonl(out_path, [rows[k] for k in sorted(rows)])
