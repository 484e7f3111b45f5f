"""JUDGEMENTS rows: the per-task value checks, and the readers and writer that run them.

The catalogue's ``JUDGEMENTS`` spec checks the columns (ids, seed, variant, option order).
The values are checked here, against the judge-task registry (``judge_tasks``: each task's
answer kind and the variants it may describe), so that the catalogue module itself does not
import the judge code (a stage that never reads judgements does not depend on judges/):

- ``read_judgements(paths)``: every row of the files, checked (the first bad row raises);
  blind rows of every option order kept (what the audits, debias_score and recovery read);
- ``write_judgements(frame, path)``: checked, then written atomically (judge, clip stages);
- ``check_judgements(paths, units, ...)``: what ``implicit-bench analyze`` and the select /
  evaluate stages read: the analysed variants only, every unit known, and the duplicate and
  option-order policies of docs/byo-judgements.md. Judgement keys ``(unit_id, variant, seed,
  config, judge, task)`` that occur more than once are reported, never averaged: with
  ``on_duplicate="drop"`` every row of such a key is left out (and listed), with ``"error"`` the
  first one raises. Invalid judgements (``valid`` false, ``value`` null) are kept as missing
  values: they count in the reports and are left out of every mean.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from implicit_bench._util.timings import phase
from implicit_bench.errors import InputError
from implicit_bench.protocol.judge_tasks import task_registry
from implicit_bench.protocol.schema import (
    ALL_VARIANTS,
    CYCLIC_ORDERS,
    JUDGEMENT_KEY,
    NEGATED_VARIANTS,
    VARIANTS,
)
from implicit_bench.protocol.schema import (
    primary_order as primary_of,
)
from implicit_bench.protocol.tables import JUDGEMENTS
from implicit_bench.protocol.tables.spec import Checker, TextCodes, blank, parse_bool, read_frame

KEY = list(JUDGEMENT_KEY)
ANALYSED_VARIANTS: tuple[str, ...] = (*VARIANTS, *NEGATED_VARIANTS)
# Protocol variants other stages read (the scene check's subject-only template, the direct
# arm's prompts): set aside and counted, neither analysed nor rejected.
OTHER_VARIANTS: tuple[str, ...] = tuple(v for v in ALL_VARIANTS if v not in ANALYSED_VARIANTS)


def value_checks(chk: Checker, frame: pd.DataFrame) -> None:
    """Known tasks; ``valid`` true or false (blank: "has a value"); an invalid row has no value
    and a valid one has one; each task's values by its answer kind (answer_kinds.py: rubric a
    number in 0..5, a real value being the mean of repeated judgements; blind s, a or neither,
    never the letter; alignment true or false; clip_lean a number in [-2, 2] on the neutral
    image). Sets ``valid`` (bool) and ``score`` (the kind's number, 1/0 for yes / no; NaN for
    labels and invalid rows)."""
    registry = task_registry()
    names = registry.names()
    chk.check(
        ~chk.isin("task", names),
        "task",
        lambda: (
            "unknown task '" + frame["task"].astype(str) + f"'; expected one of {', '.join(names)}"
        ),
    )
    has_value = ~chk.blank("value")
    if "valid" not in frame.columns or frame["valid"].isna().all():
        valid = has_value.copy()
    else:
        parsed, valid_ok = parse_bool(frame["valid"])
        blank_valid = blank(frame["valid"])
        chk.check(
            ~valid_ok & ~blank_valid,
            "valid",
            lambda: "expected true or false: '" + frame["valid"].astype(str) + "'",
        )
        valid = parsed.where(~blank_valid, has_value)  # a blank ``valid`` means "has a value"
    chk.check(~valid & has_value, "value", "valid is false but a value is set")
    chk.check(valid & ~has_value, "value", "valid is true but the value is empty")
    score = pd.Series(np.nan, index=frame.index)
    present = set(frame["task"].dropna().unique())
    for spec in registry:
        if spec.name not in present:
            continue
        rows = chk.isin("task", [spec.name])
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
                rows & ~chk.isin("variant", spec.variants),
                "variant",
                f"{spec.name} rows describe the {shown} image: variant must be "
                + " or ".join(f"'{v}'" for v in spec.variants),
            )
    frame["valid"] = valid.astype(bool)
    frame["score"] = score


def read_judgements(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """The JUDGEMENTS rows of ``paths`` (one file or several) in file order, columns and values
    checked (the first bad row raises ``InputError``); ``valid`` as bool."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    frame, _ = JUDGEMENTS.check(
        paths, on_bad_row="error", sort=False, extra=(value_checks,), allow_empty=True
    )
    return frame.drop(columns="score")


