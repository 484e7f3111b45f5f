"""The CLIP blind judge's margin calibrated on a labelled set, against values worked out by hand.

d = (0.30, 0.05, -0.02, -0.40, 0.01) with reference (s, neither, neither, a, neither): margin 0
labels (s, s, a, a, s), 2 of 5 right; 0.01 -> 3 of 5; 0.02 -> 4 of 5; 0.05 -> all 5; 0.30 ->
4 of 5. Cohen's kappa at margin 0: p_o = 0.4; reference shares (s, a, neither) = (1, 1, 3) / 5,
labels (3, 2, 0) / 5, so p_e = 3/25 + 2/25 = 0.2 and kappa = (0.4 - 0.2) / 0.8 = 0.25.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from implicit_bench.backends.clip.margin import (
    MarginCalibration,
    calibrate_margin,
    margin_calibration,
    relabel,
)
from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore, read_index
from implicit_bench.world.picture import Shown, draw

DIFF = np.array([0.30, 0.05, -0.02, -0.40, 0.01])
REFERENCE = np.array(["s", "neither", "neither", "a", "neither"])


def test_calibrated_margin_by_hand():
    out = calibrate_margin(DIFF, REFERENCE, current=0.0)
    assert out["items"] == 5 and out["reference"] == {"s": 1, "a": 1, "neither": 3}
    assert out["configured"]["accuracy"] == pytest.approx(0.4)
    assert out["configured"]["kappa"] == pytest.approx(0.25)
    assert out["calibrated"]["margin"] == pytest.approx(0.05)
    assert out["calibrated"]["accuracy"] == 1.0 and out["calibrated"]["kappa"] == 1.0
    assert out["calibrated"]["labels"] == {"s": 1, "a": 1, "neither": 3}


def test_ties_keep_the_smallest_margin_and_too_few_items_calibrate_nothing():
    # margin 0: (s, s) -> 1 of 2; 0.1: (neither, s) -> 0; 0.3: (neither, neither) -> 1 of 2
    out = calibrate_margin(np.array([0.1, 0.3]), np.array(["s", "neither"]), 0.0)
    assert out["calibrated"]["margin"] == 0.0
    few = calibrate_margin(DIFF, REFERENCE, 0.0, min_items=6)
    assert few["calibrated"] is None and "fewer than min_items 6" in few["reason"]


def _rows():
    keys = [("u1", "neutral"), ("u1", "stereotype"), ("u2", "neutral"), ("u2", "anti_stereotype")]
    diffs = [0.02, 0.2, -0.01, -0.3]
    return pd.DataFrame(
        [
            {
                "config": "cfg",
                "unit_id": u,
                "variant": v,
                "seed": 42,
                "task": "blind",
                "value": "s" if d > 0 else "a",
                "image_sha256": f"{u}{v}",
                "raw": json.dumps({"sim_s": 0.5 + d, "sim_a": 0.5}),
            }
            for (u, v), d in zip(keys, diffs, strict=True)
        ]
        + [
            {
                "config": "cfg",
                "unit_id": "u1",
                "variant": None,
                "seed": 42,
                "task": "clip_lean",
                "value": "0.1",
                "image_sha256": None,
                "raw": None,
            }
        ]
    )


def test_relabel_uses_the_raw_similarities():
    rows = relabel(_rows(), 0.05)
    assert rows["value"].tolist() == ["neither", "s", "neither", "a", "0.1"]


def test_calibration_table_as_the_labelled_set(tmp_path):
    table = pd.DataFrame(
        {
            "config": ["cfg"] * 5,
            "unit_id": ["u1", "u1", "u2", "u2", "u9"],
            "variant": ["neutral", "stereotype", "neutral", "anti_stereotype", "neutral"],
            "seed": [42] * 5,
            "reference": ["neither", "s", None, "a", "s"],
            "source": ["human", "human", None, "human", "human"],
        }
    )
    path = tmp_path / "calibration.csv"
    table.to_csv(path, index=False)
    params = MarginCalibration(labels=str(path), min_items=1, use=True)
    block, rows = margin_calibration(_rows(), params, 0.0, pd.DataFrame(), {})
    # labelled and judged: d = 0.02 (neither), 0.2 (s), -0.3 (a): margin 0.02 gets all three
    assert (block["rows"], block["unlabelled"], block["not_judged_by_clip"]) == (5, 1, 1)
    assert block["items"] == 3 and block["calibrated"]["margin"] == pytest.approx(0.02)
    assert block["configured"]["accuracy"] == pytest.approx(2 / 3) and block["used"] is True
    assert rows.loc[rows["task"] == "blind", "value"].tolist() == ["neither", "s", "neither", "a"]
    missing = MarginCalibration(labels=str(tmp_path / "absent.csv"))
    block, _ = margin_calibration(_rows(), missing, 0.0, pd.DataFrame(), {})
    assert block["available"] is False and "does not exist" in block["reason"]


def test_simulated_labels_read_from_the_pixels(tmp_path):
    store = ImageStore(tmp_path / "cfg")
    shows = {"u1neutral": "", "u1stereotype": "kind", "u2neutral": "", "u2anti_stereotype": "rude"}
    for sha_key, attribute in shows.items():
        unit, variant = sha_key[:2], sha_key[2:]
        buf = io.BytesIO()
        draw(Shown(attribute, "nurse", "female", "young")).save(buf, format="PNG")
        store.put(ImageRecord(ImageKey("cfg", unit, variant, 42), "sim", "p", "ok"), buf.getvalue())
    store.finalize()
    store.close()
    index = read_index(tmp_path / "cfg")
    rows = _rows()
    rows["image_sha256"] = rows.apply(
        lambda r: (
            None
            if r["task"] != "blind"
            else index.loc[
                (index["unit_id"] == r["unit_id"]) & (index["variant"] == r["variant"]), "sha256"
            ].iloc[0]
        ),
        axis=1,
    )
    units = pd.DataFrame(
        {
            "unit_id": ["u1", "u2"],
            "head": ["nurse", "nurse"],
            "bias_type": ["gender", "gender"],
            "stereotype": ["kind", "kind"],
            "anti_stereotype": ["rude", "rude"],
            "prompt_neutral": ["a photo of a nurse"] * 2,
        }
    )
    params = MarginCalibration(labels="sim", images=10, min_items=1)
    block, _ = margin_calibration(rows, params, 0.0, units, {"cfg": tmp_path / "cfg"})
    assert block["source"].startswith("sim (SIMULATED")
    assert block["drawn"] == 4 and block["reference"] == {"s": 1, "a": 1, "neither": 2}
    assert block["calibrated"]["margin"] == pytest.approx(0.02)  # as the table above
