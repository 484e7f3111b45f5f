"""On-disk cache of model calls, keyed by a hash of everything that determines the answer.

SQLite in WAL mode: each ``put`` is committed at once, so a killed stage loses nothing
that it finished, and several worker processes can share one cache file.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from implicit_bench.hashing import stable_hash


def cache_key(**parts: Any) -> str:
    """The key of a call: hash of all its determining parts (backend, model, prompt, decoding...)."""
    return stable_hash(parts)


class DiskCache:
    """A persistent ``key -> JSON value`` map."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._conn() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
        self.hits = 0
        self.misses = 0

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> Any | None:
        row = self._conn().execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        keys = list(keys)
        found: dict[str, Any] = {}
        conn = self._conn()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT key, value FROM entries WHERE key IN ({marks})", chunk
            ).fetchall()
            found.update((k, json.loads(v)) for k, v in rows)
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put(self, key: str, value: Any) -> None:
        self._conn().execute(
            "INSERT OR REPLACE INTO entries (key, value) VALUES (?, ?)",
            (key, json.dumps(value, ensure_ascii=False)),
        )

    def put_many(self, items: Iterable[tuple[str, Any]]) -> None:
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO entries (key, value) VALUES (?, ?)",
                ((k, json.dumps(v, ensure_ascii=False)) for k, v in items),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def __contains__(self, key: str) -> bool:
        return (
            self._conn().execute("SELECT 1 FROM entries WHERE key = ?", (key,)).fetchone()
            is not None
        )

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM entries").fetchone()[0]

    def keys(self) -> Iterator[str]:
        for (key,) in self._conn().execute("SELECT key FROM entries"):
            yield key

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
