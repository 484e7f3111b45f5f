"""The CLIP blind judge's margin, calibrated on a labelled set (``clip.margin_calibration``;
block ``margin_calibration`` of metrics/clip.json).

The CLIP blind judge labels an image s when d = cos(image, text_s) - cos(image, text_a) >
margin, a when d < -margin, else neither (``clip.scores.blind_rows``; ``clip.margin`` 0 answers
neither only on exact ties). Given reference labels (s / a / neither) for some of the judged
images, ``calibrate_margin`` tries margin 0 and every |d| of the labelled images (the only
places where a label can change) and keeps the one with the highest accuracy against the
reference (ties: the smallest margin); it reports that margin, its accuracy and Cohen's kappa
(scikit-learn) beside the configured margin's.

The labelled set (``labels``): a calibration table (``data/raw/calibration.csv``: the
CALIBRATION layout, ``implicit-bench calibration sample / label`` or the human-evaluation
calibration bundles; rows without a reference are left out and counted), or ``sim``: SIMULATED
reference labels read from the pixels of ``images`` images drawn at random (the simulated world's
picture code band: the attribute the picture shows against the unit's two tails, the rule the
simulated judges and the recovery stage's simulated rater use). ``use: true`` relabels the
CLIP blind rows with the calibrated margin (the rows written to data/judgements/clip.parquet).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from implicit_bench.params import NonNegInt, StrictModel

KEY = ["config", "unit_id", "variant", "seed"]
LABELS = ("s", "a", "neither")


class MarginCalibration(StrictModel):
    labels: Literal["sim"] | str | None = None  # a CALIBRATION table path, "sim", or null: off
    images: NonNegInt = 600  # sim: labelled images drawn
    seed: int = 42
    use: bool = False  # true: the blind rows use the calibrated margin
    min_items: int = Field(30, ge=1)  # fewer labelled images: no margin is calibrated


def blind_diffs(rows: pd.DataFrame) -> pd.DataFrame:
    """KEY, image_sha256 and d = sim_s - sim_a of each CLIP blind row (from its raw JSON)."""
    blind = rows[rows["task"] == "blind"]
    raw = blind["raw"].map(json.loads)
    diff = [r["sim_s"] - r["sim_a"] for r in raw]
    return blind[[*KEY, "image_sha256"]].assign(diff=np.asarray(diff, dtype=float))


def label_of(diff: np.ndarray, margin: float) -> np.ndarray:
    """The blind rule: s above ``margin``, a below ``-margin``, else neither."""
    return np.where(diff > margin, "s", np.where(diff < -margin, "a", "neither"))


def relabel(rows: pd.DataFrame, margin: float) -> pd.DataFrame:
    """``rows`` with each blind row's value recomputed at ``margin`` (other rows unchanged)."""
    out = rows.copy()
    mask = out["task"] == "blind"
    if mask.any():
        out.loc[mask, "value"] = label_of(blind_diffs(out)["diff"].to_numpy(), margin)
    return out


def calibrate_margin(
    diff: np.ndarray, reference: np.ndarray, current: float, min_items: int = 1
) -> dict[str, Any]:
    """The margin with the highest accuracy against ``reference`` (module docstring)."""
    from sklearn.metrics import cohen_kappa_score

    diff, reference = np.asarray(diff, dtype=float), np.asarray(reference, dtype=str)

    def stats(margin: float) -> dict[str, Any]:
        got = label_of(diff, margin)
        kappa = cohen_kappa_score(reference, got, labels=list(LABELS))
        return {
            "margin": float(margin),
            "accuracy": float((got == reference).mean()),
            "kappa": None if np.isnan(kappa) else float(kappa),
            "labels": {k: int((got == k).sum()) for k in LABELS},
        }

    out: dict[str, Any] = {
        "items": int(len(diff)),
        "reference": {k: int((reference == k).sum()) for k in LABELS},
        "configured": stats(current) if len(diff) else None,
        "calibrated": None,
    }
    if len(diff) < min_items:
        out["reason"] = f"{len(diff)} labelled images, fewer than min_items {min_items}"
        return out
    candidates = np.unique(np.concatenate([[0.0], np.abs(diff)]))
    labels = label_of(diff[None, :], candidates[:, None])  # (candidates, items)
    accuracy = (labels == reference[None, :]).mean(axis=1)
    best = candidates[int(np.argmax(accuracy))]  # argmax: the first (smallest) of ties
    out["calibrated"] = stats(float(best))
    return out


