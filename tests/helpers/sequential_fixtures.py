"""A stand-in for the rounds of ``run --sequential``: writes what a round of the pipeline
writes (the triplets of every unit; units and judgements of the first N units of the random
order), so the stopping logic and the run's record are tested without rendering."""

from __future__ import annotations

import numpy as np
import pandas as pd

from implicit_bench.construction.triplets.subset import random_order
from implicit_bench.protocol.tables import JUDGEMENTS_PATH, TRIPLETS_PATH, UNITS_PATH
from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units

N_UNITS = 240
ROUNDS = [30, 60, 120, 240]


class Pipeline:
    """Writes what a round of the pipeline writes; counts the rounds it ran."""

    def __init__(self, root, shift: float = 0.0, fail_at: int | None = None):
        self.root, self.shift, self.fail_at, self.calls = root, shift, fail_at, []
        self.units = synthetic_units(N_UNITS)
        self.order = random_order(self.units["unit_id"].tolist(), 42)
        for path in (TRIPLETS_PATH, UNITS_PATH, JUDGEMENTS_PATH):
            (root / path).parent.mkdir(parents=True, exist_ok=True)
        self.units.to_parquet(root / TRIPLETS_PATH)

    def __call__(self, max_units: int) -> None:
        if self.fail_at is not None and len(self.calls) + 1 == self.fail_at:
            raise KeyboardInterrupt  # killed in the middle of this round
        self.calls.append(max_units)
        chosen = self.units[self.units["unit_id"].isin(self.order[:max_units])]
        chosen.to_parquet(self.root / UNITS_PATH)
        rows = [synthetic_judgements(chosen, judges=("judge-a",), invalid_rate=0.0)]
        if self.shift:  # a second generator whose neutral rubric scores are higher
            other = synthetic_judgements(chosen, judges=("judge-a",), config="gen2", seed=1)
            rubric = (other["task"] == "rubric") & (other["variant"] == "neutral")
            shifted = np.clip(other.loc[rubric, "value"].astype(int) + self.shift, 0, 5)
            other.loc[rubric, "value"] = shifted.astype(int).astype(str)
            rows.append(other)
        pd.concat(rows, ignore_index=True).to_parquet(self.root / JUDGEMENTS_PATH)


def params() -> dict:
    """The params of a sequential run on the stand-in's tables (read afresh at each call)."""
    return {
        "subset": {"seed": 42, "order": "random"},
        "evaluate": {
            "config": "gen",
            "units": UNITS_PATH,
            "judgements": [JUDGEMENTS_PATH],  # no CLIP judgements in these rounds
            "bootstrap": {"n": 20},
        },
    }
