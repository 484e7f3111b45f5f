"""The analysis's inputs: UNITS, JUDGEMENTS and image-index tables, validated together.

The tables are read through ``implicit_bench.protocol.tables`` (the catalogue's specs): every row
that
does not validate is rejected with the file, its 1-based data row, the field and a reason, and
counted; with ``on_bad_row="error"`` the first one raises ``errors.InputError`` instead.
Duplicate judgement keys and blind images asked under several option orders follow
``tables.check_judgements``. ``Tables.accounting`` checks that every row read is analysed,
rejected, a duplicate or a secondary-order row.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.protocol.tables import IMAGE_INDEX, UNITS
from implicit_bench.protocol.tables.judgements import check_judgements
from implicit_bench.protocol.tables.spec import REJECT_COLUMNS

IMAGE_COLUMNS = list(IMAGE_INDEX.required)


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
    # rows of variants other stages read (subject, direct arm), per variant: not analysed
    other_variant_rows: dict[str, int] = field(default_factory=dict)
    # the validated blind rows of a non-primary option order (the judge order audit reads them)
    secondary: pd.DataFrame | None = None
    rows_in: dict[str, int] = field(default_factory=dict)  # data rows read, per table

    def accounting(self) -> dict[str, dict[str, int]]:
        """Per table: rows read = analysed + rejected + duplicate rows (+ secondary-order rows,
        + rows of variants other stages read).

        Rows of a duplicated key are listed in ``rejects`` with a "duplicate" reason; they are
        counted here under ``duplicates``, not ``rejected``. ``conserved`` checks the sum.
        """
        out: dict[str, dict[str, int]] = {}
        kept = {
            "units": len(self.units),
            "judgements": len(self.judgements),
            "images": 0 if self.images is None else len(self.images),
        }
        for table, rows_in in self.rows_in.items():
            rej = (
                self.rejects[self.rejects["table"] == table] if len(self.rejects) else self.rejects
            )
            dup = (
                int(rej["reason"].astype(str).str.startswith("duplicate").sum()) if len(rej) else 0
            )
            secondary = self.secondary_order_rows if table == "judgements" else 0
            other = sum(self.other_variant_rows.values()) if table == "judgements" else 0
            entry = {
                "rows_in": rows_in,
                "analysed": kept[table],
                "rejected": len(rej) - dup,
                "duplicates": dup,
                "secondary_order": secondary,
                "other_variants": other,
            }
            entry["conserved"] = int(rows_in == kept[table] + len(rej) + secondary + other)
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
            "invalid_by_task": {
                k: int(v) for k, v in invalid["task"].value_counts().sort_index().items()
            },
            "rejected_rows": int(len(self.rejects)),
            "rejected_by_table": {
                k: int(v) for k, v in self.rejects["table"].value_counts().sort_index().items()
            },
            "rejected_by_reason": [
                {"table": r.table, "reason": r.reason, "rows": int(r.rows)}
                for r in by_reason.itertuples()
            ],
            "duplicate_keys": int(len(self.duplicates)),
            "duplicate_rows": int(self.duplicates["n_rows"].sum()) if len(self.duplicates) else 0,
            "duplicate_examples": self.duplicates.head(5).to_dict(orient="records"),
            "secondary_order_rows": self.secondary_order_rows,
            "other_variant_rows": dict(self.other_variant_rows),
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
        "rubric_fractional_by_judge": {
            str(k): int(v) for k, v in frac["judge"].astype(str).value_counts().sort_index().items()
        },
        "rubric_fractional_parts": parts,
    }


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
    units, unit_rejects = UNITS.check(units_path, on_bad_row)
    judgements, j_rejects, duplicates, secondary = check_judgements(
        judgement_paths, units, on_bad_row, on_duplicate, primary_order, with_secondary=True
    )
    images, i_rejects = None, pd.DataFrame(columns=REJECT_COLUMNS)
    if image_paths:
        checked, i_rejects = IMAGE_INDEX.check(
            list(image_paths), on_bad_row, require=IMAGE_COLUMNS, sort=False
        )
        images = checked.reindex(columns=[*IMAGE_COLUMNS, "reason"])
        images.attrs["rows_in"] = checked.attrs["rows_in"]
    rejects = pd.concat(
        [r for r in (unit_rejects, j_rejects, i_rejects) if len(r)]
        or [pd.DataFrame(columns=REJECT_COLUMNS)],
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
    return Tables(
        units,
        judgements,
        rejects,
        duplicates,
        images,
        files,
        int(judgements.attrs.get("secondary_order_rows", 0)),
        dict(judgements.attrs.get("other_variant_rows", {})),
        secondary,
        rows_in,
    )
