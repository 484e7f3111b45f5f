"""A cache that cannot store (disk full, read-only, locked) says what happened, names the file,
keeps the cached answers, and journals the answers just paid for so the next run stores them."""

from __future__ import annotations

import sqlite3

import pytest

from implicit_bench.errors import InputError
from implicit_bench.runtime.cache import DiskCache


def _cache(tmp_path, n: int = 12) -> DiskCache:
    cache = DiskCache(tmp_path / "c.sqlite")
    cache.put_many((f"k{i}", {"answer": i}) for i in range(n))
    return cache


def _paid(n: int = 14) -> list[tuple[str, dict]]:
    return [(f"new{i}", {"answer": "x" * 5000, "i": i}) for i in range(n)]


def _assert_recovered(tmp_path, cache: DiskCache, paid) -> None:
    cache.close()
    again = DiskCache(tmp_path / "c.sqlite")  # a fresh connection: no limit, no lock
    assert again.get_many([k for k, _ in paid]) == dict(paid)
    assert len(again.get_many([f"k{i}" for i in range(12)])) == 12  # nothing lost
    assert not any(p.exists() for p in again.pending_paths())  # journal stored, removed


def test_a_full_disk_is_named_and_the_paid_answers_are_kept(tmp_path):
    cache = _cache(tmp_path)
    conn = cache._conn()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")  # the file may not grow: SQLITE_FULL
    paid = _paid()
    with pytest.raises(InputError) as err:
        cache.put_many(paid)
    message = str(err.value)
    assert message.startswith(f"{cache.path}: cache write failed (database or disk is full)")
    assert "the disk is full" in message and "delete" not in message
    assert "the 14 answers not stored are kept in" in message and "\n" not in message
    _assert_recovered(tmp_path, cache, paid)


def test_a_read_only_cache_is_named_not_called_unreadable(tmp_path):
    cache = _cache(tmp_path)
    cache._conn().execute("PRAGMA query_only = 1")  # writes refused: SQLITE_READONLY
    paid = _paid(3)
    with pytest.raises(InputError) as err:
        cache.put(*paid[0])
    message = str(err.value)
    assert "read-only" in message and "unreadable" not in message and "delete" not in message
    _assert_recovered(tmp_path, cache, paid[:1])


def test_a_writer_locked_out_is_named_and_keeps_its_answers(tmp_path, monkeypatch):
    cache = _cache(tmp_path)
    monkeypatch.setattr(DiskCache, "busy_timeout_s", 0.2)
    cache.close()  # reconnect with the short timeout
    holder = sqlite3.connect(tmp_path / "c.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    paid = _paid(5)
    with pytest.raises(InputError) as err:
        cache.put_many(paid)
    message = str(err.value)
    assert message.startswith(f"{cache.path}: cache write failed (database is locked)")
    assert "held the cache's write lock for over 0.2 s" in message
    assert "the 5 answers not stored are kept in" in message
    holder.execute("ROLLBACK")
    holder.close()
    _assert_recovered(tmp_path, cache, paid)


def test_a_journal_cut_short_by_a_kill_stores_its_whole_lines(tmp_path):
    cache = _cache(tmp_path)
    cache.close()
    journal = cache.pending_paths()[0]
    journal.write_text('["a", 1]\n["b", {"x": 2}]\n["c", {"trunc', encoding="utf-8")
    again = DiskCache(tmp_path / "c.sqlite")
    assert again.get_many(["a", "b", "c"]) == {"a": 1, "b": {"x": 2}}
    assert not journal.exists()


def test_a_damaged_file_keeps_its_advice(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(InputError, match="cache file unreadable .*move it aside"):
        DiskCache(path)
