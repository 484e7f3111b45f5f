"""Params and committed metrics of a fresh clone, for `implicit-bench plan` tests."""

from __future__ import annotations

import json

PLAN_PARAMS = {
    "subset": {"max_units": 5},
    "kg": {"extractor": "llm", "max_pairs": 0},
    "triplets": {"writer": "template"},
    "generators": {
        "a": {"backend": "diffusers", "model": "m"},
        "b": {"backend": "diffusers", "model": "m"},
    },
    "judges": {
        "j1": {"backend": "transformers", "model": "x"},
        "j2": {"backend": "transformers", "model": "x"},
    },
    "render": {
        "run": ["a"],
        "seeds": [42, 1042],
        "variants": ["neutral", "stereotype", "anti_stereotype"],
    },
    "judge": {
        "tasks": {
            "rubric": None,
            "blind": {"judges": ["j1"]},
            "alignment": {"judges": ["j2"], "variants": ["neutral"]},
        },
        "blind_orders": "both",
    },
}


def write_plan_metrics(tmp_path):
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics/triplets.json").write_text(json.dumps({"triplets_total": 9}))
    (tmp_path / "metrics/sources.json").write_text(json.dumps({"pairs_total": 100}))
