"""Stable content hashes for cache keys, item ids and per-item seeds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: equal objects give equal strings."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def stable_hash(obj: Any, length: int = 64) -> str:
    """sha256 hex digest of the canonical JSON of ``obj`` (truncated to ``length``)."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:length]


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def derive_seed(*parts: Any, bits: int = 63) -> int:
    """A deterministic integer seed derived from item ids (order independent of processing)."""
    digest = hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << bits) - 1)


def derive_seeds(prefix: Any, ids: Iterable[str], bits: int = 63) -> list[int]:
    """``[derive_seed(prefix, i) for i in ids]`` for string ids, without a JSON encoder run per
    id: the canonical JSON of ``[prefix, id]`` is the prefix's part and the id's JSON string
    (the same bytes; ``tests/test_hashing.py``)."""
    head = canonical_json([prefix])[:-1] + ","
    encode = json.JSONEncoder(ensure_ascii=False).encode
    mask = (1 << bits) - 1
    sha = hashlib.sha256
    return [
        int.from_bytes(sha((head + encode(i) + "]").encode("utf-8")).digest()[:8], "big") & mask
        for i in ids
    ]
