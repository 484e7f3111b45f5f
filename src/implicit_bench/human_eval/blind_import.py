"""Import people's answers to a calibration bundle into the calibration table.

Each answer row (bundle, rater, item, choice A / B / C) is checked against its manifest and
mapped to a label (s, a or neither) through the item's recorded option order. An image's
reference label is the majority of its raters' labels; a tie (two raters who disagree) is
broken by a seeded draw among the tied labels, so a two-rater image gets one rater's label at
random rather than being dropped (dropping disagreements would keep the easy images and make
the judge look more accurate than it is). The sheet's row gets ``reference``, ``source`` =
``human`` and ``raters`` (JSON object: rater -> label), so the inter-rater agreement can be
recomputed from the table.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.agreement import rater_agreement
from implicit_bench._util.hashing import derive_seed
from implicit_bench.errors import InputError
from implicit_bench.human_eval.answers import (  # noqa: F401 - read_manifest re-exported
    _read_answer_csv,
    manifests_by_id,
    read_manifest,
)
from implicit_bench.human_eval.blind_bundle import KEY, KIND
from implicit_bench.human_eval.blind_form import BLIND_ANSWER_COLUMNS, CHOICES
from implicit_bench.human_eval.manifest_schema import check_calibration_manifest
from implicit_bench.protocol.schema import BLIND_LABELS
from implicit_bench.protocol.tables import CALIBRATION

ANSWER_FRAME = ["bundle_id", "rater", "item", *KEY, "image_sha256", "choice", "label"]


def is_calibration(manifest: dict[str, Any]) -> bool:
    return manifest.get("kind") == KIND


def load_calibration_manifests(paths: list[str | Path]) -> dict[str, dict[str, Any]]:
    """Calibration-bundle manifests by bundle id (a rating bundle's manifest is an error)."""

    def check(path: str | Path, data: dict[str, Any]) -> None:
        if not is_calibration(data):
            raise InputError(path, None, "kind", "not a calibration-bundle manifest")

    return manifests_by_id(
        paths,
        ("bundle_id", "items", "sheet"),
        "missing (not a calibration-bundle manifest)",
        check,
        check_calibration_manifest,
    )


def read_blind_answers(
    paths: list[str | Path], manifests: dict[str, dict[str, Any]]
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Validate the answer CSVs; return one row per answered (rater, item) and the counts. A
    wrong bundle, item or unit, a choice other than A / B / C, an empty rater or a rater who
    labels one image twice is an ``InputError`` naming the file, row and field."""
    items = {(b, it["item"]): it for b, m in manifests.items() for it in m["items"]}
    rows: list[dict[str, Any]] = []
    seen: dict[tuple, str] = {}
    counts = {"files": 0, "rows": 0, "unanswered": 0}
    for path in paths:
        frame = _read_answer_csv(path)
        counts["files"] += 1
        missing = [c for c in BLIND_ANSWER_COLUMNS if c not in frame.columns and c != "saved_at"]
        if missing:
            raise InputError(path, None, missing[0], f"missing answer columns {missing}")
        for i, row in enumerate(frame.to_dict("records"), start=1):
            counts["rows"] += 1
            bundle, item_id, rater = (row[c].strip() for c in ("bundle_id", "item", "rater"))
            if bundle not in manifests:
                raise InputError(
                    path, i, "bundle_id", f"unknown bundle {bundle!r} (give its manifest)"
                )
            item = items.get((bundle, item_id))
            if item is None:
                raise InputError(path, i, "item", f"no item {item_id!r} in bundle {bundle}")
            # The unit id ties the row to the bundle it was exported from: a row relabelled
            # with another bundle's id would otherwise map through that bundle's option orders.
            unit = row["unit_id"].strip()
            if not unit:
                raise InputError(
                    path, i, "unit_id", "empty unit id (answers must come from the form's CSV)"
                )
            if unit != str(item["unit_id"]):
                raise InputError(
                    path,
                    i,
                    "unit_id",
                    f"{row['unit_id']!r} is not item {item_id}'s unit in bundle {bundle} "
                    "(answers of another bundle?)",
                )
            if not rater:
                raise InputError(path, i, "rater", "empty rater name")
            choice = row["choice"].strip().upper()
            if not choice:
                counts["unanswered"] += 1
                continue
            if choice not in CHOICES:
                raise InputError(path, i, "choice", f"{row['choice']!r} is not A, B or C")
            image = tuple(item[k] for k in KEY)
            if (rater, image) in seen:
                raise InputError(
                    path,
                    i,
                    "item",
                    f"rater {rater!r} labelled this image twice (also {seen[(rater, image)]})",
                )
            seen[(rater, image)] = f"{path}, row {i}"
            rows.append(
                {
                    "bundle_id": bundle,
                    "rater": rater,
                    "item": item_id,
                    **{k: item[k] for k in KEY},
                    "image_sha256": item["image_sha256"],
                    "choice": choice,
                    "label": item["options"][choice],
                }
            )
    return pd.DataFrame(rows, columns=ANSWER_FRAME), counts


def image_labels(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per image: the key, ``reference`` (majority label, seeded tie-break),
    ``raters`` (JSON rater -> label), ``n_raters`` and ``tie``."""
    out = []
    for key, group in answers.groupby(list(KEY), sort=True):
        tally = Counter(group["label"])
        top = max(tally.values())
        tied = sorted(lab for lab, n in tally.items() if n == top)
        rng = np.random.default_rng(derive_seed("calibration-tie", *key))
        label = tied[int(rng.integers(len(tied)))] if len(tied) > 1 else tied[0]
        raters = dict(sorted(zip(group["rater"], group["label"], strict=True)))
        out.append(
            {
                **dict(zip(KEY, key, strict=True)),
                "reference": label,
                "raters": json.dumps(raters, ensure_ascii=False),
                "n_raters": len(group),
                "tie": len(tied) > 1,
            }
        )
    return pd.DataFrame(out, columns=[*KEY, "reference", "raters", "n_raters", "tie"])


def label_sheet(sheet: pd.DataFrame, labels: pd.DataFrame, sheet_path: str | Path) -> pd.DataFrame:
    """The sheet with people's labels (source ``human``; they replace a reference judge's); an
    image not in the sheet is an error (the sheet was redrawn after the bundle was made)."""
    out = sheet.copy()
    if "raters" not in out.columns:
        out["raters"] = None
    out["raters"] = out["raters"].astype(object)
    index = pd.MultiIndex.from_frame(out[list(KEY)].astype({"seed": int}))
    pos = index.get_indexer(pd.MultiIndex.from_frame(labels[list(KEY)]))
    if (pos < 0).any():
        key = tuple(labels.loc[int(np.flatnonzero(pos < 0)[0]), list(KEY)])
        raise InputError(
            sheet_path, None, "unit_id", f"image {key} of the bundle is not in the sheet (redrawn?)"
        )
    rows = out.index[pos]
    out.loc[rows, "reference"] = labels["reference"].to_numpy()
    out.loc[rows, "source"] = "human"
    out.loc[rows, "raters"] = labels["raters"].to_numpy()
    return out


def import_calibration(
    manifests: dict[str, dict[str, Any]], answer_paths: list[str | Path], sheet: str | None = None
) -> tuple[pd.DataFrame, Path, dict[str, Any]]:
    """Read the answers, label the sheet (``sheet``, default the manifests' sheet); return the
    labelled sheet, its path and the import report (counts, ties, rater agreement)."""
    sheets = sorted({m["sheet"] for m in manifests.values()})
    if sheet is None and len(sheets) > 1:
        raise InputError(sheets[0], None, "sheet", f"the bundles name several sheets {sheets}")
    path = Path(sheet or sheets[0])
    answers, counts = read_blind_answers(answer_paths, manifests)
    if answers.empty:
        raise InputError(answer_paths[0], None, "choice", "no answered item in the answer files")
    labels = image_labels(answers)
    table = label_sheet(CALIBRATION.read(path), labels, path)
    long = answers.assign(image=answers[list(KEY)].astype(str).agg("|".join, axis=1))
    report = {
        **counts,
        "answers": len(answers),
        "images_labelled": len(labels),
        "ties": int(labels["tie"].sum()),
        "labels": {k: int(v) for k, v in labels["reference"].value_counts().sort_index().items()},
        "agreement": rater_agreement(long[["image", "rater", "label"]], BLIND_LABELS),
    }
    return table, path, report
