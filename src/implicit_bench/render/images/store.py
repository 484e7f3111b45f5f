"""Packed, resumable image storage: append-only shards plus an index table.

Layout of a store directory (one per rendering configuration)::

    shards/shard-00000.bin   concatenated PNG bytes, append-only
    journal.jsonl            one line per finished item, written after its bytes
    index.parquet            the logical index (written by ``finalize``): one row per item

Physical placement (sha256 -> shard, offset, length) lives in the journal only: nothing reads
it from another file.

The store holds the current plan and nothing else: ``finalize(keys)`` writes exactly the
items of the current plan (units x variants x seeds of the current params) into
``index.parquet`` and **compacts** the store to them (``compact``): one canonical layout (items
in key order, each distinct image once, shards cut at ``max_shard_bytes``, the journal one line
per item in key order), so a store's bytes are a function of its plan whatever ran before.
Items of earlier plans leave the store; ``finalize(keys, pool=...)`` moves them into a pool
store outside every output (the render stage's lives in the model-call cache directory,
``render.stage.pool_dir``), from which a later plan adopts them (``adopt``). Every reader
downstream of the renderer (judges, CLIP, faces, report, human evaluation) reads
``read_index`` / ``published_stores``, never the journal, so it sees only planned items; a
configuration dropped from the plan is removed from the images folder (``unpublish``; its
items kept in the pool when one is given).

The logical index holds no physical placement, so two runs that finish items in a different
order (in-process vs. Ray) give identical index tables. Items are keyed by
(config, unit_id, variant, seed). A killed run loses at most the item it was writing: on
re-open, journal lines whose bytes are missing or fail their checksum are ignored, so the
item is redone; a torn last journal line is ignored too, and so is a line that is JSON but
not a complete entry (counted in ``journal_problems``).

One process writes a store at a time: the first write (or ``acquire_writer``) takes an
exclusive ``fcntl`` lock on ``.writer.lock`` in the store and holds it until ``close`` /
``finalize``; a second writer gets ``StoreLockedError`` naming the holder, instead of both
appending to one shard. Under the lock the journal is re-read (so the writer sees every item
finished before it), and each image's offset is the shard's size on disk, not ``tell()``.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import shutil
import socket
import stat
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench._util.hashing import sha256_bytes

INDEX_COLUMNS = (
    "config",
    "unit_id",
    "variant",
    "seed",
    "generator",
    "prompt",
    "status",
    "reason",
    "sha256",
    "width",
    "height",
    "attempts",
)
STATUSES = ("ok", "refused", "failed")
LOCK_NAME = ".writer.lock"
SHARD_NAME = re.compile(r"shard-\d{5,}\.bin")  # the only shard names a store writes
MAX_IMAGE_BYTES = 256 * 2**20  # one stored image (a 3 GB length made the report allocate 3 GB)
INDEX_FILE = "index.parquet"
COMPACT_DIR = ".compact"  # compact's new shards and journal, swapped in once complete
COMPLETE = "complete"


class StoreLockedError(RuntimeError):
    """Another process is writing this image store."""


@dataclass(frozen=True, order=True)
class ImageKey:
    config: str
    unit_id: str
    variant: str
    seed: int

    @property
    def item_id(self) -> str:
        return f"{self.config}/{self.unit_id}/{self.variant}/{self.seed}"


@dataclass
class ImageRecord:
    key: ImageKey
    generator: str
    prompt: str
    status: str  # ok | refused | failed
    reason: str | None = None
    sha256: str | None = None
    width: int | None = None
    height: int | None = None
    attempts: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def index_row(self) -> dict[str, Any]:
        row = {**asdict(self.key)}
        row.update(
            generator=self.generator,
            prompt=self.prompt,
            status=self.status,
            reason=self.reason,
            sha256=self.sha256,
            width=self.width,
            height=self.height,
            attempts=self.attempts,
        )
        return row


class ImageStore:
    """Append images and look them up by key or sha256."""

    def __init__(
        self, root: str | Path, max_shard_bytes: int = 1 << 30, sync_interval_s: float = 1.0
    ):
        self.root = Path(root)
        self.max_shard_bytes = max_shard_bytes
        self.sync_interval_s = sync_interval_s
        self._journal: io.TextIOWrapper | None = None
        self._last_sync = time.monotonic()
        self.shard_dir = self.root / "shards"
        self.journal_path = self.root / "journal.jsonl"
        self._records: dict[ImageKey, ImageRecord] = {}
        self._locations: dict[str, tuple[str, int, int]] = {}
        self._writer: io.BufferedWriter | None = None
        self._writer_name: str | None = None
        self._journal_checked = False
        self._lock_fd: int | None = None
        self.journal_problems: list[str] = []  # "journal.jsonl:LINE: reason" of skipped lines
        self._load()

    # ----- reading -------------------------------------------------------------------------
    def _finish_compaction(self) -> None:
        """Swap in a compacted copy (``compact``) that was written completely; drop one that
        was not (the store is then as it was before)."""
        tmp, old = self.root / COMPACT_DIR, self.root / ".compact-old"
        if not tmp.is_dir():
            return
        if (tmp / COMPLETE).exists():
            if (tmp / "shards").is_dir():
                shutil.rmtree(old, ignore_errors=True)
                if self.shard_dir.exists():
                    self.shard_dir.rename(old)
                (tmp / "shards").rename(self.shard_dir)
            if (tmp / "journal.jsonl").exists():
                os.replace(tmp / "journal.jsonl", self.journal_path)
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)

    def _load(self) -> None:
        if not self.journal_path.exists():
            return
        with open(self.journal_path, encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, start=1):
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # torn last line of a killed run
                if not line.endswith("\n"):
                    continue
                problem = _entry_problem(entry)
                if problem is not None:  # not a complete entry: treated like a torn line (redone)
                    self.journal_problems.append(f"{self.journal_path}:{lineno}: {problem}")
                    continue
                key = ImageKey(
                    entry["config"], entry["unit_id"], entry["variant"], int(entry["seed"])
                )
                location = entry.get("location")
                if entry["status"] == "ok":
                    if not location:
                        continue
                    self._locations[entry["sha256"]] = tuple(location)  # type: ignore[assignment]
                self._records[key] = ImageRecord(
                    key=key,
                    generator=entry["generator"],
                    prompt=entry["prompt"],
                    status=entry["status"],
                    reason=entry.get("reason"),
                    sha256=entry.get("sha256"),
                    width=entry.get("width"),
                    height=entry.get("height"),
                    attempts=int(entry.get("attempts", 1)),
                    extra=entry.get("extra") or {},
                )

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, key: ImageKey) -> bool:
        return key in self._records

    def get(self, key: ImageKey) -> ImageRecord | None:
        return self._records.get(key)

    def records(self) -> list[ImageRecord]:
        return [self._records[k] for k in sorted(self._records)]

    def read_bytes(self, sha256: str, verify: bool = True) -> bytes:
        """The PNG bytes of an image, checked against its sha256."""
        try:
            shard, offset, length = self._locations[sha256]
        except KeyError:
            raise KeyError(f"{self.root}: no image with sha256 {sha256}") from None
        path = self.shard_dir / shard
        if not SHARD_NAME.fullmatch(shard) or length > MAX_IMAGE_BYTES:
            raise OSError(
                f"{self.root}: location {shard!r}@{offset}+{length} of "
                f"{sha256} refused (not a shard of this store)"
            )
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            if (
                not stat.S_ISREG(info.st_mode) or info.st_size < offset + length
            ):  # checked before allocating
                raise OSError(
                    f"{path}@{offset}: {length} bytes of {sha256} are not in "
                    f"the shard ({info.st_size} bytes)"
                )
            fh.seek(offset)
            data = fh.read(length)
        if verify and sha256_bytes(data) != sha256:
            raise OSError(f"{self.root}/shards/{shard}@{offset}: checksum mismatch for {sha256}")
        return data

    def load_image(self, sha256: str):
        from PIL import Image

        return Image.open(io.BytesIO(self.read_bytes(sha256))).convert("RGB")

    def export_png(self, key: ImageKey, path: str | Path) -> Path:
        record = self._records.get(key)
        if record is None or record.status != "ok" or record.sha256 is None:
            raise KeyError(f"{self.root}: no image for {key.item_id}")
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.read_bytes(record.sha256))
        return path

    def done_keys(self, verify: bool = False) -> set[ImageKey]:
        """Keys finished (ok / refused / failed) whose stored bytes are intact.

        With ``verify`` every ok image is re-read and re-hashed; a mismatch drops the key so
        that it is rendered again.
        """
        done: set[ImageKey] = set()
        for key, record in self._records.items():
            if record.status == "ok":
                if record.sha256 not in self._locations:
                    continue
                if verify:
                    try:
                        self.read_bytes(record.sha256)
                    except (OSError, KeyError):
                        self._locations.pop(record.sha256, None)  # the next put writes them anew
                        continue
                elif not self._bytes_present(record.sha256):
                    self._locations.pop(record.sha256, None)
                    continue
            done.add(key)
        return done

    def _bytes_present(self, sha256: str) -> bool:
        shard, offset, length = self._locations[sha256]
        path = self.shard_dir / shard
        return path.exists() and path.stat().st_size >= offset + length

    # ----- writing -------------------------------------------------------------------------
    def acquire_writer(self) -> None:
        """Take the store's exclusive writer lock (no-op when held) and re-read the journal.

        Raises ``StoreLockedError`` at once when another process holds it: two writers never
        share a store, so no item is written twice and no offset is computed from a stale
        end of file.
        """
        if self._lock_fd is not None:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / LOCK_NAME
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = (
                    os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown process"
                )
                os.close(fd)
                raise StoreLockedError(
                    f"image store {self.root} is being written by another process ({holder}); "
                    "wait for it to finish, or render into another store"
                ) from None
            try:  # the file may have been unlinked by a writer that released it meanwhile
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(
            fd,
            f"pid {os.getpid()} on {socket.gethostname()} since "
            f"{time.strftime('%Y-%m-%d %H:%M:%S')}".encode(),
            0,
        )
        self._lock_fd = fd
        self._finish_compaction()  # a compaction killed halfway (only the writer touches it)
        self._records.clear()
        self._locations.clear()
        self.journal_problems.clear()
        self._journal_checked = False
        self._load()

    def release_writer(self) -> None:
        """Release the writer lock (files are closed first by ``close``)."""
        if self._lock_fd is None:
            return
        try:
            (self.root / LOCK_NAME).unlink(missing_ok=True)
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _open_writer(self, incoming: int) -> io.BufferedWriter:
        if self._writer is not None and _size(self._writer) + incoming <= self.max_shard_bytes:
            return self._writer
        if self._writer is not None:
            self._writer.flush()
            os.fsync(self._writer.fileno())
            self._writer.close()
        self.shard_dir.mkdir(parents=True, exist_ok=True)
        existing = sorted(self.shard_dir.glob("shard-*.bin"))
        name = existing[-1].name if existing else "shard-00000.bin"
        path = self.shard_dir / name
        if (
            path.exists()
            and path.stat().st_size + incoming > self.max_shard_bytes
            and path.stat().st_size > 0
        ):
            name = f"shard-{len(existing):05d}.bin"
            path = self.shard_dir / name
        self._writer = open(path, "ab")  # noqa: SIM115 - kept open across puts
        self._writer_name = name
        return self._writer

    def put(self, record: ImageRecord, png: bytes | None = None) -> ImageRecord:
        """Store one finished item (with its PNG bytes when status is ok); see ``put_many``."""
        self.put_many([(record, png)])
        return record

    def put_many(self, items: Iterable[tuple[ImageRecord, bytes | None]]) -> None:
        """Store several finished items: bytes first, then their journal lines.

        On return the items survive a killed process (written to the OS). They are fsync'd at
        most ``sync_interval_s`` later (0: at once) and on ``close``; after a machine crash, a
        journal line whose bytes did not reach the disk fails its check and is redone.
        """
        items = list(items)
        self.acquire_writer()
        entries = []
        wrote = False
        for record, png in items:
            if record.status not in STATUSES:
                raise ValueError(f"unknown status {record.status!r}")
            location = None
            if record.status == "ok":
                if png is None:
                    raise ValueError(f"{record.key.item_id}: status ok needs image bytes")
                record.sha256 = sha256_bytes(png)
                if record.sha256 not in self._locations or not self._bytes_present(record.sha256):
                    writer = self._open_writer(len(png))
                    offset = _size(writer)  # the end of the shard on disk (the lock makes it ours)
                    writer.write(png)
                    wrote = True
                    self._locations[record.sha256] = (self._writer_name, offset, len(png))  # type: ignore[assignment]
                location = list(self._locations[record.sha256])
            entry = {**record.index_row(), "location": location}
            if record.extra:
                entry["extra"] = record.extra
            entries.append(entry)
        if wrote and self._writer is not None:
            self._writer.flush()  # in the OS from here on: survives a killed process
        if not entries:
            return
        if self._journal is None:
            self.root.mkdir(parents=True, exist_ok=True)
            prefix = "\n" if self._torn_journal_tail() else ""
            self._journal = open(self.journal_path, "a", encoding="utf-8")  # noqa: SIM115
            self._journal.write(prefix)
        self._journal.write("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))
        self._journal.flush()
        if time.monotonic() - self._last_sync >= self.sync_interval_s:
            self.sync()
        for record, _ in items:
            self._records[record.key] = record

    def sync(self) -> None:
        """fsync the shard, then the journal (survives a machine crash, not only a kill)."""
        if self._writer is not None:
            self._writer.flush()
            os.fsync(self._writer.fileno())
        if self._journal is not None:
            self._journal.flush()
            os.fsync(self._journal.fileno())
        self._last_sync = time.monotonic()

    def _torn_journal_tail(self) -> bool:
        """True when a killed writer left the journal's last line unfinished (checked once)."""
        if self._journal_checked:
            return False
        self._journal_checked = True
        if not self.journal_path.exists() or self.journal_path.stat().st_size == 0:
            return False
        with open(self.journal_path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"

    def close(self) -> None:
        self._close_files()
        self.release_writer()

    def _close_files(self) -> None:
        self.sync()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def index(self, keys: Iterable[ImageKey] | None = None) -> pd.DataFrame:
        """One row per item (sorted by key); only ``keys`` when given (e.g. the current plan)."""
        records = self.records()
        if keys is not None:
            wanted = set(keys)
            records = [r for r in records if r.key in wanted]
        rows = [r.index_row() for r in records]
        frame = pd.DataFrame(rows, columns=list(INDEX_COLUMNS))
        return frame.astype({"seed": "int64", "attempts": "int64"})

    def adopt(self, pool: ImageStore, wanted: Iterable[ImageKey], accept) -> int:
        """Copy the items of ``wanted`` that this store lacks from ``pool`` when
        ``accept(record)`` holds and their bytes are intact; the number copied."""
        have = self.done_keys()
        rows = []
        for key in wanted:
            record = pool.get(key)
            if key in have or record is None or not accept(record):
                continue
            png = None
            if record.status == "ok":
                try:
                    png = pool.read_bytes(record.sha256 or "")
                except (OSError, KeyError):
                    continue
            rows.append((_copy_record(record), png))
        if rows:
            self.put_many(rows)
        return len(rows)

    def _spill(self, records: list[ImageRecord], pool: str | Path) -> None:
        """Move ``records`` into the pool store; a pool another process is writing (parallel
        ``dvc queue`` workers share one cache directory) is skipped: the items are dropped."""
        import sys

        spill = ImageStore(pool, max_shard_bytes=self.max_shard_bytes)
        try:
            spill.acquire_writer()
        except StoreLockedError as exc:
            print(
                f"{self.root}: {len(records)} items of earlier plans not pooled: {exc}",
                file=sys.stderr,
            )
            return
        try:
            rows = []
            for record in records:
                png = None
                if record.status == "ok":
                    try:
                        png = self.read_bytes(record.sha256 or "")
                    except (OSError, KeyError):
                        continue
                rows.append((_copy_record(record), png))
            spill.put_many(rows)
        finally:
            spill.close()

    def compact(self, keys: Iterable[ImageKey], pool: str | Path | None = None) -> bool:
        """Leave exactly the intact items of ``keys`` in the canonical layout (module docstring);
        the other items go to the store at ``pool`` (when given). True when files changed."""
        self._close_files()
        self.acquire_writer()  # no-op when held; finalize releases it
        wanted = set(keys)
        intact = self.done_keys()
        keep = [self._records[k] for k in sorted(wanted & intact)]
        evict = [self._records[k] for k in sorted(intact - wanted)]
        if pool is not None and evict:
            self._spill(evict, pool)
        layout: dict[str, tuple[str, int, int]] = {}
        sizes: dict[str, int] = {}
        lines = []
        shard, used = "shard-00000.bin", 0
        for record in keep:
            location = None
            if record.status == "ok":
                sha = record.sha256 or ""
                if sha not in layout:
                    length = self._locations[sha][2]
                    if used and used + length > self.max_shard_bytes:
                        shard, used = f"shard-{len(sizes):05d}.bin", 0
                    layout[sha] = (shard, used, length)
                    used += length
                    sizes[shard] = used
                location = list(layout[sha])
            entry = {**record.index_row(), "location": location}
            if record.extra:
                entry["extra"] = record.extra
            lines.append(json.dumps(entry, ensure_ascii=False) + "\n")
        journal = "".join(lines)
        present = (
            {p.name: p.stat().st_size for p in self.shard_dir.iterdir()}
            if self.shard_dir.is_dir()
            else {}
        )
        current = self.journal_path.read_text("utf-8") if self.journal_path.exists() else ""
        if journal == current and present == sizes:
            self._records = {r.key: r for r in keep}
            return False
        tmp = self.root / COMPACT_DIR
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "shards").mkdir(parents=True)
        handles: dict[str, io.BufferedWriter] = {}
        try:
            for sha, (name, _offset, _length) in layout.items():  # key order: offsets ascend
                if name not in handles:
                    handles[name] = open(tmp / "shards" / name, "wb")  # noqa: SIM115
                handles[name].write(self.read_bytes(sha))
        finally:
            for fh in handles.values():
                fh.flush()
                os.fsync(fh.fileno())
                fh.close()
        (tmp / "journal.jsonl").write_text(journal, encoding="utf-8")
        (tmp / COMPLETE).touch()  # from here on a killed swap is finished by the next open
        self._finish_compaction()
        self._records = {r.key: r for r in keep}
        self._locations = dict(layout)
        self._journal_checked = False
        return True

    def finalize(
        self, keys: Iterable[ImageKey] | None = None, pool: str | Path | None = None
    ) -> pd.DataFrame:
        """Write ``index.parquet`` (of ``keys`` when given: the store is compacted to them,
        the rest moved to ``pool``); return the index."""
        self._close_files()
        try:
            if keys is not None:
                keys = list(keys)
                self.compact(keys, pool)
            frame = self.index(keys)
            self.root.mkdir(parents=True, exist_ok=True)
            frame.to_parquet(self.root / "index.parquet", index=False)
            (self.root / "locations.parquet").unlink(
                missing_ok=True
            )  # written by older versions, read by none
        finally:
            self.release_writer()
        return frame

    def __enter__(self) -> ImageStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _copy_record(record: ImageRecord) -> ImageRecord:
    """A copy of ``record`` (``put_many`` sets the sha256 of the copy, not of the original)."""
    return ImageRecord(
        record.key,
        record.generator,
        record.prompt,
        record.status,
        record.reason,
        record.sha256,
        record.width,
        record.height,
        record.attempts,
        dict(record.extra),
    )


