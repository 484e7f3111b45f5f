"""An image store's journal cannot point outside the store's shards (``../../etc``,
``/dev/zero``) nor make a reader allocate a length before checking it."""

from __future__ import annotations

import json
import resource

import pytest

from implicit_bench.render.images import ImageKey, ImageStore
from implicit_bench.render.images.store import MAX_IMAGE_BYTES
from tests.helpers.store_writers import image_record, png_bytes


def _store_with_one(tmp_path):
    store = ImageStore(tmp_path / "s")
    png = png_bytes((255, 0, 0))
    store.put(image_record("u1", 42), png)
    store.close()
    return tmp_path / "s", png


def _rewrite_location(root, location):
    path = root / "journal.jsonl"
    entry = json.loads(path.read_text().splitlines()[0])
    entry["location"] = location
    path.write_text(json.dumps(entry) + "\n")
    return entry["sha256"]


@pytest.mark.parametrize(
    "location, reason",
    [
        (["../../etc/passwd", 0, 10], "is not shard-NNNNN.bin"),
        (["/dev/zero", 0, 3 * 2**30], "is not shard-NNNNN.bin"),
        (["shard-00000.bin", 0, 3 * 2**30], f"outside 0 / 1..{MAX_IMAGE_BYTES}"),
        (["shard-00000.bin", -5, 10], "outside 0 / 1.."),
    ],
)
def test_journal_locations_outside_the_store_are_refused(tmp_path, location, reason):
    root, _ = _store_with_one(tmp_path)
    sha = _rewrite_location(root, location)
    store = ImageStore(root)
    assert store.done_keys() == set()  # the item is redone, never read from there
    assert any(reason in p for p in store.journal_problems)
    with pytest.raises(KeyError):
        store.read_bytes(sha)


def test_a_length_past_the_shard_end_is_an_error_before_any_allocation(tmp_path):
    root, png = _store_with_one(tmp_path)
    sha = _rewrite_location(root, ["shard-00000.bin", 0, MAX_IMAGE_BYTES])
    store = ImageStore(root)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(OSError, match="are not in the shard"):
        store.read_bytes(sha)
    assert (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024
    )  # KiB: no 256 MiB buffer
    assert store.get(ImageKey("cfg", "u1", "neutral", 42)) is not None


def test_a_shard_name_injected_in_memory_is_refused_too(tmp_path):
    root, png = _store_with_one(tmp_path)
    store = ImageStore(root)
    sha = next(iter(store._locations))
    store._locations[sha] = ("../../../dev/zero", 0, 10)
    with pytest.raises(OSError, match="not a shard of this store"):
        store.read_bytes(sha)
