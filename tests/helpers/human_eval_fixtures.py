"""Rating and calibration bundle manifests written for the human-eval tests."""

from __future__ import annotations

import csv
import json

import pandas as pd

from implicit_bench.human_eval.bundle import HumanEvalParams
from implicit_bench.human_eval.form import ANSWER_COLUMNS


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


def _case(case, unit, bias, seed, order):
    return {
        "case": case,
        "unit_id": unit,
        "bias_type": bias,
        "head": "h",
        "relation": None,
        "stereotype": "s",
        "anti_stereotype": "a",
        "seed": seed,
        "order": order,
        "images": [
            {"position": i + 1, "variant": v, "sha256": f"{unit}{v}"} for i, v in enumerate(order)
        ],
    }


def hand_worked_study(tmp_path):
    """The rating bundle the human-evaluation import's report is worked out on by hand: two
    cases (u1 gender seed 42, u2 race seed 1042), three raters (A, B, C), rubric scores of
    judges j1 and j2 and distractor rows; returns (root, answer paths, params)."""
    manifest = {
        "bundle_id": "b1",
        "sampling": {"config": "gen"},
        "cases": [
            _case("c001", "u1", "gender", 42, ["stereotype", "neutral", "anti_stereotype"]),
            _case("c002", "u2", "race", 1042, ["anti_stereotype", "stereotype", "neutral"]),
        ],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    answers = {
        "A": [("c001", "yes", 5, 3, 1), ("c002", "yes", 0, 4, 2)],
        "B": [("c001", "no", 4, 3, 0), ("c002", "unsure", 1, 5, 3)],
        "C": [("c001", "yes", 5, 4, 1), ("c002", "yes", 0, 4, 3)],
    }
    paths = []
    for rater, rows in answers.items():
        path = tmp_path / f"{rater}.csv"
        with open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(ANSWER_COLUMNS)
            for case, kg, r1, r2, r3 in rows:
                writer.writerow(
                    ["b1", rater, case, "u1" if case == "c001" else "u2", kg, r1, r2, r3, "t"]
                )
        paths.append(path)
    rows = []
    scores = {
        "j1": {("u1", 42): (4, 4, 1), ("u2", 1042): (3, 2, 0)},
        "j2": {("u1", 42): (1, 2, 3), ("u2", 1042): (5, 3, 3)},
    }
    for judge, per_unit in scores.items():
        for (unit, seed), (s, n, a) in per_unit.items():
            for variant, value in (("stereotype", s), ("neutral", n), ("anti_stereotype", a)):
                rows.append(
                    {
                        "unit_id": unit,
                        "variant": variant,
                        "seed": seed,
                        "config": "gen",
                        "judge": judge,
                        "task": "rubric",
                        "value": str(value),
                        "valid": True,
                    }
                )
    # distractors: another seed, another config, an invalid row and a blind label: all ignored
    rows.append(
        {
            "unit_id": "u1",
            "variant": "stereotype",
            "seed": 1042,
            "config": "gen",
            "judge": "j1",
            "task": "rubric",
            "value": "0",
            "valid": True,
        }
    )
    rows.append(
        {
            "unit_id": "u1",
            "variant": "stereotype",
            "seed": 42,
            "config": "other",
            "judge": "j1",
            "task": "rubric",
            "value": "0",
            "valid": True,
        }
    )
    rows.append(
        {
            "unit_id": "u1",
            "variant": "neutral",
            "seed": 42,
            "config": "gen",
            "judge": "j1",
            "task": "rubric",
            "value": None,
            "valid": False,
        }
    )
    rows.append(
        {
            "unit_id": "u1",
            "variant": "neutral",
            "seed": 42,
            "config": "gen",
            "judge": "j1",
            "task": "blind",
            "value": "s",
            "valid": True,
        }
    )
    (tmp_path / "j").mkdir()
    pd.DataFrame(rows).to_parquet(tmp_path / "j/judgements.parquet")
    params = HumanEvalParams(judgements=["j/*.parquet"], directional_below=2)
    return tmp_path, paths, params
