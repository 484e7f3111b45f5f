"""A corrupt cache file names itself and how to recover; a bad entry is a miss, not
an abort (the judge stage asks that one call again)."""

from __future__ import annotations

import pytest

from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.backends.judges.stage import executor_dispatch, run_judge_stage
from implicit_bench.errors import InputError
from implicit_bench.runtime.cache import CacheLookup, DiskCache
from tests.helpers.chat_server import ChatServer, completion
from tests.helpers.judge_fixtures import make_inputs


def test_corrupt_cache_file_names_itself_and_the_recovery(tmp_path):
    path = tmp_path / "judge.sqlite"
    path.write_bytes(b"not a database at all " * 200)
    with pytest.raises(InputError) as info:
        DiskCache(path)
    message = str(info.value)
    assert message.startswith(f"{path}: cache file unreadable (file is not a database)")
    assert "move it aside" in message and "\n" not in message


def test_a_file_that_goes_bad_after_opening_is_named_too(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = DiskCache(path)
    cache.put("k", 1)
    cache.close()
    data = bytearray(path.read_bytes())
    data[:16] = b"garbage garbage!"  # the SQLite header
    path.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"c.sqlite{suffix}").unlink(missing_ok=True)
    with pytest.raises(InputError, match="c.sqlite: cache file unreadable"):
        DiskCache(path).get_many(["k"])


def test_a_non_json_entry_is_a_miss(tmp_path):
    cache = DiskCache(tmp_path / "c.sqlite")
    cache.put_many([("good", {"text": "1"}), ("bad", {"text": "2"})])
    cache._conn().execute("UPDATE entries SET value = '{not json' WHERE key = 'bad'")
    lookup = CacheLookup(cache, ["good", "bad"])
    assert lookup.found == {"good": {"text": "1"}} and lookup.missing == ["bad"]
    assert cache.get("bad") is None


def test_judge_stage_asks_again_for_a_damaged_entry(tmp_path):
    make_inputs(tmp_path)
    with ChatServer(lambda body, n: (200, completion('{"score": 3}'))) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "m",
                "base_url": server.base_url,
                "api_key_env": None,
                "backoff_s": 0.0,
                "max_retries": 0,
            }
        }
        params = JudgeStageParams(
            judges=judges, tasks={"rubric": None}, configs=["base"], progress=False
        )
        first = run_judge_stage(params, tmp_path, dispatch=executor_dispatch({}, progress=False))
        assert first.model_calls == 11
        cache = DiskCache(tmp_path / params.cache)
        keys = list(cache.keys())
        cache._conn().execute(
            "UPDATE entries SET value = 'x{' WHERE key = ?", (keys[0],)
        )  # not JSON
        cache._conn().execute(
            "UPDATE entries SET value = '5' WHERE key = ?", (keys[1],)
        )  # JSON, not an answer
        cache.close()
        second = run_judge_stage(params, tmp_path, dispatch=executor_dispatch({}, progress=False))
    assert second.model_calls == 2 and second.frame["valid"].all()
