"""A real run's calibration table and the evaluate stage run on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from tests.helpers.analysis_fixtures import BLIND_TYPES, blind_judgements, units
from tests.helpers.paths import REPO_ROOT

# judge A's stored labels (analysis_fixtures.BLIND_A) of the calibration images, with the
# reference label given to each: M = [[0.8, 0.2, 0], [0, 1, 0], [0, 0, 1]] (rows s, a, neither)
LABELLED = [
    ("u1", "neutral", 42, "s"),  # judged s
    ("u1", "neutral", 1042, "s"),  # judged s
    ("u1", "stereotype", 42, "s"),  # judged s
    ("u4", "stereotype", 42, "s"),  # judged s
    ("u3", "stereotype", 42, "s"),  # judged a
    ("u3", "anti_stereotype", 42, "a"),  # judged a
    ("u3", "anti_stereotype", 1042, "a"),  # judged a
    ("u3", "neutral", 42, "neither"),  # judged neither
    ("u2", "stereotype", 1042, "neither"),  # judged neither
    ("u4", "neutral", 2042, "s"),  # judge A's answer invalid: left out, counted
]


def calibration_inputs(tmp_path: Path, calibration: str | None = "calibration.csv") -> None:
    units(BLIND_TYPES).to_csv(tmp_path / "units.csv", index=False)
    blind_judgements().to_parquet(tmp_path / "judgements.parquet")
    params = {
        "evaluate": {
            "units": "units.csv",
            "judgements": ["judgements.parquet"],
            "selected_units": None,
            "blind_judges": ["A", "B"],
            "bootstrap": {"n": 200, "seed": 3},
            "calibration": calibration,
        }
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))


def calibration_table(labelled: list[tuple]) -> pd.DataFrame:
    frame = pd.DataFrame(labelled, columns=["unit_id", "variant", "seed", "reference"]).assign(
        config="gen"
    )
    frame["source"] = pd.Series("human", index=frame.index).where(frame["reference"].notna(), None)
    return frame


def run_evaluate(cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    return subprocess.run(
        [sys.executable, str(REPO_ROOT / "stages" / "evaluate.py")],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
