"""A table's columns read once, as Arrow, checked with the table's own rules (bounded memory).

``read_columns(spec, path, columns)`` reads only ``columns`` of a Parquet file (a pyarrow
column projection) and returns them checked as one ``pyarrow.Table``, strings in Arrow
buffers rather than Python objects. Text columns are read one at a time and checked in Arrow
(strings, no padding that ``str.strip`` would remove, no blank required cell; blank and null
tokens of nullable columns made null): then every cell is already what ``TableSpec.read``
would return. A column that needs more (padding, numbers as ids, a blank required cell,
allowed values) sends the read through the spec's own ``validate``, a batch of rows at a time,
so the values and the errors are those of ``TableSpec.read``: the first bad row raises
``InputError`` naming file, 1-based data row and field. The key is checked over every row
when its columns are read. Columns of the file that are not asked for are neither read nor
checked. Used where a command only counts (``implicit-bench plan``: 10^6 units). A CSV file
is read whole through ``TableSpec.read`` and projected afterwards.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from implicit_bench.errors import InputError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from implicit_bench.protocol.tables.spec import TableSpec

BATCH_ROWS = 1 << 17  # rows checked at once: a batch's Python strings live only while checked


def _parquet(path: Path) -> object:
    import pyarrow.parquet as pq

    if not path.exists():
        raise InputError(path, None, None, "file not found")
    if path.is_dir():
        raise InputError(path, None, None, "is a directory, not a table file")
    if path.stat().st_size == 0:
        raise InputError(path, None, None, "empty file (0 bytes): expected a header row and data")
    try:
        return pq.ParquetFile(path)
    except (ValueError, OSError) as exc:  # ArrowInvalid is a ValueError
        text = " ".join(str(exc).split())[:300]
        raise InputError(
            path, None, None, f"cannot be read as parquet: {type(exc).__name__}: {text}"
        ) from None


def read_columns(
    spec: TableSpec,
    path: str | Path,
    columns: Sequence[str],
    require: Iterable[str] | None = None,
    batch_rows: int = BATCH_ROWS,
) -> pa.Table:
    """The checked ``columns`` of ``path`` that the file has (in the order asked), as Arrow.

    ``require``: columns that must be present (default: the spec's required columns among
    ``columns``); a missing one raises ``InputError`` as ``TableSpec.read`` does."""
    import pyarrow as pa

    from implicit_bench.protocol.tables.spec import suffix_of

    path = Path(path)
    by_name = {c.name: c for c in spec.columns}
    needed = list(
        [c for c in columns if c in by_name and by_name[c].required] if require is None else require
    )
    if suffix_of(path) not in (".parquet", ".pq"):
        frame = spec.read(path, require=needed)
        kept = [c for c in columns if c in frame.columns]
        return pa.Table.from_pandas(frame[kept], preserve_index=False)
    parquet = _parquet(path)
    names = parquet.schema_arrow.names
    missing = [c for c in needed if c not in names]
    if missing:
        raise InputError(
            path, None, missing[0], f"missing column(s) {', '.join(missing)} ({spec.name} table)"
        )
    kept = list(dict.fromkeys(c for c in columns if c in names))
    try:
        clean = _clean_text(spec, parquet, kept)
    except (ValueError, OSError) as exc:
        text = " ".join(str(exc).split())[:300]
        raise InputError(
            path, None, None, f"cannot be read as parquet: {type(exc).__name__}: {text}"
        ) from None
    # every cell already as the checks leave it (nothing to report), else the checks batch-wise
    table = clean if clean is not None else _checked_batches(spec, path, parquet, kept, batch_rows)
    if spec.key and all(k in kept for k in spec.key):
        check_key(table, spec.key, path)
    pa.default_memory_pool().release_unused()  # the decoded row groups, back to the system
    return table


# Python's whitespace (``str.isspace``, what ``str.strip`` removes), for RE2 (tests check it)
PY_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_NULL_TOKENS = ["", "nan", "none", "null"]


def _clean_text(spec: TableSpec, parquet: Any, kept: list[str]) -> pa.Table | None:
    """The ``kept`` columns, read one at a time, with blank / null-token cells of nullable text
    columns made null, when every column is text that the spec's checks pass unchanged
    (strings, no padding, no blank required cell); None as soon as a cell needs the full
    checks (they name its row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    by_name = {c.name: c for c in spec.columns}
    padded = f"^[{PY_WHITESPACE}]|[{PY_WHITESPACE}]$"  # no character of it is special in [...]
    out = {}
    for name in kept:
        col = by_name.get(name)
        if col is None or col.kind != "text" or col.allowed is not None or col.normalise:
            return None
        values = parquet.read(columns=[name], use_threads=False).column(0)
        if not pa.types.is_string(values.type) and not pa.types.is_large_string(values.type):
            return None
        if pc.any(pc.match_substring_regex(values, padded)).as_py():
            return None
        empty = pc.equal(values, "")
        if not col.nullable:
            if values.null_count or pc.any(empty).as_py():
                return None
        elif col.null_tokens:
            null_token = pc.is_in(pc.utf8_lower(values), pa.array(_NULL_TOKENS))
            values = pc.if_else(null_token, None, values)
        else:
            values = pc.if_else(empty, None, values)
        out[name] = values.cast(pa.string())
        pa.default_memory_pool().release_unused()  # this column's decoding buffers
    return pa.table(out) if out else None


def _checked_batches(
    spec: TableSpec, path: Path, parquet: object, kept: list[str], batch_rows: int
) -> pa.Table:
    """The columns checked by ``TableSpec.validate`` a batch of rows at a time (the first bad
    row raises ``InputError``), as Arrow."""
    import pyarrow as pa

    from implicit_bench.protocol.tables.spec import Checker

    batches, start = [], 0
    try:
        stream = parquet.iter_batches(batch_size=batch_rows, columns=kept)
        for batch in stream:
            frame = batch.to_pandas().reset_index(drop=True)
            frame["file"] = str(path)
            frame["row"] = np.arange(start + 1, start + len(frame) + 1)
            chk = Checker(spec.name, frame, "error")
            spec.validate(chk, frame, key=False)
            chk.rejects()  # raises for the batch's first bad row
            batches.append(_to_arrow(frame, kept, spec))
            start += len(frame)
    except (ValueError, OSError) as exc:
        if isinstance(exc, InputError):
            raise
        text = " ".join(str(exc).split())[:300]
        raise InputError(
            path, None, None, f"cannot be read as parquet: {type(exc).__name__}: {text}"
        ) from None
    if not batches:
        return parquet.read(columns=kept)
    return pa.concat_tables(batches, promote_options="permissive")


def _to_arrow(frame: pd.DataFrame, kept: list[str], spec: TableSpec) -> pa.Table:
    """The checked batch as Arrow (text columns as strings, whatever a batch holds)."""
    import pyarrow as pa

    text = {c.name for c in spec.columns if c.kind == "text"}
    return pa.table(
        {
            name: pa.array(
                frame[name], type=pa.string() if name in text else None, from_pandas=True
            )
            for name in kept
        }
    )


def check_key(table: pa.Table, key: Sequence[str], path: str | Path) -> None:
    """The first row whose key occurs more than once raises, as ``TableSpec.check_key`` names
    it ("duplicate unit_id (N rows)")."""
    if table.num_rows < 2:
        return
    codes = [np.asarray(table.column(k).combine_chunks().dictionary_encode().indices) for k in key]
    if len(codes) == 1:
        group = codes[0]
    else:
        _, group = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)
        group = group.ravel()
    counts = np.bincount(group)
    per_row = counts[group]
    duplicate = per_row > 1
    if duplicate.any():
        first = int(np.argmax(duplicate))
        raise InputError(
            path,
            first + 1,
            ",".join(key),
            f"duplicate {'/'.join(key)} ({int(per_row[first])} rows)",
        )


__all__ = ["BATCH_ROWS", "check_key", "read_columns"]
