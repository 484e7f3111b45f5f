"""Reading and validating the UNITS, JUDGEMENTS and image-index tables (CSV or Parquet).

Every row that does not validate is rejected with the file, its 1-based data row, the field
and a reason, and counted; with ``on_bad_row="error"`` the first one raises
``errors.InputError`` instead. Judgement keys ``(unit_id, variant, seed, config, judge, task)``
that occur more than once are reported; they are never averaged: with ``on_duplicate="drop"``
every row of such a key is left out (and listed), with ``"error"`` the first one raises.
Ids are read as strings. Invalid judgements (``valid`` false, ``value`` null) are kept as
missing values: they count in the reports and are left out of every mean.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.errors import ConfigError, InputError
from implicit_bench.io import read_table
from implicit_bench.judges.tasks import task_registry
from implicit_bench.params import SEED_MAX
from implicit_bench.schema import (
    BIAS_TYPES,
    JUDGEMENT_COLUMNS,
    NEGATED_VARIANTS,
    UNIT_COLUMNS,
    VARIANTS,
)

KEY = ["unit_id", "variant", "seed", "config", "judge", "task"]
ORDERS = ("sa", "as")  # blind option order: s is option A (sa) or a is (as)
CYCLIC_ORDERS = ("ans", "nsa", "san")  # three cyclic orders of a, neither, s (judges.tasks)
REJECT_COLUMNS = ["table", "file", "row", "field", "reason", "unit_id"]
IMAGE_COLUMNS = ["config", "unit_id", "variant", "seed", "status"]
IMAGE_STATUSES = ("ok", "refused", "failed")
_TRUE = {"true", "1", "yes", "t"}
_FALSE = {"false", "0", "no", "f"}


@dataclass
class Tables:
    """Validated inputs of the analysis.

    ``judgements`` keeps the JUDGEMENTS columns plus ``valid`` (bool), ``score`` (float: the
    rubric score, the CLIP lean, 1/0 for alignment; NaN for blind labels and invalid rows),
    ``file`` and ``row`` (where the row came from).
    """

    units: pd.DataFrame
    judgements: pd.DataFrame
    rejects: pd.DataFrame
    duplicates: pd.DataFrame
    images: pd.DataFrame | None = None
    files: dict[str, list[str]] = field(default_factory=dict)
    secondary_order_rows: int = 0  # blind rows of a non-primary option order, not analysed
    # the validated blind rows of a non-primary option order (the judge order audit reads them)
    secondary: pd.DataFrame | None = None
    rows_in: dict[str, int] = field(default_factory=dict)  # data rows read, per table

    def accounting(self) -> dict[str, dict[str, int]]:
        """Per table: rows read = analysed + rejected + duplicate rows (+ secondary-order rows).

        Rows of a duplicated key are listed in ``rejects`` with a "duplicate" reason; they are
        counted here under ``duplicates``, not ``rejected``. ``conserved`` checks the sum.
        """
        out: dict[str, dict[str, int]] = {}
        kept = {"units": len(self.units), "judgements": len(self.judgements),
                "images": 0 if self.images is None else len(self.images)}
        for table, rows_in in self.rows_in.items():
            rej = self.rejects[self.rejects["table"] == table] if len(self.rejects) else self.rejects
            dup = int(rej["reason"].astype(str).str.startswith("duplicate").sum()) if len(rej) else 0
            secondary = self.secondary_order_rows if table == "judgements" else 0
            entry = {"rows_in": rows_in, "analysed": kept[table], "rejected": len(rej) - dup,
                     "duplicates": dup, "secondary_order": secondary}
            entry["conserved"] = int(rows_in == kept[table] + len(rej) + secondary)
            out[table] = entry
        return out

    def summary(self) -> dict[str, Any]:
        """Counts of what was read, rejected, duplicated and invalid (for the metrics JSON)."""
        j = self.judgements
        invalid = j[~j["valid"]]
        by_reason = (
            self.rejects.groupby(["table", "reason"]).size().reset_index(name="rows")
            if len(self.rejects)
            else pd.DataFrame(columns=["table", "reason", "rows"])
        )
        return {
            "files": self.files,
            "units": int(len(self.units)),
            "judgements": int(len(j)),
            "judgements_invalid": int(len(invalid)),
            **rubric_fractional(j),
            "invalid_by_task": {k: int(v) for k, v in invalid["task"].value_counts().sort_index().items()},
            "rejected_rows": int(len(self.rejects)),
            "rejected_by_table": {
                k: int(v) for k, v in self.rejects["table"].value_counts().sort_index().items()
            },
            "rejected_by_reason": [
                {"table": r.table, "reason": r.reason, "rows": int(r.rows)} for r in by_reason.itertuples()
            ],
            "duplicate_keys": int(len(self.duplicates)),
            "duplicate_rows": int(self.duplicates["n_rows"].sum()) if len(self.duplicates) else 0,
            "duplicate_examples": self.duplicates.head(5).to_dict(orient="records"),
            "secondary_order_rows": self.secondary_order_rows,
            "image_index_rows": None if self.images is None else int(len(self.images)),
            "accounting": self.accounting(),
        }


def rubric_fractional(judgements: pd.DataFrame) -> dict[str, Any]:
    """Valid rubric values that are not integers (means of repeated judgements): the count,
    per judge, and the distinct fractional parts seen (e.g. 0.25, 0.333, 0.5)."""
    rub = judgements[(judgements["task"] == "rubric") & judgements["valid"]]
    score = rub["score"].astype(float)
    frac = rub[score != score.round()]
    parts = sorted({round(float(v) % 1, 3) for v in frac["score"]})
    return {
        "rubric_fractional": int(len(frac)),
        "rubric_fractional_by_judge": {str(k): int(v) for k, v in frac["judge"].astype(str).value_counts().sort_index().items()},
        "rubric_fractional_parts": parts,
    }


Reason = str | pd.Series | Callable[[], "str | pd.Series"]


class _Checker:
    """Collects rejected rows of one table; the first failing check names a row's reason."""

    def __init__(self, table: str, frame: pd.DataFrame, on_bad_row: str):
        self.table = table
        self.frame = frame
        self.on_bad_row = on_bad_row
        self.bad = pd.Series(False, index=frame.index)
        self.rows: list[pd.DataFrame] = []

    def check(self, failing: pd.Series | np.ndarray, field_name: str, reason: Reason) -> None:
        """Reject the rows where ``failing`` holds; ``reason`` (text, one text per row, or a
        function returning either) is only built when a row fails: building a message for
        every row of a large valid table costs more than all the checks."""
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


