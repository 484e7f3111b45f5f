"""Reading and writing tables, JSON metrics and Markdown, atomically."""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.errors import InputError


def _umask_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give (mkstemp creates files as 0600)."""
    current = os.umask(0)
    os.umask(current)
    return 0o666 & ~current


#: minutes after which a temporary file of the old name form (no pid) counts as abandoned
STALE_UNNAMED_TEMP_MINUTES = 60


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def clean_stale_temps(path: Path) -> None:
    """Remove the temporary files next to ``path`` that a killed writer left behind: a writer
    names its temp ``.NAME.tmp-PID-XXXX.tmp`` (:func:`temp_file_for`), so one whose PID is no
    longer alive is abandoned; a temp of the earlier form ``.NAME.XXXXXXXX.tmp`` (no PID) when
    older than :data:`STALE_UNNAMED_TEMP_MINUTES`. A live writer's temp is left alone."""
    import re
    import time

    if not path.parent.is_dir():
        return
    prefix = f".{path.name}."
    with os.scandir(path.parent) as entries:
        candidates = [e for e in entries if e.name.startswith(prefix) and e.name.endswith(".tmp")]
    if not candidates:  # the usual case: no pattern compiled (two per written file)
        return
    name = re.escape(path.name)
    with_pid = re.compile(rf"^\.{name}\.tmp-(\d+)-[a-z0-9_]+\.tmp$")
    without_pid = re.compile(rf"^\.{name}\.[a-z0-9_]{{8}}\.tmp$")
    cutoff = time.time() - 60 * STALE_UNNAMED_TEMP_MINUTES
    for entry in candidates:
        match = with_pid.match(entry.name)
        try:
            if match:
                pid = int(match.group(1))
                stale = pid != os.getpid() and not _pid_alive(pid)
            else:
                stale = bool(without_pid.match(entry.name)) and (
                    entry.stat(follow_symlinks=False).st_mtime < cutoff
                )
            if stale and not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        except FileNotFoundError:  # another writer removed it first
            continue


