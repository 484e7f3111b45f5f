"""Numbers in metrics / tables / plots files are written to 6 significant digits; Parquet and
other files keep full precision (tables printed 16 digits, float noise showed)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from implicit_bench._util.files import (
    OUTPUT_DIGITS,
    round_floats,
    significant,
    write_json,
    write_table,
)
from implicit_bench.analysis.paper_tables import write_plots, write_tables


def test_significant_by_hand():
    assert OUTPUT_DIGITS == 6
    assert significant(2.3920922570016474, 6) == 2.39209
    assert significant(0.4531913831152699, 6) == significant(0.4531913837248629, 6) == 0.453191
    assert significant(43.3125, 6) == 43.3125 and significant(43.27917, 6) == 43.2792
    assert significant(1.234567891e-12, 6) == 1.23457e-12  # significant, not decimal, digits
    assert significant(-987654321.0, 6) == -987654000.0
    assert significant(0.0, 6) == 0.0 and math.isnan(significant(float("nan"), 6))
    assert round_floats({"a": [1, True, None, "x", np.float32(0.1)]}, 6) == {
        "a": [1, True, None, "x", 0.1]
    }


def test_metrics_json_rounded_elsewhere_full(tmp_path):
    payload = {"sim_ns": 0.4531913831152699, "n": 3, "ci": [np.float64(1 / 3), 2 / 3]}
    write_json(tmp_path / "metrics" / "clip.json", payload)
    written = json.loads((tmp_path / "metrics" / "clip.json").read_text())
    assert written == {"sim_ns": 0.453191, "n": 3, "ci": [0.333333, 0.666667]}
    write_json(tmp_path / "data" / "truth.json", payload)
    assert json.loads((tmp_path / "data" / "truth.json").read_text())["sim_ns"] == (
        0.4531913831152699
    )


def test_tables_and_plots_csv_rounded_parquet_full(tmp_path):
    frame = pd.DataFrame(
        {"config": ["a", "b"], "n": [607, 634], "mean": [2.3920922570016474, float("nan")]}
    )
    write_tables(tmp_path, {"table03_neutral_mean": frame})
    write_plots(tmp_path, {"p": frame})
    for path in (tmp_path / "tables" / "table03_neutral_mean.csv", tmp_path / "plots" / "p.csv"):
        assert path.read_text().splitlines() == ["config,n,mean", "a,607,2.39209", "b,634,"]
    write_table(frame, tmp_path / "tables" / "full.parquet")
    assert pd.read_parquet(tmp_path / "tables" / "full.parquet")["mean"][0] == 2.3920922570016474
    write_table(frame, tmp_path / "data" / "rows.csv")
    assert "2.3920922570016474" in (tmp_path / "data" / "rows.csv").read_text()