def _read(path: str | Path, table: str, required: Sequence[str]) -> pd.DataFrame:
    path = Path(path)
    suffix = "".join(path.suffixes[-2:]) if path.suffix == ".gz" else path.suffix
    if suffix not in (".csv", ".csv.gz", ".parquet", ".pq"):
        raise InputError(path, None, None, f"{table}: expected a .csv or .parquet file, got '{suffix}'")
    frame = read_table(path, dtype=str) if suffix.startswith(".csv") else read_table(path)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(path, None, missing[0], f"{table}: missing column(s) {', '.join(missing)}")
    if frame.empty:
        raise InputError(path, None, None, f"{table}: a header but no data rows")
    frame = frame.reset_index(drop=True)
    frame["file"] = str(path)
    frame["row"] = np.arange(1, len(frame) + 1)  # 1-based data row (CSV: the header is row 0)
    return frame


def _as_text(series: pd.Series) -> pd.Series:
    """Ids and labels as stripped strings (42.0 -> "42"); null stays None, never "nan"."""
    present = series.notna().to_numpy(dtype=bool)
    out = np.full(len(series), None, dtype=object)
    if not present.any():
        return pd.Series(out, index=series.index, dtype=object)
    values = series if present.all() else series[present]
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_integer_dtype(values):
        text = values.astype(str)
    elif isinstance(values.dtype, pd.StringDtype) or pd.api.types.infer_dtype(values, skipna=True) == "string":
        text = (values if isinstance(values.dtype, pd.StringDtype) else values.astype(str)).str.strip()
    else:
        text = values.map(lambda v: str(int(v)) if isinstance(v, float) and v.is_integer() else str(v).strip())
    out[present] = text.to_numpy(dtype=object)
    return pd.Series(out, index=series.index, dtype=object)