def temp_file_for(path: Path) -> tuple[int, str]:
    """An open temporary file next to ``path`` (same file system, for the rename) named
    ``.NAME.tmp-PID-XXXX.tmp``; abandoned temps of ``path`` are removed first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temps(path)
    return tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.tmp-{os.getpid()}-", suffix=".tmp"
    )


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write via a temporary file and rename: readers never see a half-written file, and the
    temp a killed writer left is removed by the next write (:func:`clean_stale_temps`)."""
    path = Path(path)
    fd, tmp = temp_file_for(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


# Numbers in the committed outputs (files in a ``metrics``, ``tables`` or ``plots`` folder: JSON
# and CSV) are written to OUTPUT_DIGITS significant digits, so float noise below them never
# shows in git or ``dvc metrics diff`` (docs/metrics.md, "Written precision"); Parquet and
# every other file keep full precision.
OUTPUT_DIGITS = 6
OUTPUT_FOLDERS = ("metrics", "tables", "plots")


def output_digits(path: str | Path) -> int | None:
    """OUTPUT_DIGITS for a file in a metrics / tables / plots folder, else None (full)."""
    return OUTPUT_DIGITS if Path(path).parent.name in OUTPUT_FOLDERS else None


def significant(value: float, digits: int) -> float:
    """``value`` rounded to ``digits`` significant digits (nan and infinities as they are)."""
    if not math.isfinite(value) or value == 0:
        return value
    return float(f"{value:.{digits}g}")


def round_floats(obj: Any, digits: int) -> Any:
    """A copy of a JSON-ready payload with every float to ``digits`` significant digits."""
    import numpy as np

    if isinstance(obj, bool | int | np.integer) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, float | np.floating):
        return significant(float(obj), digits)
    if isinstance(obj, dict):
        return {k: round_floats(v, digits) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [round_floats(v, digits) for v in obj]
    if isinstance(obj, np.ndarray):
        return round_floats(obj.tolist(), digits)
    return obj


def round_frame(frame: pd.DataFrame, digits: int) -> pd.DataFrame:
    """A copy of ``frame`` with the cells of its float columns to ``digits`` significant digits."""
    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_float_dtype(out[column].dtype):
            out[column] = [significant(float(v), digits) for v in out[column].to_numpy()]
        elif out[column].dtype == object:
            out[column] = [
                significant(v, digits) if isinstance(v, float) else v for v in out[column]
            ]
    return out


def write_json(path: str | Path, payload: Any) -> None:
    """JSON, indented; numbers at ``output_digits(path)`` significant digits when set."""
    digits = output_digits(path)
    if digits is not None:
        payload = round_floats(payload, digits)
    atomic_write_text(
        path, json.dumps(payload, indent=2, ensure_ascii=False, default=_jsonable) + "\n"
    )


def _jsonable(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return None if np.isnan(obj) else float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def nan_to_none(obj: Any) -> Any:
    """JSON-ready copy: float nan -> None, recursively."""
    if isinstance(obj, dict):
        return {k: nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [nan_to_none(v) for v in obj]
    if isinstance(obj, float) and math.isnan(obj):
        return None
    return obj


def read_json(path: str | Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def read_table(path: str | Path, dtype: dict[str, Any] | None = None) -> pd.DataFrame:
    """Read CSV, TSV, Parquet or JSONL by extension.

    A file that cannot be read as its extension says (0 bytes, not UTF-8, a Parquet file named
    .csv, a CSV named .parquet, malformed rows) raises ``InputError`` naming the file and what
    is wrong with it, never a bare parser error.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, None, "file not found")
    if path.is_dir():
        raise InputError(path, None, None, "is a directory, not a table file")
    suffix = "".join(path.suffixes[-2:]) if path.suffix == ".gz" else path.suffix
    readers = {
        ".parquet": lambda: pd.read_parquet(path),
        ".pq": lambda: pd.read_parquet(path),
        ".csv": lambda: pd.read_csv(path, dtype=dtype, keep_default_na=False, na_values=[""]),
        ".tsv": lambda: pd.read_csv(
            path, sep="\t", dtype=dtype, keep_default_na=False, na_values=[""]
        ),
        ".jsonl": lambda: pd.read_json(path, lines=True, dtype=dtype),
    }
    kind = suffix.removesuffix(".gz") if suffix.endswith(".gz") and suffix != ".gz" else suffix
    if kind not in readers or (suffix.endswith(".gz") and kind in (".parquet", ".pq")):
        raise InputError(path, None, None, f"unsupported table format '{suffix}'")
    if path.stat().st_size == 0:
        raise InputError(path, None, None, "empty file (0 bytes): expected a header row and data")
    if kind in (".csv", ".tsv") and _magic(path) == b"PAR1":
        raise InputError(
            path, None, None, f"is a Parquet file named {suffix}; rename it to .parquet"
        )
    try:
        frame = readers[kind]()
    except UnicodeDecodeError as exc:
        raise InputError(
            path, None, None, f"not UTF-8 text (byte {exc.start}); save the file as UTF-8"
        ) from None
    except pd.errors.EmptyDataError:
        raise InputError(path, None, None, "no columns: the file holds no header row") from None
    except pd.errors.ParserError as exc:
        raise InputError(
            path, None, None, f"not a valid {kind[1:].upper()} file: {' '.join(str(exc).split())}"
        ) from None
    except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        text = " ".join(str(exc).split())[:300]
        raise InputError(
            path, None, None, f"cannot be read as {kind[1:]}: {type(exc).__name__}: {text}"
        ) from None
    if kind in (".parquet", ".pq") and dtype:
        frame = frame.astype(dtype)
    if kind in (".csv", ".tsv"):
        frame = _unescape_frame(frame)  # cells escaped against formula injection by write_table
    return frame


def _magic(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(4)


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may run as a formula


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def escape_formula(value: Any) -> Any:
    """``'`` before a text cell that starts with = + - @ tab or CR (CSV formula injection),
    unless the whole cell is a plain number such as ``-0.25``; other values unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _is_number(value):
        return "'" + value
    return value


def unescape_formula(value: Any) -> Any:
    """The inverse of ``escape_formula`` (reading a CSV this project wrote gives the original)."""
    if (
        isinstance(value, str)
        and len(value) > 1
        and value[0] == "'"
        and value[1:].startswith(FORMULA_START)
    ):
        return value[1:]
    return value


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names are safe to open in a spreadsheet."""
    out = frame.copy()
    for column in out.columns:
        if isinstance(out[column].dtype, pd.CategoricalDtype):
            out[column] = out[column].astype(object)
        text = out[column].dtype == object or pd.api.types.is_string_dtype(out[column])
        # a column changes only when a cell starts like a formula: look before mapping every cell
        if text and _any_text(out[column], lambda value: value.startswith(FORMULA_START)):
            out[column] = out[column].map(escape_formula, na_action="ignore")
    out.columns = [escape_formula(c) for c in out.columns]
    return out


def _any_text(column: pd.Series, test: Any) -> bool:
    """Whether ``test`` holds for a text cell of ``column``: tested once per distinct value
    (``pandas.unique``; a plain loop over the cells when a cell is not hashable)."""
    values = column.to_numpy(dtype=object)
    with contextlib.suppress(TypeError):  # e.g. a list in a cell: every cell
        values = pd.unique(values)
    return any(isinstance(v, str) and test(v) for v in values)


_ESCAPED = "'[" + re.escape("".join(FORMULA_START)) + "]"  # what escape_formula wrote


def _unescape_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``unescape_formula`` on every text cell, one vectorised match per column (a column
    changes only where a cell starts with ``'`` and a formula character)."""
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object:  # mixed cells: the per-cell inverse (pandas infers the dtype)
            frame[column] = values.map(unescape_formula, na_action="ignore")
        elif pd.api.types.is_string_dtype(values):
            if not values.str.startswith("'").fillna(False).astype(bool).any():
                continue  # no cell starts with ' (a prefix test costs a fifth of the regex)
            escaped = values.str.match(_ESCAPED).fillna(False).astype(bool)
            if escaped.any():
                frame[column] = values.where(~escaped, values.str.slice(1))
    frame.columns = [unescape_formula(c) for c in frame.columns]
    return frame


def write_table(frame: pd.DataFrame, path: str | Path) -> None:
    """Write Parquet, CSV or JSONL by extension, atomically. CSV text cells that a spreadsheet
    would run as a formula are escaped with a leading ``'`` (``escape_formula``)."""
    path = Path(path)
    fd, tmp = temp_file_for(path)
    os.close(fd)
    try:
        if path.suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        elif path.suffix == ".csv":
            digits = output_digits(path)
            safe = escape_formulas(frame if digits is None else round_frame(frame, digits))
            # a bare CR inside a cell is not quoted by QUOTE_MINIMAL and would split the row
            has_cr = any(
                _any_text(safe[c], lambda text: "\r" in text)
                for c in safe.columns
                if safe[c].dtype == object or pd.api.types.is_string_dtype(safe[c])
            )
            safe.to_csv(
                tmp, index=False, quoting=csv.QUOTE_NONNUMERIC if has_cr else csv.QUOTE_MINIMAL
            )
        elif path.suffix == ".jsonl":
            frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
        elif path.suffix == ".md":
            Path(tmp).write_text(frame.to_markdown(index=False) + "\n", encoding="utf-8")
        else:
            raise ValueError(f"unsupported table format '{path.suffix}' for {path}")
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    lines = [json.dumps(r, ensure_ascii=False, default=_jsonable) for r in rows]
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)
