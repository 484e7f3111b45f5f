"""Rating bundles' manifests and the raters' answer CSVs, read and checked against their
manifests (``human-eval import``); the report on them is ``study.py``."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.errors import InputError
from implicit_bench.human_eval.form import ANSWER_COLUMNS, KG_ANSWERS
from implicit_bench.human_eval.manifest_schema import check_rating_manifest

RATING_ITEMS = ("rating_1", "rating_2", "rating_3")
# the two frames the answers are read into (also the release's study: release/human_study.py)
RATING_COLUMNS = (
    "bundle_id",
    "rater",
    "case",
    "unit_id",
    "bias_type",
    "seed",
    "position",
    "variant",
    "rating",
)
KG_ANSWER_COLUMNS = ("bundle_id", "rater", "case", "unit_id", "bias_type", "answer")


def read_manifest(path: str | Path) -> dict[str, Any]:
    """One bundle manifest; a missing file or one that is not a JSON object names the file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, None, "manifest not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(path, None, None, f"not a JSON manifest ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(path, None, None, "not a bundle manifest (expected a JSON object)")
    return data


def manifests_by_id(
    paths: list[str | Path],
    required: tuple[str, ...],
    missing: str,
    check: Callable[[str | Path, dict[str, Any]], None] | None = None,
    validate: Callable[[str | Path, dict[str, Any]], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Bundle manifests by bundle id: each read by :func:`read_manifest`, checked (``check``),
    holding the ``required`` keys (else ``missing`` names the key), of a valid structure
    (``validate``, :mod:`implicit_bench.human_eval.manifest_schema`), no bundle id twice."""
    manifests: dict[str, dict[str, Any]] = {}
    for path in paths:
        data = read_manifest(path)
        if check is not None:
            check(path, data)
        for key in required:
            if key not in data:
                raise InputError(path, None, key, missing)
        if validate is not None:
            validate(path, data)
        if data["bundle_id"] in manifests:
            raise InputError(path, None, "bundle_id", f"bundle {data['bundle_id']} given twice")
        manifests[data["bundle_id"]] = data
    return manifests


def load_manifests(paths: list[str | Path]) -> dict[str, dict[str, Any]]:
    """Rating-bundle manifests by bundle id."""
    return manifests_by_id(
        paths,
        ("bundle_id", "cases", "sampling"),
        "not a rating-bundle manifest",
        validate=check_rating_manifest,
    )


def read_answers(
    paths: list[str | Path], manifests: dict[str, dict[str, Any]]
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """Validate the answer CSVs; return (ratings, kg answers, counts).

    ratings: bundle_id, rater, case, unit_id, bias_type, seed, position, variant, rating.
    kg: bundle_id, rater, case, unit_id, bias_type, answer.
    """
    cases = {(b, c["case"]): c for b, m in manifests.items() for c in m["cases"]}
    ratings, kg, seen = [], [], {}
    counts = {"files": 0, "rows": 0, "unanswered_items": 0}
    for path in paths:
        frame = _read_answer_csv(path)
        counts["files"] += 1
        missing = [c for c in ANSWER_COLUMNS if c not in frame.columns and c != "saved_at"]
        if missing:
            raise InputError(path, None, missing[0], f"missing answer columns {missing}")
        for i, row in enumerate(frame.to_dict("records"), start=1):
            counts["rows"] += 1
            bundle, case_id, rater = (
                row["bundle_id"].strip(),
                row["case"].strip(),
                row["rater"].strip(),
            )
            if bundle not in manifests:
                raise InputError(
                    path, i, "bundle_id", f"unknown bundle {bundle!r} (give its manifest)"
                )
            case = cases.get((bundle, case_id))
            if case is None:
                raise InputError(path, i, "case", f"no case {case_id!r} in bundle {bundle}")
            if row["unit_id"].strip() and row["unit_id"].strip() != str(case["unit_id"]):
                raise InputError(
                    path,
                    i,
                    "unit_id",
                    f"{row['unit_id']!r} does not match the manifest ({case['unit_id']})",
                )
            if not rater:
                raise InputError(path, i, "rater", "empty rater name")
            key = (bundle, rater, case_id)
            if key in seen:
                raise InputError(
                    path,
                    i,
                    "case",
                    f"rater {rater!r} answered case {case_id} twice (also {seen[key]})",
                )
            seen[key] = f"{path}, row {i}"
            base = {
                "bundle_id": bundle,
                "rater": rater,
                "case": case_id,
                "unit_id": str(case["unit_id"]),
                "bias_type": case["bias_type"],
            }
            answer = row["kg_valid"].strip().lower()
            if answer:
                if answer not in KG_ANSWERS:
                    raise InputError(
                        path, i, "kg_valid", f"{answer!r} is not one of {', '.join(KG_ANSWERS)}"
                    )
                kg.append({**base, "answer": answer})
            else:
                counts["unanswered_items"] += 1
            for position, item in enumerate(RATING_ITEMS, start=1):
                text = row[item].strip()
                if not text:
                    counts["unanswered_items"] += 1
                    continue
                try:
                    value = float(text)
                except ValueError:
                    raise InputError(path, i, item, f"{text!r} is not a number 0-5") from None
                if value not in (0, 1, 2, 3, 4, 5):
                    raise InputError(path, i, item, f"{text!r} is not an integer 0-5")
                image = case["images"][position - 1]
                ratings.append(
                    {
                        **base,
                        "seed": int(case["seed"]),
                        "position": position,
                        "variant": image["variant"],
                        "rating": value,
                    }
                )
    ratings_frame = pd.DataFrame(
        ratings,
        columns=list(RATING_COLUMNS),
    )
    kg_frame = pd.DataFrame(kg, columns=list(KG_ANSWER_COLUMNS))
    return ratings_frame, kg_frame, counts


def _read_answer_csv(path: str | Path) -> pd.DataFrame:
    """One answers CSV as strings; an empty, header-only or unreadable file names the file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, None, "answers file not found")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise InputError(
            path,
            None,
            None,
            "empty answers file: expected the form's CSV (a header row and one row per case)",
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            path, None, None, f"not UTF-8 text (byte {exc.start}); export the answers as UTF-8 CSV"
        ) from None
    except pd.errors.ParserError as exc:
        raise InputError(
            path, None, None, f"not a valid CSV file: {' '.join(str(exc).split())}"
        ) from None
    if frame.empty:
        raise InputError(path, None, None, "answers file has a header but no answers")
    _check_row_widths(path)
    return frame


def _check_row_widths(path: Path) -> None:
    """A row with fewer cells than the header (a truncated export) would read as unanswered
    items: name the file and row (pandas already refuses longer rows)."""
    with path.open(encoding="utf-8-sig", newline="") as fh:
        rows = (r for r in csv.reader(fh) if r)  # pandas skips blank lines too
        width = len(next(rows, []))
        for i, row in enumerate(rows, start=1):
            if len(row) != width:
                raise InputError(
                    path, i, None, f"{len(row)} cells but the header has {width} columns"
                )
