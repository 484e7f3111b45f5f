"""On-disk cache of model calls, keyed by a hash of everything that determines the answer.

SQLite in WAL mode: each ``put`` is committed at once, so a killed stage loses nothing
that it finished, and several worker processes can share one cache file.

Every model call site goes through one pattern, written once here: ``model_key`` names a call
(what is asked, the model's identity dict, the inputs), ``cached_map`` looks every key up,
computes the missing ones batch by batch and stores each batch at once, returning the values
in the items' order with hit / miss counts; ``CacheLookup`` is its first half, for a caller
that computes asynchronously (the judge stage's executor) and stores in its own callback.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from implicit_bench._util.hashing import stable_hash
from implicit_bench._util.streaming import stream_map
from implicit_bench.errors import InputError
from implicit_bench.runtime.cache_location import resolve as resolve_cache_path

T = TypeVar("T")
V = TypeVar("V")


def cache_key(**parts: Any) -> str:
    """The key of a call: hash of all its determining parts (backend,
    model, prompt, decoding...)."""
    return stable_hash(parts)


def model_key(kind: str, model: Mapping[str, Any], **inputs: Any) -> str:
    """The cache key of one model call, the one way every cache names a model.

    ``kind`` says what is asked (``llm``, ``judge``, ``embedding``, ``clip_image``, ``faces``...);
    ``model`` is the model's identity as its backend reports it (``identity()``: a dict with
    ``backend``, the model reference or a content hash of a local model, revision, dtype and
    whatever else changes the answers; never a secret); ``inputs`` are everything else that
    determines the answer (messages, prompt, image sha256, text, decoding).
    """
    if "backend" not in model:
        raise ValueError(f"a model identity names its backend: {dict(model)}")
    return cache_key(kind=kind, model=dict(model), **inputs)


def _decoded(value: str) -> tuple[bool, Any]:
    """``(True, value)`` for a stored JSON text; ``(False, None)`` for one that is not JSON
    (a damaged entry is a miss, computed again and overwritten, never an abort)."""
    try:
        return True, json.loads(value)
    except (TypeError, ValueError):
        return False, None


# SQLite result codes (sqlite3.Error.sqlite_errorcode, primary code in the low byte)
SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_FULL = 5, 6, 8, 13
SQLITE_CORRUPT, SQLITE_NOTADB = 11, 26


def _cause(exc: sqlite3.Error) -> str:
    """What an SQLite error means for the user: full, read-only, locked, damaged or other."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    text = str(exc).lower()
    if code == SQLITE_FULL or "disk is full" in text:
        return "full"
    if code == SQLITE_READONLY or "readonly" in text or "read-only" in text:
        return "read-only"
    if code in (SQLITE_BUSY, SQLITE_LOCKED) or "locked" in text or "busy" in text:
        return "locked"
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB) or "not a database" in text or "malformed" in text:
        return "damaged"
    return "other"