def write_judgements(frame: pd.DataFrame, path: str | Path) -> None:
    """Check ``frame`` as JUDGEMENTS rows (values included) and write it atomically."""
    JUDGEMENTS.write(frame, path, extra=(value_checks,))


def check_judgements(
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
    row of its primary order (``primary_order``: ``hash`` = the order the judge stage uses when it
    asks once, ``schema.blind_order``; or ``sa`` / ``as``); the other rows are counted in
    ``judgements.attrs["secondary_order_rows"]``, not analysed. An image asked several times
    without a row in its primary order is rejected. Rows of ``OTHER_VARIANTS`` (read by other
    stages) are set aside before the checks and counted per variant in
    ``judgements.attrs["other_variant_rows"]``. Rows keep ``file`` and ``row``.
    """
    paths = list(paths)
    seen: dict[Path, str | Path] = {}
    for path in paths:  # the same file twice would make every row a duplicate key, all dropped
        real = Path(path).resolve()
        if real in seen:
            raise InputError(
                path,
                None,
                None,
                f"judgements file given twice (also as {seen[real]}): give each file once",
            )
        seen[real] = path
    with phase("load.read"):
        # one of several files may be empty (a benchmark phase that asked nothing writes a
        # header only); all of them empty is an error, as one empty file is
        several = len(paths) > 1
        frames = [
            read_frame(p, "judgements", JUDGEMENTS.required, allow_empty=several) for p in paths
        ]
    if not frames:
        raise InputError("<judgements>", None, None, "no judgement table given")
    if all(f.empty for f in frames):
        raise InputError(paths[0], None, None, "judgements: a header but no data rows")
    keep_cols = [*JUDGEMENTS.required, "valid", "model", "order", "file", "row"]
    frame = pd.concat([f.reindex(columns=keep_cols) for f in frames], ignore_index=True)
    rows_in = int(len(frame))
    other = frame["variant"].isin(OTHER_VARIANTS).to_numpy(dtype=bool)
    other_rows = {str(k): int(v) for k, v in frame.loc[other, "variant"].value_counts().items()}
    if other.any():
        frame = frame[~other].reset_index(drop=True)
    chk = Checker("judgements", frame, on_bad_row)
    known_units = set(units["unit_id"])
    JUDGEMENTS.validate(
        chk,
        frame,
        key=False,
        allowed={"variant": ANALYSED_VARIANTS},
        extra=(
            lambda c, f: c.check(
                ~c.isin("unit_id", known_units), "unit_id", "unit_id not in the units table"
            ),
            value_checks,
        ),
    )
    frame.loc[~frame["valid"], "value"] = None
    # A blind image may be asked under several option orders (rows told apart by ``order``).
    blind = chk.isin("task", ["blind"])
    frame["_order_key"] = frame["order"].where(blind, None).fillna("")
    dkey = [*KEY, "_order_key"]
    ok = frame[~chk.bad]
    dup_mask = _key_codes(chk, frame, blind)[~chk.bad].duplicated(keep=False)
    duplicates = pd.DataFrame(columns=[*KEY, "order", "n_rows", "rows"])
    if dup_mask.any():
        dups = ok[dup_mask]
        if on_duplicate == "error":
            second = dups[dups.duplicated(dkey, keep="first")].iloc[0]
            raise InputError(
                second["file"],
                int(second["row"]),
                ",".join(KEY),
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
            "duplicate key ("
            + n_rows.fillna(0).astype(int).astype(str)
            + " rows): not averaged, all left out",
        )
    multi, wanted = _secondary_orders(frame, ~chk.bad, primary_order)
    if multi.any():
        has_primary = (
            (multi & wanted)
            .groupby([frame[k] for k in KEY], observed=True, dropna=False)
            .transform("any")
        )
        chk.check(
            multi & ~has_primary,
            "order",
            "image asked under several orders, none of them the primary order " + primary_order,
        )
    secondary_mask = multi & ~wanted & ~chk.bad
    n_secondary = int(secondary_mask.sum())
    chk.bad |= multi & ~wanted
    judgements = frame[~chk.bad].drop(columns="_order_key").reset_index(drop=True)
    judgements.attrs["secondary_order_rows"] = n_secondary
    judgements.attrs["other_variant_rows"] = dict(sorted(other_rows.items()))
    judgements.attrs["rows_in"] = rows_in
    secondary = frame[secondary_mask].drop(columns="_order_key").reset_index(drop=True)
    kept = ~chk.bad.to_numpy(dtype=bool)
    for col in ("variant", "config", "judge", "task"):  # few distinct values: fast comparisons
        judgements[col] = _category(judgements[col], chk.codes.get(col), kept)
    if with_secondary:
        return judgements, chk.rejects(), duplicates, secondary
    return judgements, chk.rejects(), duplicates


def _category(values: pd.Series, codes: TextCodes | None, kept: np.ndarray) -> pd.Series:
    """``values.astype("category")``; with the column's codes (``values`` = its ``kept`` rows),
    the categories come from the distinct values present (the same dtype ``astype`` gives)
    and the rows from the codes, without hashing every cell again."""
    rows = None if codes is None else codes.codes[kept]
    if rows is None or len(rows) != len(values):
        return values.astype("category")
    present = np.unique(rows[rows >= 0])
    dtype = pd.Series(codes.values[present], dtype=object).astype("category").dtype
    lookup = np.full(len(codes.values) + 1, -1, dtype=np.int64)  # the last: a null cell
    lookup[present] = dtype.categories.get_indexer(codes.values[present])
    cat = pd.Categorical.from_codes(lookup[rows], dtype=dtype)
    return pd.Series(cat, index=values.index, name=values.name)


def _key_codes(chk: Checker, frame: pd.DataFrame, blind: pd.Series) -> pd.DataFrame:
    """The duplicate key (``KEY`` and the blind rows' order) as integer codes, one column each:
    equal codes where the values are equal (null equal to null), so ``duplicated`` on them marks
    the rows it marks on the text columns; the text columns' codes come from ``validate``."""

    def codes(column: str) -> np.ndarray:
        kept = chk.codes.get(column)
        return kept.codes if kept is not None else pd.factorize(frame[column])[0]

    out = {c: codes(c) if c != "seed" else frame[c].to_numpy() for c in KEY}
    order = codes("order")  # "" (not blind, or no order) is -1: an order is never blank
    out["_order_key"] = np.where(blind.to_numpy(dtype=bool), order, -1)
    return pd.DataFrame(out, index=frame.index)


def _secondary_orders(
    frame: pd.DataFrame, ok: pd.Series, primary: str
) -> tuple[pd.Series, pd.Series]:
    """(blind rows of an image asked more than once, whether the row has the primary order)."""
    blind = ok & (frame["task"] == "blind")
    counts = frame[blind].groupby(KEY, observed=True)["row"].transform("size").reindex(frame.index)
    multi = blind & (counts.fillna(0) > 1)
    wanted = pd.Series(False, index=frame.index)
    if multi.any():
        sub = frame[multi]
        cyclic = sub["order"].isin(CYCLIC_ORDERS).to_numpy()
        if primary == "hash":
            target = [
                primary_of(u, int(sd), v, o)
                for u, sd, v, o in zip(
                    sub["unit_id"], sub["seed"], sub["variant"], sub["order"], strict=True
                )
            ]
        else:  # a fixed two-order primary; cyclic rows keep their hash-drawn order 1
            target = [
                primary_of(u, int(sd), v, o) if c else primary
                for u, sd, v, o, c in zip(
                    sub["unit_id"], sub["seed"], sub["variant"], sub["order"], cyclic, strict=True
                )
            ]
        wanted[multi] = sub["order"].to_numpy(dtype=object) == pd.Series(
            target, index=sub.index
        ).to_numpy(dtype=object)
    return multi, wanted
