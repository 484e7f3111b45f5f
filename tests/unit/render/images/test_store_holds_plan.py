"""A store holds the current plan only: its bytes do not depend on what was rendered before
(the committed data/images held items of earlier plans)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from implicit_bench.render.images import ImageKey, ImageStore, read_index
from implicit_bench.render.params import RenderParams
from implicit_bench.render.stage import render_all
from tests.helpers.render_fixtures import tiny_config, units_frame


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256 of its bytes)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_plan_a_then_b_equals_fresh_b(tiny_generator_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # stores under the working directory get a pool
    monkeypatch.setenv("IMPLICIT_BENCH_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    units = units_frame()
    plan_a = units[units["unit_id"].isin(["u0", "u1", "u2"])]
    plan_b = units[units["unit_id"].isin(["u1", "u3"])]
    config = tiny_config(tiny_generator_dir, batch_size=2)
    both = RenderParams(configs={"tiny": config, "other": config}, seeds=[42])
    only = RenderParams(configs={"tiny": config, "other": config}, run=["tiny"], seeds=[42, 7])

    render_all(both, plan_a, Path("stale"))  # plan A: another config, other units, one seed
    render_all(only, plan_b, Path("stale"))  # plan B
    render_all(only, plan_b, Path("fresh"))  # plan B from nothing (its own pool)

    stale, fresh = _tree(tmp_path / "stale"), _tree(tmp_path / "fresh")
    assert stale == fresh
    assert sorted({Path(p).parts[0] for p in stale}) == ["tiny"]  # the dropped config is gone
    store = ImageStore(tmp_path / "stale" / "tiny")
    assert {r.key.unit_id for r in store.records()} == {"u1", "u3"}
    assert len(read_index(tmp_path / "stale" / "tiny")) == len(store) == 2 * 2 * 3
    store.close()

    # plan A's items wait in the pool (model-call cache dir), and A again adopts them
    pool = ImageStore(tmp_path / "cache" / "image_pool" / "stale" / "tiny")
    assert ImageKey("tiny", "u0", "neutral", 42) in pool
    pool.close()
    assert os.path.isdir(tmp_path / "cache" / "image_pool" / "stale" / "other")
    again = render_all(both, plan_a, Path("stale"))
    assert again["other"]["run"]["adopted_from_pool"] == 9
    assert again["other"]["run"]["batches_run"] == 0
    render_all(both, plan_a, Path("fresh_a"))
    assert _tree(tmp_path / "stale") == _tree(tmp_path / "fresh_a")


def test_grown_plan_renders_only_its_new_items(tiny_generator_dir, tmp_path):
    units = units_frame()
    config = tiny_config(tiny_generator_dir, batch_size=4)
    params = RenderParams(configs={"tiny": config}, seeds=[42], variants=["neutral"])
    render_all(params, units[units["unit_id"].isin(["u0", "u2"])], tmp_path / "grown")
    grown = render_all(params, units, tmp_path / "grown")
    # a batch never spans two (unit, seed) pairs: u0 and u2 keep their batches when u1 and u3
    # join the plan, so only the new units are rendered, and the bytes equal a fresh plan's
    assert grown["tiny"]["run"]["skipped_done"] == 2
    render_all(params, units, tmp_path / "fresh")
    assert _tree(tmp_path / "grown") == _tree(tmp_path / "fresh")


def test_a_busy_pool_drops_the_items_not_the_run(tmp_path, capsys):
    """Parallel queue workers share one pool: a locked pool is skipped, the store compacted."""
    from implicit_bench.render.images import ImageRecord

    store = ImageStore(tmp_path / "store")
    keys = [ImageKey("c", f"u{i}", "neutral", 1) for i in range(3)]
    store.put_many([(ImageRecord(k, "g", "p", "ok"), f"png{k.unit_id}".encode()) for k in keys])
    holder = ImageStore(tmp_path / "pool")
    holder.acquire_writer()
    try:
        store.finalize(keys[:1], pool=tmp_path / "pool")
    finally:
        holder.close()
    assert "2 items of earlier plans not pooled" in capsys.readouterr().err
    again = ImageStore(tmp_path / "store")
    assert [r.key for r in again.records()] == keys[:1]
    assert (tmp_path / "store" / "shards" / "shard-00000.bin").read_bytes() == b"pngu0"
    assert len(ImageStore(tmp_path / "pool")) == 0


def test_a_compaction_killed_before_its_swap_is_finished_by_the_next_writer(tmp_path):
    from implicit_bench.render.images import ImageRecord
    from implicit_bench.render.images.store import COMPACT_DIR

    keys = [ImageKey("c", f"u{i}", "neutral", 1) for i in range(3)]
    store = ImageStore(tmp_path / "s")
    store.put_many([(ImageRecord(k, "g", "p", "ok"), f"png{k.unit_id}".encode()) for k in keys])
    store.close()
    fresh = ImageStore(tmp_path / "fresh")
    fresh.put_many([(ImageRecord(k, "g", "p", "ok"), f"png{k.unit_id}".encode()) for k in keys])
    fresh.finalize(keys[1:])
    # what compact leaves when killed between writing the copy and swapping it in
    copy = tmp_path / "s" / COMPACT_DIR
    (copy / "shards").mkdir(parents=True)
    (copy / "shards" / "shard-00000.bin").write_bytes(b"pngu1pngu2")
    (copy / "journal.jsonl").write_bytes((tmp_path / "fresh" / "journal.jsonl").read_bytes())
    (copy / "complete").touch()
    again = ImageStore(tmp_path / "s")
    again.acquire_writer()
    again.close()
    assert not copy.exists()
    assert _tree(tmp_path / "s") == {
        k: v for k, v in _tree(tmp_path / "fresh").items() if k != "index.parquet"
    }
    # an incomplete copy is dropped: the store stays as it was
    before = _tree(tmp_path / "s")
    (copy / "shards").mkdir(parents=True)
    (copy / "journal.jsonl").write_text("torn")
    ImageStore(tmp_path / "s").close()
    assert copy.exists()  # a reader leaves it alone
    with ImageStore(tmp_path / "s") as writer:
        writer.acquire_writer()
    assert not copy.exists() and _tree(tmp_path / "s") == before
