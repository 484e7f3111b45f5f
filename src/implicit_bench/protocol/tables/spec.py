"""Table specs: required columns, dtypes and allowed values, checked row by row (vectorised).

A ``TableSpec`` reads a table (CSV or Parquet; a stage's own JSONL where the catalogue says so),
checks it and returns a DataFrame; it checks a frame before writing it. Every row that does
not validate is named with the file, its 1-based data row, the field and a reason:
``on_bad_row="error"`` (what stages use) raises ``errors.InputError`` for the first one,
``"reject"`` (what ``implicit-bench analyze`` uses) leaves the bad rows out and lists them.

Checks run in passes, so the reason of a row that breaks several rules does not depend on the
column order: blank required fields, then integers / booleans / numbers, then allowed values,
then the table's own checks (``TableSpec.checks``), then duplicate keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from implicit_bench._util.booleans import FALSE_WORDS, TRUE_WORDS
from implicit_bench._util.files import read_table, write_table
from implicit_bench._util.text_numbers import text_floats
from implicit_bench.errors import InputError

Kind = Literal["text", "int", "float", "bool", "any"]
READ_SUFFIXES = (".csv", ".csv.gz", ".parquet", ".pq")
REJECT_COLUMNS = ["table", "file", "row", "field", "reason", "unit_id"]
_NULL_TOKENS = ("", "nan", "none", "null")
_SHADOW = {"file": "__file__", "row": "__row__"}  # data columns named like the position columns


@dataclass(frozen=True)
class Column:
    """One column of a table.

    ``kind``: ``text`` (ids and labels: read as stripped strings, 42.0 -> "42", null stays
    None), ``int`` (int64 in ``[low, high]``), ``float``, ``bool`` (bools, 0/1, true/false in
    any case) or ``any`` (kept as stored). ``required``: the column must be present;
    ``nullable``: a present column may hold nulls (a required, non-nullable text field may not
    be blank). ``allowed``: the values a non-null cell may take (after ``normalise``).
    ``null_tokens``: text cells read as null (``relation``: "", "nan", "none", "null").
    """

    name: str
    kind: Kind = "text"
    required: bool = True
    nullable: bool = False
    allowed: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    normalise: Callable[[Any], Any] | None = None
    null_tokens: bool = False
    unknown: str | None = (
        None  # the reason for a value not allowed (default: "unknown <name> 'x'; ...")
    )


class Checked(NamedTuple):
    """A validated table and its rejected rows (``rows_in``: data rows read)."""

    frame: pd.DataFrame
    rejects: pd.DataFrame


Reason = str | pd.Series | Callable[[], "str | pd.Series"]


class Checker:
    """Collects the rejected rows of one table; the first failing check names a row's reason."""

    def __init__(self, table: str, frame: pd.DataFrame, on_bad_row: str):
        self.table = table
        self.frame = frame
        self.on_bad_row = on_bad_row
        self.bad = pd.Series(False, index=frame.index)
        self.rows: list[pd.DataFrame] = []
        # text column -> (codes, distinct values): its cells are ``values[codes]`` (-1: null);
        # set by ``validate`` for the columns it read through ``TextCodes``; they describe the
        # column as validate left it (a caller that reassigns a text column must drop its entry)
        self.codes: dict[str, TextCodes] = {}

    def isin(self, column: str, values: Iterable[Any]) -> pd.Series:
        """``frame[column].isin(values)``, through the column's codes when ``validate`` kept
        them (once per distinct value)."""
        codes = self.codes.get(column)
        if codes is None:
            return self.frame[column].isin(values)
        return pd.Series(codes.isin(values), index=self.frame.index)

    def blank(self, column: str) -> pd.Series:
        """``blank(frame[column])``, through the column's codes when ``validate`` kept them."""
        codes = self.codes.get(column)
        if codes is None:
            return blank(self.frame[column])
        return pd.Series(codes.blank(), index=self.frame.index)

    def check(self, failing: pd.Series | np.ndarray, field_name: str, reason: Reason) -> None:
        """Reject the rows where ``failing`` holds (and no earlier check failed); ``reason``
        (text, one text per row, or a function returning either) is only built when a row
        fails: building a message for every row of a large valid table costs more than all
        the checks."""
        if not isinstance(failing, pd.Series):
            failing = pd.Series(failing, index=self.frame.index)
        new = failing.fillna(True).astype(bool) & ~self.bad
        if not new.any():
            return
        if callable(reason):
            reason = reason()
        sub = self.frame.loc[new]
        reasons = reason.loc[new] if isinstance(reason, pd.Series) else reason
        self.rows.append(
            pd.DataFrame(
                {
                    "table": self.table,
                    "file": sub["file"].to_numpy(),
                    "row": sub["row"].to_numpy(),
                    "field": field_name,
                    "reason": reasons if isinstance(reasons, str) else reasons.to_numpy(),
                    "unit_id": sub["unit_id"].to_numpy() if "unit_id" in sub else None,
                    "_order": sub.index.to_numpy(),
                }
            )
        )
        self.bad |= new

    def rejects(self) -> pd.DataFrame:
        """The rejected rows in input order; with ``on_bad_row="error"`` raise for the first."""
        if not self.rows:
            return pd.DataFrame(columns=REJECT_COLUMNS)
        out = pd.concat(self.rows, ignore_index=True).sort_values("_order", kind="stable")
        if self.on_bad_row == "error":
            first = out.iloc[0]
            raise InputError(first["file"], int(first["row"]), first["field"], str(first["reason"]))
        return out[REJECT_COLUMNS].reset_index(drop=True)