def _blank(series: pd.Series) -> pd.Series:
    """Null, or a value whose text is empty (only the empty string: no other value prints as "")."""
    empty = (series == "").to_numpy(dtype=bool, na_value=False) if series.dtype != bool else np.zeros(len(series), bool)
    return series.isna() | pd.Series(empty, index=series.index)


def normalise_bias_type(value: Any) -> str | None:
    """``"Race_color"``/``"race color"`` -> ``"race-color"``; the 11 types of schema.BIAS_TYPES."""
    if value is None:
        return None
    return str(value).strip().lower().replace("_", "-").replace(" ", "-")


def load_units(path: str | Path, on_bad_row: str = "reject") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Validated UNITS (one row per unit) and the rejected rows."""
    frame = _read(path, "units", UNIT_COLUMNS)
    for col in UNIT_COLUMNS:
        frame[col] = _as_text(frame[col])
    rel = frame["relation"]
    frame["relation"] = rel.where(~rel.fillna("").str.lower().isin(["", "nan", "none", "null"]), None)
    frame["bias_type"] = frame["bias_type"].map(normalise_bias_type)
    chk = _Checker("units", frame, on_bad_row)
    for col in UNIT_COLUMNS:
        if col != "relation":
            chk.check(_blank(frame[col]), col, "empty")
    chk.check(
        ~frame["bias_type"].isin(BIAS_TYPES),
        "bias_type",
        "unknown bias type '" + frame["bias_type"].astype(str) + f"'; expected one of {', '.join(BIAS_TYPES)}",
    )
    ok = frame[~chk.bad]
    counts = ok["unit_id"].value_counts()
    dup = frame["unit_id"].isin(counts[counts > 1].index) & ~chk.bad
    chk.check(
        dup,
        "unit_id",
        "duplicate unit_id (" + frame["unit_id"].map(counts).fillna(0).astype(int).astype(str) + " rows)",
    )
    units = frame[~chk.bad].drop(columns=["file", "row"]).sort_values("unit_id").reset_index(drop=True)
    units.attrs["rows_in"] = int(len(frame))
    return units, chk.rejects()


def _parse_bool(series: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(parsed bool, ok mask) from bools, 0/1 or true/false strings (any case)."""
    if pd.api.types.is_bool_dtype(series):
        return series.astype(bool), pd.Series(True, index=series.index)
    text = _as_text(series).fillna("").str.lower()
    return text.isin(_TRUE), text.isin(_TRUE | _FALSE)


def _parse_float(series: pd.Series) -> pd.Series:
    return pd.to_numeric(series, errors="coerce")


def _check_seed(chk: _Checker, raw: pd.Series) -> pd.Series:
    """Seeds as int64: an integer 0..SEED_MAX (2^53-1), else the row is rejected (-1 kept)."""
    seed = _parse_float(raw).astype(float)

    def text() -> pd.Series:
        return raw.map(lambda v: "" if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v)).astype(object)

    chk.check(seed.isna() | ~np.isfinite(seed.fillna(0)) | (seed != seed.round()), "seed", lambda: "not an integer: '" + text() + "'")
    chk.check((seed < 0) | (seed > SEED_MAX), "seed", lambda: "out of range 0.." + str(SEED_MAX) + ": '" + text() + "'")
    ok = seed.notna() & np.isfinite(seed.fillna(0)) & (seed >= 0) & (seed <= SEED_MAX)
    return seed.where(ok, -1).round().astype("int64")


