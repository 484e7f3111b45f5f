"""Rating and calibration bundle manifests written for the human-eval tests."""

from __future__ import annotations

import json


def rating_manifest() -> dict:
    cases = []
    for n, (uid, order) in enumerate(
        [("u1", ["stereotype", "neutral", "anti_stereotype"]), ("u2", ["neutral"] * 0)], 1
    ):
        order = order or ["anti_stereotype", "stereotype", "neutral"]
        cases.append(
            {
                "case": f"c{n:03d}",
                "unit_id": uid,
                "bias_type": "gender",
                "seed": 42,
                "order": order,
                "images": [
                    {"position": i + 1, "variant": v, "sha256": "0" * 64}
                    for i, v in enumerate(order)
                ],
            }
        )
    return {"bundle_id": "b-1", "sampling": {"config": "c1", "seed": 1}, "cases": cases}


def calibration_manifest() -> dict:
    items = []
    for n, (uid, order) in enumerate([("u1", "sa"), ("u2", "as")], 1):
        items.append(
            {
                "item": f"k{n:04d}",
                "config": "c1",
                "unit_id": uid,
                "variant": "neutral",
                "seed": 42,
                "sheet_row": n,
                "image_sha256": "0" * 64,
                "order": order,
                "options": {"A": order[0], "B": order[1], "C": "neither"},
            }
        )
    return {"bundle_id": "k-1", "kind": "calibration", "sheet": "s.csv", "items": items}


def write_manifest(tmp_path, data, name="manifest.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