# ----- reading ------------------------------------------------------------------------------------
def suffix_of(path: str | Path) -> str:
    path = Path(path)
    return "".join(path.suffixes[-2:]) if path.suffix == ".gz" else path.suffix


def read_frame(
    path: str | Path,
    table: str,
    required: Sequence[str],
    suffixes: Sequence[str] = READ_SUFFIXES,
    allow_empty: bool = False,
) -> pd.DataFrame:
    """One table file with ``file`` and ``row`` (1-based data row) columns added; CSV cells read
    as text. A wrong format, a missing column or (unless ``allow_empty``) no data rows raises
    ``InputError``."""
    path = Path(path)
    suffix = suffix_of(path)
    if suffix not in suffixes:
        kinds = " or ".join(k for k in (".csv", ".parquet", ".jsonl") if k in suffixes)
        raise InputError(path, None, None, f"{table}: expected a {kinds} file, got '{suffix}'")
    text = suffix.startswith((".csv", ".tsv"))
    frame = read_table(path, dtype=str) if text else read_table(path)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(
            path, None, missing[0], f"missing column(s) {', '.join(missing)} ({table} table)"
        )
    if frame.empty and not allow_empty:
        raise InputError(path, None, None, f"{table}: a header but no data rows")
    frame = frame.reset_index(drop=True).rename(columns=_SHADOW)  # a data column named file / row
    frame["file"] = str(path)
    frame["row"] = np.arange(1, len(frame) + 1)  # 1-based data row (CSV: the header is row 0)
    return frame


def existing(paths: Iterable[str | Path], table: str) -> list[str]:
    """The files of ``paths`` that exist, in order (inputs that another stage may not have
    written, such as the clip stage's judgements); none of them raises ``InputError``."""
    paths = [str(p) for p in paths]
    found = [p for p in paths if Path(p).exists()]
    if not found:
        raise InputError(
            ", ".join(paths) or f"<{table}>", None, None, f"none of the {table} tables exist"
        )
    return found


# ----- cell parsers -------------------------------------------------------------------------------
def as_text(series: pd.Series) -> pd.Series:
    """Ids and labels as stripped strings (42.0 -> "42"); null stays None, never "nan"."""
    present = series.notna().to_numpy(dtype=bool)
    out = np.full(len(series), None, dtype=object)
    if not present.any():
        return pd.Series(out, index=series.index, dtype=object)
    values = series if present.all() else series[present]
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_integer_dtype(values):
        text = values.astype(str)
    elif (
        isinstance(values.dtype, pd.StringDtype)
        or pd.api.types.infer_dtype(values, skipna=True) == "string"
    ):
        if isinstance(values.dtype, pd.StringDtype):  # each distinct value stripped once
            codes, uniques = pd.factorize(values)
            stripped = pd.Series(uniques).str.strip().to_numpy(dtype=object)
            out[present] = stripped[codes]
            return pd.Series(out, index=series.index, dtype=object)
        text = values.astype(str).str.strip()
    else:
        text = values.map(
            lambda v: str(int(v)) if isinstance(v, float) and v.is_integer() else str(v).strip()
        )
    out[present] = text.to_numpy(dtype=object)
    return pd.Series(out, index=series.index, dtype=object)