def load_judgements(
    paths: Iterable[str | Path],
    units: pd.DataFrame,
    on_bad_row: str = "reject",
    on_duplicate: str = "drop",
    primary_order: str = "hash",
    with_secondary: bool = False,
) -> tuple[pd.DataFrame, ...]:
    """Validated JUDGEMENTS (all files together), rejected rows, and duplicate keys (and, with
    ``with_secondary``, the validated blind rows of a non-primary order as a fourth item).

    A blind image asked under both option orders (two rows told apart by ``order``) keeps the
    row of its primary order (``primary_order``: ``hash`` = the order the judge stage uses
    when it asks once, ``judges.tasks.blind_order``; or ``sa`` / ``as``); the other rows are
    counted in ``judgements.attrs["secondary_order_rows"]``, not analysed. An image asked
    several times without a row in its primary order is rejected.
    """
    frames = [_read(p, "judgements", JUDGEMENT_COLUMNS) for p in paths]
    if not frames:
        raise InputError("<judgements>", None, None, "no judgement table given")
    keep_cols = [*JUDGEMENT_COLUMNS, "valid", "model", "order", "file", "row"]
    frame = pd.concat([f.reindex(columns=keep_cols) for f in frames], ignore_index=True)
    for col in ("unit_id", "variant", "config", "judge", "task", "value", "model", "order"):
        frame[col] = _as_text(frame[col])
    frame["order"] = frame["order"].where(~_blank(frame["order"]), None)
    chk = _Checker("judgements", frame, on_bad_row)
    for col in ("unit_id", "variant", "config", "judge", "task"):
        chk.check(_blank(frame[col]), col, "empty")
    frame["seed"] = _check_seed(chk, frame["seed"])
    known_variants = (*VARIANTS, *NEGATED_VARIANTS)
    chk.check(
        ~frame["variant"].isin(known_variants),
        "variant",
        lambda: "unknown variant '" + frame["variant"].astype(str) + f"'; expected one of {', '.join(known_variants)}",
    )
    registry = task_registry()
    chk.check(
        ~frame["task"].isin(registry.names()),
        "task",
        lambda: "unknown task '" + frame["task"].astype(str) + f"'; expected one of {', '.join(registry.names())}",
    )
    chk.check(~frame["unit_id"].isin(set(units["unit_id"])), "unit_id", "unit_id not in the units table")
    chk.check(frame["order"].notna() & ~frame["order"].isin((*ORDERS, *CYCLIC_ORDERS)), "order", lambda: "order must be sa, as, a cyclic order (ans, nsa, san) or empty, got '" + frame["order"].astype(str) + "'")
    has_value = ~_blank(frame["value"])
    if frame["valid"].isna().all():
        valid = has_value.copy()
    else:
        parsed, valid_ok = _parse_bool(frame["valid"])
        blank_valid = _blank(frame["valid"])
        chk.check(~valid_ok & ~blank_valid, "valid", lambda: "expected true or false: '" + frame["valid"].astype(str) + "'")
        valid = parsed.where(~blank_valid, has_value)  # a blank ``valid`` means "has a value"
    chk.check(~valid & has_value, "value", "valid is false but a value is set")
    chk.check(valid & ~has_value, "value", "valid is true but the value is empty")
    # Each task's values are checked by its answer kind (judges/answers.py): rubric a number in
    # 0..5 (a real value is the mean of repeated judgements, counted: rubric_fractional); blind
    # s, a or neither (never the letter); alignment true or false; clip_lean a number in
    # [-2, 2] on the neutral image. ``score``: the kind's number (1/0 for yes / no), else NaN.
    score = pd.Series(np.nan, index=frame.index)
    present = set(frame["task"].dropna().unique())
    for spec in registry:
        if spec.name not in present:
            continue
        rows = frame["task"] == spec.name
        ok = valid & rows
        problems, numbers = spec.kind.check_stored(frame.loc[ok, "value"], spec)
        for failing, reason in problems:
            if isinstance(reason, pd.Series):
                reason = reason.reindex(frame.index)
            chk.check(failing.reindex(frame.index, fill_value=False), "value", reason)
        score[ok] = numbers
        if spec.variants is not None:
            shown = " / ".join(spec.variants)
            chk.check(
                rows & ~frame["variant"].isin(spec.variants),
                "variant",
                f"{spec.name} rows describe the {shown} image: variant must be "
                + " or ".join(f"'{v}'" for v in spec.variants),
            )
    frame["valid"] = valid.astype(bool)
    frame["score"] = score
    frame.loc[~frame["valid"], "value"] = None
    # A blind image may be asked under both option orders (rows told apart by ``order``).
    frame["_order_key"] = frame["order"].where(frame["task"] == "blind", None).fillna("")
    dkey = [*KEY, "_order_key"]
    ok = frame[~chk.bad]
    dup_mask = ok.duplicated(dkey, keep=False)
    duplicates = pd.DataFrame(columns=[*KEY, "order", "n_rows", "rows"])
    if dup_mask.any():
        dups = ok[dup_mask]
        if on_duplicate == "error":
            second = dups[dups.duplicated(dkey, keep="first")].iloc[0]
            raise InputError(
                second["file"], int(second["row"]), ",".join(KEY),
                f"duplicate judgement key {tuple(second[k] for k in KEY)}",
            )
        where = dups["file"] + ":" + dups["row"].astype(str)
        duplicates = (
            dups.assign(where=where)
            .groupby(dkey, sort=True)
            .agg(n_rows=("where", "size"), rows=("where", lambda s: ";".join(s)))
            .reset_index()
            .rename(columns={"_order_key": "order"})
        )
        n_rows = dups.groupby(dkey)["row"].transform("size").reindex(frame.index)
        chk.check(
            frame.index.isin(dups.index),
            ",".join(KEY),
            "duplicate key (" + n_rows.fillna(0).astype(int).astype(str) + " rows): not averaged, all left out",
        )
    secondary = _secondary_orders(frame, ~chk.bad, primary_order)
    multi, wanted = secondary
    if multi.any():
        has_primary = (multi & wanted).groupby([frame[k] for k in KEY], observed=True, dropna=False).transform("any")
        chk.check(multi & ~has_primary, "order", "image asked under several orders, none of them the primary order " + primary_order)
    secondary_mask = multi & ~wanted & ~chk.bad
    n_secondary = int(secondary_mask.sum())
    chk.bad |= multi & ~wanted
    judgements = frame[~chk.bad].drop(columns="_order_key").reset_index(drop=True)
    judgements.attrs["secondary_order_rows"] = n_secondary
    judgements.attrs["rows_in"] = int(len(frame))
    secondary = frame[secondary_mask].drop(columns="_order_key").reset_index(drop=True)
    for col in ("variant", "config", "judge", "task"):  # few distinct values: fast comparisons
        judgements[col] = judgements[col].astype("category")
    if with_secondary:
        return judgements, chk.rejects(), duplicates, secondary
    return judgements, chk.rejects(), duplicates


