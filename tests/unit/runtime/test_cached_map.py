"""The one cache wrapper (cache.cached_map / CacheLookup / model_key), counts checked by hand."""

from __future__ import annotations

import pytest

from implicit_bench.runtime.cache import CacheLookup, DiskCache, cached_map, model_key

MODEL = {"backend": "fake", "model": "m1"}


def _key(text: str) -> str:
    return model_key("upper", MODEL, text=text)


def test_cached_map_computes_each_distinct_miss_once_and_counts_hits(tmp_path):
    cache = DiskCache(tmp_path / "c.sqlite")
    calls: list[list[str]] = []

    def upper(batch: list[str]) -> list[str]:
        calls.append(list(batch))
        return [t.upper() for t in batch]

    # 5 items, 3 distinct ("a" twice, "b" twice): 3 misses in batches of 2 -> [a, b], [c]
    first = cached_map(cache, ["a", "b", "a", "c", "b"], _key, upper, batch_size=2)
    assert first.values == ["A", "B", "A", "C", "B"]
    assert (first.hits, first.misses, first.batches) == (0, 3, 2)
    assert calls == [["a", "b"], ["c"]]
    assert first.cached == [False] * 5
    assert len(cache) == 3

    # again with one new text: 3 distinct hits (a, b, c), 1 miss (d), one batch of one
    second = cached_map(cache, ["c", "d", "a", "b"], _key, upper, batch_size=2)
    assert second.values == ["C", "D", "A", "B"]
    assert (second.hits, second.misses, second.batches) == (3, 1, 1)
    assert second.cached == [True, False, True, True]
    assert calls[-1] == ["d"]

    # everything cached: no compute call at all; batch_size None = one batch for all misses
    third = cached_map(cache, ["d", "d"], _key, upper)
    assert (third.values, third.hits, third.misses, third.batches) == (["D", "D"], 1, 0, 0)
    assert len(calls) == 3


def test_encode_none_is_not_stored_and_decode_none_is_recomputed(tmp_path):
    cache = DiskCache(tmp_path / "c.sqlite")

    def answer(batch: list[str]) -> list[tuple[str, str | None]]:
        return [("", "failed") if t == "bad" else (t * 2, None) for t in batch]

    def encode(item: str, value: tuple[str, str | None]):
        return None if value[1] else {"text": value[0]}

    def decode(entry):
        return (entry["text"], None) if isinstance(entry.get("text"), str) else None

    out = cached_map(cache, ["ok", "bad"], _key, answer, encode=encode, decode=decode)
    assert out.values == [("okok", None), ("", "failed")] and out.misses == 2
    assert len(cache) == 1  # the failed call is not cached: the next run asks again
    cache.put(_key("old"), {"text": 3})  # an entry an older version wrote, not text
    again = cached_map(cache, ["ok", "bad", "old"], _key, answer, encode=encode, decode=decode)
    assert again.cached == [True, False, False]
    assert (again.hits, again.misses) == (1, 2)
    assert again.values[2] == ("oldold", None)


def test_without_a_cache_everything_is_computed_and_on_missing_is_told_first():
    seen: list[int] = []
    out = cached_map(
        None,
        [1, 2, 2],
        lambda n: model_key("sq", MODEL, n=n),
        lambda b: [n * n for n in b],
        on_missing=seen.append,
    )
    assert out.values == [1, 4, 4] and (out.hits, out.misses) == (0, 2) and seen == [2]


def test_compute_must_answer_every_item(tmp_path):
    with pytest.raises(RuntimeError, match="1 values for 2 items"):
        cached_map(DiskCache(tmp_path / "c.sqlite"), ["a", "b"], _key, lambda b: ["x"])


def test_cache_lookup_and_model_key(tmp_path):
    cache = DiskCache(tmp_path / "c.sqlite")
    cache.put("k1", {"text": "x"})
    lookup = CacheLookup(cache, ["k1", "k2", "k1", "k3"])
    assert lookup.found == {"k1": {"text": "x"}} and lookup.missing == ["k2", "k3"]
    assert (lookup.hits, lookup.misses) == (1, 2)
    lookup.store([("k2", {"text": "y"}), ("k3", None)])
    assert "k2" in cache and "k3" not in cache
    # the identity is part of the key: another model, revision or input is another entry
    assert model_key("llm", MODEL, text="t") == model_key("llm", dict(MODEL), text="t")
    assert model_key("llm", MODEL, text="t") != model_key(
        "llm", {**MODEL, "revision": "r2"}, text="t"
    )
    assert model_key("llm", MODEL, text="t") != model_key("judge", MODEL, text="t")
    with pytest.raises(ValueError, match="names its backend"):
        model_key("llm", {"model": "m1"}, text="t")
