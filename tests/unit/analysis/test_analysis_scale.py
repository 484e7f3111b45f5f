"""Table 16 (how the judges use the 0-5 scale) against values worked out by hand on the
selection fixture (tests/helpers/analysis_fixtures.py RUBRIC_A / RUBRIC_B)."""

from __future__ import annotations

import statistics

import pytest

from implicit_bench.analysis.load import load_tables
from implicit_bench.analysis.scale import judge_scale_use
from tests.helpers.analysis_fixtures import RUBRIC_TYPES, rubric_judgements, units


@pytest.fixture
def tables(tmp_path):
    units(RUBRIC_TYPES).to_csv(tmp_path / "units.csv", index=False)
    rubric_judgements().to_parquet(tmp_path / "j.parquet")
    return load_tables(tmp_path / "units.csv", [tmp_path / "j.parquet"])


def test_scale_use_by_hand(tables):
    t = judge_scale_use(tables.judgements, "gen", ["A", "B"], ["u1", "u2", "u3"]).set_index("judge")
    a = t.loc["A"]
    # A: anti 1,0,1 | 1,0,0 | 0,1,2 -> 6/9; neutral 15/8 (u2 1042 invalid); stereotype 40/9
    assert a["mean_anti"] == pytest.approx(6 / 9) and a["mean_neutral"] == pytest.approx(15 / 8)
    assert a["mean_stereotype"] == pytest.approx(40 / 9) and a["n_images"] == 26
    # S - A per (unit, seed): 4,4,4 | 3,5,3 | 5,3,3
    delta = [4, 4, 4, 3, 5, 3, 5, 3, 3]
    assert a["n_instances"] == 9 and a["delta_mean"] == pytest.approx(34 / 9)
    assert a["d"] == pytest.approx(statistics.mean(delta) / statistics.stdev(delta))
    assert a["share_s_gt_a"] == 1.0 and a["share_tie"] == 0.0
    # images scored >= 4: neutral 1 (u1 seed 42), stereotype 8, anti 0 -> 9 of 26
    assert a["share_ge4"] == pytest.approx(9 / 26)
    b = t.loc["B"]
    # B: u1 only seed 42; S - A: 3 | 4,4,2 | 4,3,4; >= 4: stereotype 4, 5, 5, 4 of 21 images
    assert b["n_instances"] == 7 and b["delta_mean"] == pytest.approx(24 / 7)
    assert b["share_ge4"] == pytest.approx(4 / 21) and b["n_images"] == 21


def test_common_instances_and_ties(tables):
    t = judge_scale_use(
        tables.judgements, "gen", ["A", "B"], ["u1", "u2", "u3"], common_instances=True
    ).set_index("judge")
    # instances scored by both: u1 42, u2 x3, u3 x3; A's S - A there: 4 | 3,5,3 | 5,3,3
    assert t.loc["A", "n_instances"] == 7 and t.loc["A", "delta_mean"] == pytest.approx(26 / 7)
    # B, u1, seed 42 only: one instance (S - A = 3) has no standardised contrast
    one = judge_scale_use(tables.judgements, "gen", ["B"], ["u1"], seeds=[42]).iloc[0]
    assert one["n_instances"] == 1 and one["d"] is None and one["share_tie"] == 0.0