def _secondary_orders(frame: pd.DataFrame, ok: pd.Series, primary_order: str) -> tuple[pd.Series, pd.Series]:
    """(blind rows of an image asked more than once, whether the row has the primary order)."""
    blind = ok & (frame["task"] == "blind")
    counts = frame[blind].groupby(KEY, observed=True)["row"].transform("size").reindex(frame.index)
    multi = blind & (counts.fillna(0) > 1)
    wanted = pd.Series(False, index=frame.index)
    if multi.any():
        sub = frame[multi]
        cyclic = sub["order"].isin(CYCLIC_ORDERS).to_numpy()
        if primary_order == "hash" or cyclic.any():
            try:
                from implicit_bench.judges.tasks import (
                    primary_order as primary_of,  # the judge stage's own rule
                )
            except ImportError as exc:
                raise ConfigError(f"primary_order 'hash' needs implicit_bench.judges.tasks ({exc}); set sa or as") from None
        if primary_order == "hash":
            target = [primary_of(u, int(sd), v, o) for u, sd, v, o in zip(sub["unit_id"], sub["seed"], sub["variant"], sub["order"], strict=True)]
        else:  # a fixed two-order primary; cyclic rows keep their hash-drawn order 1
            target = [
                primary_of(u, int(sd), v, o) if c else primary_order
                for u, sd, v, o, c in zip(sub["unit_id"], sub["seed"], sub["variant"], sub["order"], cyclic, strict=True)
            ]
        wanted[multi] = sub["order"].to_numpy(dtype=object) == pd.Series(target, index=sub.index).to_numpy(dtype=object)
    return multi, wanted


