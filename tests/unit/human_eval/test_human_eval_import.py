"""Importing rater answers: every statistic of the report against values worked out by hand."""

from __future__ import annotations

import csv
import math

import pytest

from implicit_bench.errors import InputError
from implicit_bench.human_eval.answers import load_manifests
from implicit_bench.human_eval.form import ANSWER_COLUMNS
from implicit_bench.human_eval.study import human_eval_report
from tests.helpers.human_eval_fixtures import hand_worked_study


@pytest.fixture
def study(tmp_path):
    return hand_worked_study(tmp_path)


def test_report_values_by_hand(study):
    root, paths, params = study
    report = human_eval_report(load_manifests([root / "manifest.json"]), paths, params, root)
    assert (
        report["n_raters"] == 3
        and report["n_cases"] == 2
        and report["n_images"] == 6
        and report["n_ratings"] == 18
    )
    # KG answers: yes 4, no 1, unsure 1 of 6
    assert report["kg_validity"] == pytest.approx(
        {"yes": 4 / 6, "no": 1 / 6, "unsure": 1 / 6}, abs=1e-6
    )
    # ratings by variant (positions mapped through each case's order):
    # S: 5,4,5 (c001 pos 1) and 4,5,4 (c002 pos 2) -> 27/6 = 4.5
    # N: 3,3,4 and 2,3,3 -> 18/6 = 3.0;  A: 1,0,1 and 0,1,0 -> 3/6 = 0.5
    assert report["mean_rating"] == pytest.approx(
        {"stereotype": 4.5, "neutral": 3.0, "anti_stereotype": 0.5}
    )
    # per-image human means x3: c001 S,N,A = 14,10,2; c002 A,S,N = 1,13,8
    # j1 = 4,4,1,0,3,2 (same order). |diff| = 2/3,2/3,1/3,1/3,4/3,2/3 -> MAE = 4/6
    # Pearson: H deviations 6,2,-6,-7,5,0 (SS 150); J deviations 5/3,5/3,-4/3,-7/3,2/3,-1/3
    # (SS 40/3); cov = 41 -> r = 41 / sqrt(2000)
    j1 = report["human_vs_judge"]["j1"]
    assert j1["n_images"] == 6
    assert j1["mae"] == pytest.approx(4 / 6, abs=1e-6)
    assert j1["r"]["value"] == pytest.approx(41 / math.sqrt(2000), abs=1e-6) and j1["r"]["n"] == 6
    # j2 = 1,2,3,3,5,3: |diff| = 11/3,4/3,7/3,8/3,2/3,1/3 -> 33/3 / 6 = 11/6
    assert report["human_vs_judge"]["j2"]["mae"] == pytest.approx(11 / 6, abs=1e-6)
    # flips: human S - A > 0 on both cases; j1 S - A = 3, 3 (no flip); j2 = -2 (flip), 2
    assert report["direction_flips"]["j1"] == {
        "flips": 0,
        "cases": 2,
        "ties": 0,
        "share": 0.0,
        "disagree_gt": 0,
    }
    assert report["direction_flips"]["j2"] == {
        "flips": 1,
        "cases": 2,
        "ties": 0,
        "share": 0.5,
        "disagree_gt": 1,
    }
    # inter-rater over the 6 images: A = 5,3,1,0,4,2; B = 4,3,0,1,5,3; C = 5,4,1,0,4,3
    # SS: A 17.5, B 52/3, C 113/6; cov AB 15, AC 17.5, BC 47/3
    r_ab = 15 / math.sqrt(17.5 * 52 / 3)
    r_ac = 17.5 / math.sqrt(17.5 * 113 / 6)
    r_bc = (47 / 3) / math.sqrt(52 / 3 * 113 / 6)
    assert report["inter_rater"]["mean_pairwise_r"] == pytest.approx(
        (r_ab + r_ac + r_bc) / 3, abs=1e-6
    )
    import krippendorff
    import numpy as np

    matrix = np.array([[5, 3, 1, 0, 4, 2], [4, 3, 0, 1, 5, 3], [5, 4, 1, 0, 4, 3]], dtype=float)
    expected_alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert report["inter_rater"]["alpha_ordinal"] == pytest.approx(expected_alpha, abs=1e-6)
    # nobody excluded at 0.40 (every leave-one-out r is high)
    assert report["screening"]["excluded"] == []
    # per bias type: gender = case c001 only; j1 on (14,10,2)/3 vs
    # (4,4,1): |diff| 2/3, 2/3, 1/3 -> 5/9
    gender = report["by_bias_type"]["gender"]
    assert gender["cases"] == 1 and gender["images"] == 3 and gender["directional_only"] is True
    assert gender["human_vs_judge"]["j1"]["mae"] == pytest.approx(5 / 9, abs=1e-6)
    # H deviations (14,10,2) - 26/3 = 16/3, 4/3, -20/3; J (4,4,1) -
    # 3 = 1, 1, -2: cov = 16/3+4/3+40/3 = 20
    # SS_H = (256+16+400)/9 = 224/3, SS_J = 6 -> r = 20 / sqrt(448)
    assert gender["human_vs_judge"]["j1"]["r"]["value"] == pytest.approx(
        20 / math.sqrt(448), abs=1e-6
    )
    assert report["groups"]["visually-legible"]["cases"] == 2


def test_screening_excludes_a_contrarian(study):
    root, paths, params = study
    # rater D answers the reverse of the others: leave-one-out r is negative -> excluded
    path = root / "D.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(ANSWER_COLUMNS)
        writer.writerow(["b1", "D", "c001", "u1", "no", 0, 2, 5, "t"])
        writer.writerow(["b1", "D", "c002", "u2", "no", 5, 0, 2, "t"])
    report = human_eval_report(
        load_manifests([root / "manifest.json"]), [*paths, path], params, root
    )
    excluded = report["screening"]["excluded"]
    assert [e["rater"] for e in excluded] == ["D"]
    assert excluded[0]["r_loo_mean"] < 0
    # D's answers are left out of everything, including KG validity
    assert report["n_raters"] == 3 and report["kg_validity"]["no"] == pytest.approx(1 / 6, abs=1e-6)


def test_bad_answers_name_file_row_and_field(study):
    root, paths, params = study
    manifests = load_manifests([root / "manifest.json"])
    bad = root / "bad.csv"
    bad.write_text(",".join(ANSWER_COLUMNS) + "\nb1,E,c001,u1,yes,6,1,1,t\n")
    with pytest.raises(InputError, match=r"bad.csv, row 1, field 'rating_1'"):
        human_eval_report(manifests, [bad], params, root)
    bad.write_text(",".join(ANSWER_COLUMNS) + "\nb1,E,c009,u1,yes,1,1,1,t\n")
    with pytest.raises(InputError, match="field 'case'"):
        human_eval_report(manifests, [bad], params, root)
    bad.write_text(",".join(ANSWER_COLUMNS) + "\nb1,E,c001,u1,maybe,1,1,1,t\n")
    with pytest.raises(InputError, match="field 'kg_valid'"):
        human_eval_report(manifests, [bad], params, root)
    with pytest.raises(InputError, match="answered case c001 twice"):
        human_eval_report(manifests, [paths[0], paths[0]], params, root)