def table_reference(diffs: pd.DataFrame, path: str | Path) -> tuple[pd.DataFrame, dict]:
    """The labelled images of a calibration table joined with the CLIP diffs (KEY)."""
    from implicit_bench.protocol.tables import CALIBRATION

    table = CALIBRATION.read(path)
    labelled = table[table["reference"].notna()]
    merged = diffs.merge(
        labelled[KEY + ["reference"]].assign(
            unit_id=labelled["unit_id"].astype(str), seed=labelled["seed"].astype(int)
        ),
        on=KEY,
    )
    return merged, {
        "source": str(path),
        "rows": int(len(table)),
        "unlabelled": int(len(table) - len(labelled)),
        "not_judged_by_clip": int(len(labelled) - len(merged)),
    }


def sim_reference(
    diffs: pd.DataFrame, units: pd.DataFrame, store_dirs: dict[str, Path], n: int, seed: int
) -> tuple[pd.DataFrame, dict]:
    """SIMULATED reference labels of ``n`` random judged images, read from their pixels."""
    from implicit_bench.protocol.prompt_fields import unit_fields
    from implicit_bench.render.images import ImageStore
    from implicit_bench.world.picture import band_text, read_bytes

    pool = diffs[diffs["config"].astype(str).isin(store_dirs)].sort_values(KEY)
    rng = np.random.default_rng(seed)
    take = pool.iloc[np.sort(rng.choice(len(pool), size=min(n, len(pool)), replace=False))]
    by_id = units.assign(unit_id=units["unit_id"].astype(str)).set_index("unit_id")
    refs, unreadable = [], 0
    stores = {c: ImageStore(d) for c, d in store_dirs.items()}
    try:
        for r in take.itertuples(index=False):
            shown = read_bytes(stores[str(r.config)].read_bytes(str(r.image_sha256)))
            if shown is None:
                unreadable += 1
                refs.append(None)
                continue
            fields = unit_fields({"unit_id": r.unit_id, **by_id.loc[str(r.unit_id)].to_dict()})
            tails = (
                band_text(fields["stereotype_tails"]),
                band_text(fields["anti_stereotype_tails"]),
            )
            refs.append(
                "s"
                if shown.attribute and shown.attribute == tails[0]
                else "a"
                if shown.attribute and shown.attribute == tails[1]
                else "neither"
            )
    finally:
        for store in stores.values():
            store.close()
    labelled = take.assign(reference=refs)
    labelled = labelled[labelled["reference"].notna()]
    return labelled, {
        "source": "sim (SIMULATED: read from the pixels)",
        "drawn": int(len(take)),
        "unreadable": unreadable,
    }


def margin_calibration(
    rows: pd.DataFrame,
    params: MarginCalibration,
    current: float,
    units: pd.DataFrame,
    store_dirs: dict[str, Path],
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The ``margin_calibration`` block and the rows (relabelled when ``params.use``)."""
    if params.labels is None:
        return {"available": False, "reason": "clip.margin_calibration.labels is null"}, rows
    diffs = blind_diffs(rows)
    if params.labels == "sim":
        labelled, source = sim_reference(diffs, units, store_dirs, params.images, params.seed)
    elif not Path(params.labels).exists():
        reason = (
            f"no labelled set: {params.labels} does not exist (implicit-bench calibration "
            "sample / label, docs/correction.md)"
        )
        return {"available": False, "reason": reason}, rows
    else:
        labelled, source = table_reference(diffs, params.labels)
    result = calibrate_margin(
        labelled["diff"].to_numpy(), labelled["reference"].to_numpy(), current, params.min_items
    )
    block = {"available": True, **source, **result, "used": False}
    if params.use and result["calibrated"] is not None:
        block["used"] = True
        rows = relabel(rows, result["calibrated"]["margin"])
    return block, rows


__all__ = [
    "MarginCalibration",
    "blind_diffs",
    "calibrate_margin",
    "label_of",
    "margin_calibration",
    "relabel",
    "sim_reference",
    "table_reference",
]