class TextCodes(NamedTuple):
    """A text column as codes into its distinct values (-1: null), each value a str or None.

    What ``validate`` reads the columns of Arrow-backed text (CSV and Parquet reads) through:
    stripping, null tokens, blanks, allowed values and set lookups run once per distinct value
    and reach the rows through ``codes``, so they equal the per-cell checks row for row."""

    codes: np.ndarray
    values: np.ndarray  # object: str or None

    @classmethod
    def of(cls, series: pd.Series, null_tokens: bool, nullable: bool) -> TextCodes | None:
        """``as_text`` (and the null-token / blank-to-null rule) per distinct value; None when
        ``series`` is not Arrow-backed text (the per-cell path then runs)."""
        if not isinstance(series.dtype, pd.StringDtype):
            return None
        codes, uniques = pd.factorize(series)
        values = pd.Series(uniques).str.strip().to_numpy(dtype=object)
        if null_tokens:
            drop = np.array([v.lower() in _NULL_TOKENS for v in values], dtype=bool)
        elif nullable:
            drop = np.array([v == "" for v in values], dtype=bool)
        else:
            drop = np.zeros(len(values), dtype=bool)
        values[drop] = None
        # stripped values may coincide (" a" and "a"): codes of the distinct results
        final, values = pd.factorize(pd.Series(values, dtype=object))
        final = np.append(final, -1)  # a null cell (code -1) stays null
        return cls(final[codes].astype(np.int64), np.asarray(values, dtype=object))

    def series(self, index: pd.Index) -> pd.Series:
        """The cells (object: str or None), as ``as_text`` and the null rule give them."""
        out = np.append(self.values, None)[self.codes]
        return pd.Series(out, index=index, dtype=object)

    def mask(self, per_value: np.ndarray, null: bool) -> np.ndarray:
        """A row mask from a mask over the distinct values (``null``: the null cells' value)."""
        return np.append(np.asarray(per_value, dtype=bool), null)[self.codes]

    def blank(self) -> np.ndarray:
        """``blank`` of the cells: null or the empty string."""
        return self.mask(np.array([v == "" for v in self.values], dtype=bool), True)

    def isin(self, allowed: Iterable[Any]) -> np.ndarray:
        """``Series.isin(allowed)`` of the cells (a null cell is not in it)."""
        wanted = pd.Index(self.values).isin(list(allowed))
        return self.mask(wanted, False)


def blank(series: pd.Series) -> pd.Series:
    """Null, or a value whose text is empty (only the empty string: no other value prints as "")."""
    empty = (
        (series == "").to_numpy(dtype=bool, na_value=False)
        if series.dtype != bool
        else np.zeros(len(series), bool)
    )
    return series.isna() | pd.Series(empty, index=series.index)


