from __future__ import annotations

from PIL import Image

from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore
from tests.helpers.store_writers import image_record, png_bytes


def test_put_read_resume_and_export(tmp_path):
    store = ImageStore(tmp_path / "s")
    red, blue = png_bytes((255, 0, 0)), png_bytes((0, 0, 255))
    store.put(image_record("u1", 42), red)
    store.put(image_record("u2", 42), blue)
    store.put(image_record("u3", 42, "refused"), None)
    store.close()

    reopened = ImageStore(tmp_path / "s")
    assert len(reopened.done_keys(verify=True)) == 3
    rec = reopened.get(ImageKey("cfg", "u2", "neutral", 42))
    assert reopened.read_bytes(rec.sha256) == blue
    out = reopened.export_png(rec.key, tmp_path / "x.png")
    assert Image.open(out).getpixel((0, 0)) == (0, 0, 255)
    index = reopened.finalize()
    assert list(index["unit_id"]) == ["u1", "u2", "u3"]
    assert list(index["status"]) == ["ok", "ok", "refused"]
    # no write-only outputs: placement stays in the journal, index.parquet is the one table
    assert sorted(p.name for p in (tmp_path / "s").iterdir() if p.suffix == ".parquet") == [
        "index.parquet"
    ]


def test_corrupted_bytes_are_redone_and_torn_journal_ignored(tmp_path):
    store = ImageStore(tmp_path / "s")
    store.put(image_record("u1", 42), png_bytes((1, 2, 3)))
    store.put(image_record("u2", 42), png_bytes((4, 5, 6)))
    store.close()
    shard = next((tmp_path / "s" / "shards").glob("*.bin"))
    data = bytearray(shard.read_bytes())
    data[-5] ^= 0xFF  # corrupt the second image
    shard.write_bytes(bytes(data))
    with open(tmp_path / "s" / "journal.jsonl", "a") as fh:
        fh.write('{"config": "cfg", "unit_id": "u9"')  # torn line of a killed run
    reopened = ImageStore(tmp_path / "s")
    done = reopened.done_keys(verify=True)
    assert {k.unit_id for k in done} == {"u1"}


def test_identical_index_regardless_of_completion_order(tmp_path):
    a, b = ImageStore(tmp_path / "a"), ImageStore(tmp_path / "b")
    items = [(image_record(f"u{i}", 42), png_bytes((i, i, i))) for i in range(5)]
    for rec, png in items:
        a.put(rec, png)
    for rec, png in reversed(items):
        b.put(ImageRecord(rec.key, rec.generator, rec.prompt, rec.status), png)
    assert a.finalize().equals(b.finalize())


def test_writes_after_a_torn_journal_line_survive_reopening(tmp_path):
    store = ImageStore(tmp_path / "s")
    store.put(image_record("u1", 42), png_bytes((1, 1, 1)))
    store.close()
    with open(tmp_path / "s" / "journal.jsonl", "a") as fh:
        fh.write('{"config": "cfg", "unit_id": "u2", "sta')  # killed mid-line
    store = ImageStore(tmp_path / "s")
    store.put(image_record("u2", 42), png_bytes((2, 2, 2)))
    store.close()
    assert {k.unit_id for k in ImageStore(tmp_path / "s").done_keys(verify=True)} == {"u1", "u2"}


def test_put_many_and_extra_round_trip(tmp_path):
    store = ImageStore(tmp_path / "s")
    rec = image_record("u1", 42)
    rec.extra = {"settings": "abc"}
    store.put_many([(rec, png_bytes((1, 1, 1))), (image_record("u2", 42, "refused"), None)])
    store.close()
    reopened = ImageStore(tmp_path / "s")
    assert reopened.get(rec.key).extra == {"settings": "abc"}
    assert list(reopened.index(keys=[rec.key])["unit_id"]) == ["u1"]


def test_atomic_writes_get_normal_file_modes(tmp_path):
    import os
    import stat

    import pandas as pd

    from implicit_bench._util.files import write_json, write_table

    umask = os.umask(0o022)
    try:
        write_json(tmp_path / "m.json", {"a": 1})
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.csv")
    finally:
        os.umask(umask)
    for name in ("m.json", "t.csv"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644