def _size(writer: io.BufferedWriter) -> int:
    """Bytes in the shard once ``writer``'s buffer is flushed (never ``tell()`` in append mode)."""
    writer.flush()
    return os.fstat(writer.fileno()).st_size


_FIELDS: dict[str, type | tuple[type, ...]] = {
    "config": str,
    "unit_id": str,
    "variant": str,
    "seed": (int, str),
    "generator": str,
    "prompt": str,
    "status": str,
}


def _entry_problem(entry: Any) -> str | None:
    """Why a parsed journal line is not a complete entry, or None when it is."""
    if not isinstance(entry, dict):
        return f"not a JSON object ({type(entry).__name__})"
    for name, kind in _FIELDS.items():
        if name not in entry:
            return f"missing field '{name}'"
        if not isinstance(entry[name], kind) or isinstance(entry[name], bool):
            return f"field '{name}' has the wrong type ({type(entry[name]).__name__})"
    try:
        int(entry["seed"])
    except ValueError:
        return f"seed {entry['seed']!r} is not an integer"
    if entry["status"] not in STATUSES:
        return f"unknown status {entry['status']!r}"
    if entry["status"] == "ok":
        location = entry.get("location")
        if not isinstance(entry.get("sha256"), str):
            return "an ok entry without a sha256"
        if location and not (
            isinstance(location, list)
            and len(location) == 3
            and isinstance(location[0], str)
            and all(isinstance(x, int) and not isinstance(x, bool) for x in location[1:])
        ):
            return "location is not [shard, offset, length]"
        if location and not SHARD_NAME.fullmatch(
            location[0]
        ):  # never a path: "../../etc/...", "/dev/zero"
            return f"shard name {location[0][:80]!r} is not shard-NNNNN.bin"
        if location and not (location[1] >= 0 and 0 < location[2] <= MAX_IMAGE_BYTES):
            return f"offset {location[1]} / length {location[2]} outside 0 / 1..{MAX_IMAGE_BYTES}"
    if not isinstance(entry.get("attempts", 1), int) or not isinstance(
        entry.get("extra") or {}, dict
    ):
        return "attempts or extra has the wrong type"
    return None


def read_index(root: str | Path) -> pd.DataFrame:
    """The published index of a store (the current plan's items, ``finalize(keys)``)."""
    path = Path(root) / INDEX_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{root}: no published index ({INDEX_FILE}); run the stage that renders it"
        )
    frame = pd.read_parquet(path)
    missing = [c for c in INDEX_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}")
    frame = frame[list(INDEX_COLUMNS)].astype({"seed": "int64", "attempts": "int64"})
    frame["unit_id"] = frame["unit_id"].astype(str)
    return frame


def published_stores(images_dir: str | Path) -> list[Path]:
    """Store directories under ``images_dir`` with a published index, sorted by name."""
    root = Path(images_dir)
    return sorted(p.parent for p in root.glob(f"*/{INDEX_FILE}")) if root.is_dir() else []


def unpublish(root: str | Path, pool: str | Path | None = None) -> bool:
    """Take a store out of the plan: move its items into ``pool`` (when given), then remove
    the store's folder, so the images folder holds only the current plan's stores."""
    root = Path(root)
    if not root.is_dir():
        return False
    with ImageStore(root) as store:
        store.acquire_writer()
        store.compact([], pool)
    shutil.rmtree(root)
    return True