def parse_bool(series: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(parsed bool, ok mask) from bools, 0/1, true/false or yes/no
    strings (any case; booleans.py)."""
    if pd.api.types.is_bool_dtype(series):
        return series.astype(bool), pd.Series(True, index=series.index)
    text = as_text(series).fillna("").str.lower()
    return text.isin(TRUE_WORDS), text.isin(TRUE_WORDS | FALSE_WORDS)


def parse_float(series: pd.Series) -> pd.Series:
    return pd.to_numeric(series, errors="coerce")


def _bound(value: float) -> str:
    return str(int(value)) if np.isfinite(value) and float(value).is_integer() else f"{value:g}"


def check_int(chk: Checker, raw: pd.Series, name: str, low: float, high: float) -> pd.Series:
    """Integers as int64 in ``[low, high]``, else the row is rejected (-1 kept in its place)."""
    number = text_floats(raw)

    def text() -> pd.Series:
        return raw.map(
            lambda v: "" if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v)
        ).astype(object)

    finite = np.isfinite(number.fillna(0))
    chk.check(
        number.isna() | ~finite | (number != number.round()),
        name,
        lambda: "not an integer: '" + text() + "'",
    )
    bound = f"{_bound(low)}..{_bound(high)}" if np.isfinite(high) else f">= {_bound(low)}"
    chk.check(
        (number < low) | (number > high), name, lambda: f"out of range {bound}: '" + text() + "'"
    )
    ok = number.notna() & finite & (number >= low) & (number <= high)
    return number.where(ok, -1).round().astype("int64")


# ----- the spec -----------------------------------------------------------------------------------
ExtraCheck = Callable[[Checker, pd.DataFrame], None]


@dataclass(frozen=True)
class TableSpec:
    """Where a table lives, its columns and its key; ``read`` / ``check`` / ``write`` it.

    ``path``: the catalogue path (``{name}``: one file per configuration; a glob: one per store);
    ``key``: columns whose values occur once; ``checks``: the table's own row checks (run after
    the column checks, before the key); ``sort``: the order ``check`` returns rows in (``read``
    keeps the file's order); ``suffixes``: the formats it is read from.
    """

    name: str
    path: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()
    checks: tuple[ExtraCheck, ...] = ()
    sort: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = READ_SUFFIXES
    doc: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        """Every column, in the spec's order (the order a stage writes them in)."""
        return tuple(c.name for c in self.columns)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.required)

    @property
    def optional(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if not c.required)

    # ----- reading --------------------------------------------------------------------------
    def read(
        self, path: str | Path | None = None, require: Iterable[str] | None = None
    ) -> pd.DataFrame:
        """The validated table at ``path`` (default: the catalogue path) in the file's row order;
        the first bad row raises ``InputError`` naming file, row and field. ``require``: the
        columns this reader needs (default: the spec's required columns); the other columns of
        the spec are checked where present."""
        frame, _ = self.check(
            [path or self.path], on_bad_row="error", require=require, sort=False, allow_empty=True
        )
        return frame

    def read_if_present(
        self, path: str | Path | None = None, require: Iterable[str] | None = None
    ) -> pd.DataFrame | None:
        """``read``, or None when the file does not exist (the optional stage
        that writes it has not run)."""
        return self.read(path, require) if Path(path or self.path).exists() else None

    def read_many(
        self, paths: Iterable[str | Path], require: Iterable[str] | None = None
    ) -> pd.DataFrame:
        """Several files of this table as one validated frame (the key holds across files)."""
        frame, _ = self.check(
            list(paths), on_bad_row="error", require=require, sort=False, allow_empty=True
        )
        return frame

    def check(
        self,
        paths: str | Path | Sequence[str | Path],
        on_bad_row: str = "reject",
        require: Iterable[str] | None = None,
        sort: bool = True,
        extra: Sequence[ExtraCheck] = (),
        allow_empty: bool = False,
    ) -> Checked:
        """The valid rows (sorted by ``self.sort`` unless ``sort=False``) and the rejected ones
        (``on_bad_row="error"``: the first raises). ``frame.attrs["rows_in"]``: data rows read.
        ``extra``: the caller's row checks (``validate``). A table with a header but no data
        rows is an error unless ``allow_empty`` (``read``: a stage may write an empty table,
        e.g. no rewrites; ``analyze`` needs rows)."""
        if isinstance(paths, (str, Path)):
            paths = [paths]
        needed = list(self.required if require is None else require)
        frames = [read_frame(p, self.name, needed, self.suffixes, allow_empty) for p in paths]
        if not frames:
            raise InputError(f"<{self.name}>", None, None, f"no {self.name} table given")
        frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        chk = Checker(self.name, frame, on_bad_row)
        self.validate(chk, frame, extra=extra)
        out = (
            frame[~chk.bad]
            .drop(columns=["file", "row"])
            .rename(columns={v: k for k, v in _SHADOW.items()})
        )
        if sort and self.sort:
            out = out.sort_values(list(self.sort), kind="stable")
        out = out.reset_index(drop=True)
        out.attrs["rows_in"] = int(len(frame))
        return Checked(out, chk.rejects())

    def validate(
        self,
        chk: Checker,
        frame: pd.DataFrame,
        key: bool = True,
        allowed: dict[str, tuple[Any, ...]] | None = None,
        extra: Sequence[ExtraCheck] = (),
    ) -> None:
        """Coerce the spec's columns of ``frame`` in place and run every check on ``chk``.

        ``key=False`` leaves the key to the caller (the analysis's duplicate policy);
        ``allowed`` narrows a column's allowed values; ``extra``: the caller's row checks, run
        after the column checks and before the table's own."""
        allowed = allowed or {}
        present = [c for c in self.columns if c.name in frame.columns]
        for col in present:
            if col.kind == "text" and col.normalise is None:
                codes = TextCodes.of(frame[col.name], col.null_tokens, col.nullable)
                if codes is not None:
                    chk.codes[col.name] = codes
                    frame[col.name] = codes.series(frame.index)
                    continue
            if col.kind == "text":
                text = as_text(frame[col.name])
                if col.null_tokens:
                    text = text.where(~text.fillna("").str.lower().isin(_NULL_TOKENS), None)
                elif col.nullable:  # a blank cell is null (None, never NaN)
                    text = text.where(text.notna() & (text != ""), None)
                frame[col.name] = text
                if col.normalise is not None:
                    values = frame[col.name]  # each distinct value normalised once
                    table = {v: col.normalise(v) for v in values.dropna().unique()}
                    frame[col.name] = values.map(table.__getitem__, na_action="ignore")
        for col in present:  # pass 1: blank required fields
            if not col.nullable and col.kind == "text":
                codes = chk.codes.get(col.name)
                empty = blank(frame[col.name]) if codes is None else codes.blank()
                chk.check(empty, col.name, "empty")
            elif not col.nullable and col.kind in ("float", "bool", "any"):
                chk.check(frame[col.name].isna(), col.name, "empty")
        for col in present:  # pass 2: integers, booleans, numbers
            values = frame[col.name]
            if col.kind == "int":
                low = -np.inf if col.low is None else col.low
                high = np.inf if col.high is None else col.high
                missing = values.isna() if col.nullable else pd.Series(False, index=values.index)
                parsed = check_int(chk, values.where(~missing, 0), col.name, low, high)
                frame[col.name] = parsed.astype("Int64").mask(missing) if missing.any() else parsed
            elif col.kind == "bool" and not pd.api.types.is_bool_dtype(values):
                parsed, ok = parse_bool(values)
                empty = blank(values)
                chk.check(
                    ~ok & ~empty,
                    col.name,
                    lambda v=values: "expected true or false: '" + v.astype(str) + "'",
                )
                frame[col.name] = (
                    parsed.where(~empty, None) if col.nullable and empty.any() else parsed
                )
            elif col.kind == "float" and not pd.api.types.is_float_dtype(values):
                number = parse_float(values)
                chk.check(
                    number.isna() & values.notna(),
                    col.name,
                    lambda v=values: "not a number: '" + v.astype(str) + "'",
                )
                frame[col.name] = number
        for col in present:  # pass 3: allowed values and ranges
            values = frame[col.name]
            values_allowed = allowed.get(col.name, col.allowed)
            if values_allowed is not None:
                reason = col.unknown or (
                    f"unknown {col.name.replace('_', ' ')} '{{}}'; expected one of "
                    f"{', '.join(map(str, values_allowed))}"
                )
                head, _, tail = reason.partition("{}")
                codes = chk.codes.get(col.name)
                chk.check(
                    values.notna() & ~values.isin(values_allowed)
                    if codes is None
                    else ~codes.isin(values_allowed) & (codes.codes >= 0),
                    col.name,
                    lambda v=values, h=head, t=tail: h + v.astype(str) + t,
                )
            if col.kind == "float" and (col.low is not None or col.high is not None):
                low = -np.inf if col.low is None else col.low
                high = np.inf if col.high is None else col.high
                chk.check(
                    values.notna()
                    & ((values < low) | (values > high) | ~np.isfinite(values.fillna(0))),
                    col.name,
                    lambda v=values, b=f"{low:g}..{high:g}": (
                        f"out of range {b}: '" + v.astype(str) + "'"
                    ),
                )
        for run in (*extra, *self.checks):
            run(chk, frame)
        if key and self.key and all(k in frame.columns for k in self.key):
            self.check_key(chk, frame)

    def check_key(self, chk: Checker, frame: pd.DataFrame) -> None:
        """Rows whose key occurs more than once among the rows still valid: all rejected."""
        key = list(self.key)
        ok = frame[~chk.bad]
        dup_ok = ok.duplicated(key, keep=False)
        if not dup_ok.any():
            return
        counts = ok[dup_ok].groupby(key, dropna=False, observed=True)[key[0]].transform("size")
        n_rows = counts.reindex(frame.index)
        chk.check(
            frame.index.isin(ok.index[dup_ok.to_numpy()]),
            ",".join(key),
            "duplicate "
            + "/".join(key)
            + " ("
            + n_rows.fillna(0).astype(int).astype(str)
            + " rows)",
        )

    # ----- writing --------------------------------------------------------------------------
    def write(
        self, frame: pd.DataFrame, path: str | Path | None = None, extra: Sequence[ExtraCheck] = ()
    ) -> None:
        """Check ``frame`` (required columns, dtypes, allowed values, key; the first bad row
        raises naming the output file) and write it atomically (``io.write_table``)."""
        path = Path(path or self.path)
        missing = [c for c in self.required if c not in frame.columns]
        if missing and len(frame):  # an empty table (no rewrites, no rejects) is written as it is
            raise InputError(
                path,
                None,
                missing[0],
                f"missing column(s) {', '.join(missing)} ({self.name} table)",
            )
        if len(frame):
            probe = frame.reset_index(drop=True).rename(columns=_SHADOW)
            probe = probe.assign(file=str(path), row=np.arange(1, len(frame) + 1))
            chk = Checker(self.name, probe, "error")
            self.validate(chk, probe, extra=extra)
            chk.rejects()  # raises for the first bad row
        write_table(frame, path)