class DiskCache:
    """A persistent ``key -> JSON value`` map. An SQLite error is an ``InputError`` naming the
    file and what happened (disk full, read-only, locked by another process, damaged), with the
    advice for that cause; an entry that is not JSON is a miss.

    Answers that cannot be stored (disk full, read-only, locked past ``busy_timeout_s``) are
    never lost: they are appended to a pending journal (``NAME.pending.jsonl`` next to the
    cache, else in the temporary directory) that the next ``DiskCache`` of that file stores
    first (docs/errors.md, "Caches").

    ``path`` is resolved by :func:`implicit_bench.runtime.cache_location.resolve`: ``cache/NAME``
    lives in the repository's one cache directory, shared by every workspace (docs/experiments.md).
    """

    busy_timeout_s: float = 60.0  # a writer waits this long for another process's lock

    def __init__(self, path: str | Path):
        self.path = resolve_cache_path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._named(), self._conn() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
        self.hits = 0
        self.misses = 0
        self._store_pending()

    def pending_paths(self) -> list[Path]:
        """Where answers that could not be stored are journalled (first writable wins)."""
        digest = stable_hash({"cache": str(self.path)})[:16]
        return [
            self.path.with_name(self.path.name + ".pending.jsonl"),
            Path(tempfile.gettempdir()) / f"implicit-bench-pending-{digest}.jsonl",
        ]

    def _store_pending(self) -> None:
        """Store the answers an earlier run journalled, then remove the journal."""
        for journal in self.pending_paths():
            if not journal.exists():
                continue
            items = []
            for line in journal.read_text(encoding="utf-8").splitlines():
                try:
                    key, value = json.loads(line)
                except (ValueError, TypeError):
                    continue  # a line cut short by a kill: that answer is asked again
                items.append((str(key), value))
            with self._named():
                self._put_many(items)
            journal.unlink()

    def _journal(self, items: list[tuple[str, Any]]) -> Path | None:
        """Append ``items`` to the first writable pending journal; None when none is."""
        lines = "".join(json.dumps([k, v], ensure_ascii=False) + "\n" for k, v in items)
        for journal in self.pending_paths():
            try:
                with open(journal, "a", encoding="utf-8") as fh:
                    fh.write(lines)
                return journal
            except OSError:
                continue
        return None

    @contextlib.contextmanager
    def _named(self, unstored: list[tuple[str, Any]] | None = None) -> Iterator[None]:
        """SQLite's errors named and explained by cause; ``unstored``: the items of a failed
        write, journalled so that the next run stores them."""
        try:
            yield
        except sqlite3.Error as exc:
            cause = _cause(exc)
            if cause == "damaged" or (cause == "other" and not unstored):
                reason = (
                    f"cache file unreadable ({exc}): move it aside (or delete it and its "
                    "-wal/-shm files); it only saves model answers, which the next run asks again"
                )
                raise InputError(self.path, None, None, reason) from None
            kept = ""
            if unstored:
                journal = self._journal(unstored)
                kept = (
                    f"; the {len(unstored)} answers not stored are kept in {journal} and stored "
                    "by the next run"
                    if journal is not None
                    else f"; {len(unstored)} answers could not be kept anywhere"
                )
            advice = {
                "full": "the disk is full: free space (or point base.cache_dir / "
                "IMPLICIT_BENCH_CACHE_DIR at another disk) and run again; the cached answers "
                "are intact",
                "read-only": "the cache file (or its folder) is read-only: make it writable, or "
                "point base.cache_dir / IMPLICIT_BENCH_CACHE_DIR elsewhere; the cached answers "
                "are intact",
                "locked": f"another process held the cache's write lock for over "
                f"{self.busy_timeout_s:g} s: let it finish and run again",
                "other": "the cached answers are intact",
            }[cause]
            what = "write" if unstored is not None else "read"
            reason = f"cache {what} failed ({exc}): {advice}{kept}"
            raise InputError(self.path, None, None, reason) from None

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> Any | None:
        with self._named():
            row = self._conn().execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
        ok, value = _decoded(row[0]) if row is not None else (False, None)
        if not ok:
            self.misses += 1
            return None
        self.hits += 1
        return value

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        keys = list(keys)
        found: dict[str, Any] = {}
        with self._named():
            conn = self._conn()
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, value FROM entries WHERE key IN ({marks})", chunk
                ).fetchall()
                for k, v in rows:
                    ok, value = _decoded(v)
                    if ok:
                        found[k] = value
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put(self, key: str, value: Any) -> None:
        self.put_many([(key, value)])

    def put_many(self, items: Iterable[tuple[str, Any]]) -> None:
        items = list(items)
        with self._named(unstored=items):
            self._put_many(items)

    def _put_many(self, items: Iterable[tuple[str, Any]]) -> None:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")  # take the write lock now: two writers wait, never deadlock
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO entries (key, value) VALUES (?, ?)",
                ((k, json.dumps(v, ensure_ascii=False)) for k, v in items),
            )
            conn.execute("COMMIT")
        except BaseException:
            # SQLite may have rolled back already (a full disk): the first error is the news
            with contextlib.suppress(sqlite3.Error):
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