def load_images(paths: Iterable[str | Path], on_bad_row: str = "reject") -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """Image-index (or refusal) tables: ``config, unit_id, variant, seed, status [, reason]``."""
    paths = list(paths)
    if not paths:
        return None, pd.DataFrame(columns=REJECT_COLUMNS)
    frames = [_read(p, "images", IMAGE_COLUMNS) for p in paths]
    frame = pd.concat([f.reindex(columns=[*IMAGE_COLUMNS, "reason", "file", "row"]) for f in frames], ignore_index=True)
    for col in ("config", "unit_id", "variant", "status", "reason"):
        frame[col] = _as_text(frame[col])
    chk = _Checker("images", frame, on_bad_row)
    for col in ("config", "unit_id", "variant"):
        chk.check(_blank(frame[col]), col, "empty")
    frame["seed"] = _check_seed(chk, frame["seed"])
    chk.check(~frame["status"].isin(IMAGE_STATUSES), "status", "status must be ok, refused or failed")
    key = ["config", "unit_id", "variant", "seed"]
    ok = frame[~chk.bad]
    chk.check(frame.index.isin(ok[ok.duplicated(key, keep=False)].index), ",".join(key), "duplicate image key")
    images = frame[~chk.bad].drop(columns=["file", "row"]).reset_index(drop=True)
    images.attrs["rows_in"] = int(len(frame))
    return images, chk.rejects()


def image_index_paths(pattern: str | None) -> list[str]:
    """The image-index tables matching ``pattern`` that exist (sorted); none is fine."""
    return sorted(glob.glob(pattern)) if pattern else []


def load_tables(
    units_path: str | Path,
    judgement_paths: Sequence[str | Path],
    image_paths: Sequence[str | Path] = (),
    on_bad_row: str = "reject",
    on_duplicate: str = "drop",
    primary_order: str = "hash",
) -> Tables:
    """Load and validate everything the analysis reads."""
    units, unit_rejects = load_units(units_path, on_bad_row)
    judgements, j_rejects, duplicates, secondary = load_judgements(
        judgement_paths, units, on_bad_row, on_duplicate, primary_order, with_secondary=True
    )
    images, i_rejects = load_images(image_paths, on_bad_row)
    rejects = pd.concat(
        [r for r in (unit_rejects, j_rejects, i_rejects) if len(r)] or [pd.DataFrame(columns=REJECT_COLUMNS)],
        ignore_index=True,
    )
    files = {
        "units": [str(units_path)],
        "judgements": [str(p) for p in judgement_paths],
        "images": [str(p) for p in image_paths],
    }
    rows_in = {"units": int(units.attrs["rows_in"]), "judgements": int(judgements.attrs["rows_in"])}
    if images is not None:
        rows_in["images"] = int(images.attrs["rows_in"])
    return Tables(units, judgements, rejects, duplicates, images, files,
                  int(judgements.attrs.get("secondary_order_rows", 0)), secondary, rows_in)