class CacheLookup:
    """Every distinct key looked up once: ``found`` (key -> decoded value), ``missing`` (the
    distinct keys not found, first-seen order), ``hits`` / ``misses`` (distinct keys).

    ``decode(entry)`` turns a stored JSON entry into a value; None marks an entry that is not
    usable (written by an older version) and is computed again. ``cache`` None: nothing cached.
    """

    def __init__(
        self,
        cache: DiskCache | None,
        keys: Iterable[str],
        decode: Callable[[Any], Any] | None = None,
    ):
        self.cache = cache
        distinct = list(dict.fromkeys(keys))
        stored = cache.get_many(distinct) if cache is not None and distinct else {}
        self.found: dict[str, Any] = {}
        for key in distinct:
            if key in stored:
                value = stored[key] if decode is None else decode(stored[key])
                if value is not None:
                    self.found[key] = value
        self.missing = [k for k in distinct if k not in self.found]
        self.hits = len(self.found)
        self.misses = len(self.missing)

    def store(self, entries: Iterable[tuple[str, Any]]) -> None:
        """Write ``(key, JSON entry)`` pairs at once (one transaction); None entries are skipped."""
        fresh = [(k, v) for k, v in entries if v is not None]
        if self.cache is not None and fresh:
            self.cache.put_many(fresh)


@dataclass
class Cached(Generic[V]):
    """What ``cached_map`` returns: one value per item, in the items' order."""

    values: list[V]
    keys: list[str]  # each item's cache key
    cached: list[bool]  # whether each item's value came from the cache
    hits: int  # distinct keys answered by the cache
    misses: int  # distinct keys computed (identical items are computed once)
    batches: int  # calls of ``compute``


def cached_map(
    cache: DiskCache | None,
    items: Iterable[T],
    key: Callable[[T], str],
    compute: Callable[[list[T]], Sequence[V]],
    *,
    batch_size: int | None = None,
    encode: Callable[[T, V], Any] | None = None,
    decode: Callable[[Any], V | None] | None = None,
    on_missing: Callable[[int], None] | None = None,
    concurrency: int = 1,
) -> Cached[V]:
    """Look every item's key up; compute the missing ones; store them; values in order.

    ``compute(batch)`` gets up to ``batch_size`` distinct missing items (None: all at once) and
    returns one value per item; each batch is stored as soon as it is computed, so a killed run
    keeps what it finished. ``encode(item, value)`` is the JSON stored (default: the value;
    None: not stored, e.g. a failed call), ``decode(entry)`` the value read back (default: the
    entry; None: unusable, computed again). ``on_missing(n)`` is told the number of distinct
    misses before the first batch (a progress bar's total). ``concurrency`` > 1 streams the
    batches (:mod:`implicit_bench._util.streaming`): that many ``compute`` calls in flight in
    threads, each batch stored in this thread as soon as it is done; an exception of ``compute`` is
    raised once the calls in flight are stored.
    """
    items = list(items)
    keys = [key(item) for item in items]
    lookup = CacheLookup(cache, keys, decode)
    first: dict[str, T] = {}
    for item, k in zip(items, keys, strict=True):
        first.setdefault(k, item)
    if on_missing is not None:
        on_missing(lookup.misses)
    computed: dict[str, V] = {}
    size = batch_size or max(1, lookup.misses)
    batches = 0
    failures: list[BaseException] = []

    def done(chunk_keys: list[str], values: Any, error: BaseException | None) -> None:
        nonlocal batches
        if error is not None:
            failures.append(error)
            return
        values = list(values)
        chunk = [first[k] for k in chunk_keys]
        batches += 1
        if len(values) != len(chunk):
            failures.append(
                RuntimeError(f"compute returned {len(values)} values for {len(chunk)} items")
            )
            return
        computed.update(zip(chunk_keys, values, strict=True))
        lookup.store(
            (k, v if encode is None else encode(item, v))
            for k, item, v in zip(chunk_keys, chunk, values, strict=True)
        )

    chunks = (lookup.missing[start : start + size] for start in range(0, lookup.misses, size))
    if concurrency <= 1:  # sequential: stop at the first failure, as before
        for chunk_keys in chunks:
            done(chunk_keys, compute([first[k] for k in chunk_keys]), None)
            if failures:
                raise failures[0]
    else:
        stream_map(chunks, lambda keys: compute([first[k] for k in keys]), concurrency, done)
        if failures:
            raise failures[0]
    values_out = [lookup.found[k] if k in lookup.found else computed[k] for k in keys]
    return Cached(
        values_out, keys, [k in lookup.found for k in keys], lookup.hits, lookup.misses, batches
    )
