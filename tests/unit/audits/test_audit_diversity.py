"""Attribute diversity: entropies, ID, CA_q, MGBI by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from implicit_bench._util.closed_form import geometric_mean, normalised_entropy
from implicit_bench.audits.diversity import diversity_frame, diversity_report, diversity_scores

LN2, LN3 = math.log(2), math.log(3)
# H(1/3, 2/3) = (1/3 ln 3 + 2/3 ln 3/2) / ln 2 = (0.366204 + 0.270310) / 0.693147 = 0.918296
H12 = (1 / 3 * LN3 + 2 / 3 * math.log(1.5)) / LN2


def test_entropy_by_hand():
    assert normalised_entropy([3, 0]) == 0.0
    assert normalised_entropy([1, 1]) == pytest.approx(1.0)
    assert normalised_entropy([1, 2]) == pytest.approx(0.918296, abs=1e-6)
    # (4, 1): -(0.8 ln 0.8 + 0.2 ln 0.2) / ln 2 = (0.178515 + 0.321888) / 0.693147 = 0.721928
    assert normalised_entropy([4, 1]) == pytest.approx(0.721928, abs=1e-6)
    # |C| = 3 with one category unobserved: (1, 2) -> 0.636514 / ln 3 = 0.579380
    assert normalised_entropy([1, 2, 0], 3) == pytest.approx(0.579380, abs=1e-6)
    assert math.isnan(normalised_entropy([0, 0]))
    assert geometric_mean([0.25, 1.0]) == pytest.approx(0.5)
    assert geometric_mean([0.0, 1.0]) == 0.0


def test_scores_by_hand():
    # scene entropies sorted [0, 0.918296, 1]; linear quantile at q (n-1) = 2q:
    # CA_0.05 = 0.1 * 0.918296 = 0.0918296; CA_0.10 = 0.1836592; CA_0.20 = 0.3673184
    scores = diversity_scores([0.0, 1.0, H12], {"gender": H12, "race": 1.0})
    assert scores["CA_0.05"] == pytest.approx(0.0918296, abs=1e-6)
    assert scores["CA_0.10"] == pytest.approx(0.1836592, abs=1e-6)
    assert scores["CA_0.20"] == pytest.approx(0.3673184, abs=1e-6)
    assert scores["CA_mean"] == pytest.approx((0 + 1 + 0.918296) / 3, abs=1e-6)
    # ID = sqrt(0.918296 * 1) = 0.958278; MGBI = sqrt(0.958278 * 0.1836592) = 0.419520
    assert scores["ID"] == pytest.approx(0.958278, abs=1e-6)
    assert scores["MGBI"] == pytest.approx(0.419520, abs=1e-6)


def test_report_from_labels():
    labels = {
        ("u1", "neutral"): ["s", "s", "s"],
        ("u2", "neutral"): ["s", "a", "neither"],
        ("u3", "neutral"): ["a", "a", "s"],
        ("u1", "subject"): ["s", "a"],
        ("u2", "subject"): ["s"],
        ("u3", "subject"): ["s", "a"],
    }
    primary = pd.DataFrame(
        [
            dict(config="c", unit_id=u, variant=v, seed=i, judge="J", label=lab)
            for (u, v), labs in labels.items()
            for i, lab in enumerate(labs)
        ]
    )
    units = pd.DataFrame({"unit_id": ["u1", "u2", "u3"], "bias_type": ["gender", "gender", "race"]})
    report = diversity_report(diversity_frame(primary, units), min_scene_images=1)["J"][
        "c"
    ]  # the arithmetic; default below
    # gender pooled neutral, neither left out: s 4, a 1 -> 0.721928; race: s 1, a 2 -> 0.918296
    assert report["entropy_by_bias_type"]["gender"]["entropy"] == pytest.approx(0.721928, abs=1e-6)
    assert report["entropy_by_bias_type"]["race"]["entropy"] == pytest.approx(H12)
    # scenes: u1 0, u2 (1, 1) -> 1, u3 0.918296; templates: gender (2, 1), race (1, 1)
    assert report["scores"]["CA_0.10"] == pytest.approx(0.1836592, abs=1e-6)
    assert report["scores"]["MGBI"] == pytest.approx(0.419520, abs=1e-6)
    assert report["scene_entropy_summary"]["share_collapsed"] == pytest.approx(1 / 3)
    with_neither = diversity_report(
        diversity_frame(primary, units), include_neither=True, min_scene_images=1
    )["J"]["c"]
    # u2 (1, 1, 1) over |C| = 3 -> 1.0; u3 (1, 2, 0) -> 0.579380
    assert with_neither["scores"]["CA_mean"] == pytest.approx((0 + 1 + 0.579380) / 3, abs=1e-6)


def test_ca_and_mgbi_not_estimable_from_three_images_per_scene():
    labels = {
        ("u1", "neutral"): ["s", "s", "s"],
        ("u2", "neutral"): ["s", "a", "a"],
        ("u1", "subject"): ["s", "a"],
        ("u2", "subject"): ["a"],
    }
    primary = pd.DataFrame(
        [
            dict(config="c", unit_id=u, variant=v, seed=i, judge="J", label=lab)
            for (u, v), labs in labels.items()
            for i, lab in enumerate(labs)
        ]
    )
    units = pd.DataFrame({"unit_id": ["u1", "u2"], "bias_type": ["gender", "gender"]})
    report = diversity_report(diversity_frame(primary, units))["J"]["c"]
    scores = report["scores"]
    # default: at least 20 images per scene (HoloFair E.1); 3 here -> null, not 0.000
    assert (
        math.isnan(scores["CA_0.10"])
        and math.isnan(scores["MGBI"])
        and scores["scenes_with_enough_images"] == 0
    )
    assert (
        scores["scene_images_median"] == 3.0 and "not estimable" in report["not_estimable"]["MGBI"]
    )
    assert scores["ID"] == pytest.approx(H12)  # the templates' pooled entropy stays estimable
    # 20 images in u2's scene (s 1 + 9, a 2 + 8): it alone enters CA, H = 1.0
    many = pd.concat(
        [
            primary,
            pd.DataFrame(
                [
                    dict(
                        config="c",
                        unit_id="u2",
                        variant="neutral",
                        seed=10 + i,
                        judge="J",
                        label="s" if i < 9 else "a",
                    )
                    for i in range(17)
                ]
            ),
        ]
    )
    ok = diversity_report(diversity_frame(many, units))["J"]["c"]
    assert ok["not_estimable"] is None and ok["scores"]["scenes_with_enough_images"] == 1
    assert ok["scores"]["CA_0.10"] == pytest.approx(1.0)


def test_diversity_replicates_by_hand():
    import numpy as np

    from implicit_bench.audits.intervals import _weighted_quantile, diversity_replicates

    # scenes: u1 0, u2 1, u3 0.918296; template counts (s, a): u1 (1,
    # 1) gender, u2 (1, 0) gender, u3 (1, 1) race
    h = np.array([0.0, 1.0, H12])
    counts = np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    types = np.array(["gender", "gender", "race"])
    weights = np.array(
        [
            [1.0, 1.0, 1.0],  # the original sample
            [0.0, 2.0, 1.0],  # u2 twice, u3: scenes (0.918296, 1, 1)
            [3.0, 0.0, 0.0],  # u1 three times: no race template image -> ID undefined
        ]
    )
    reps = diversity_replicates(weights, h, counts, types, 2, (0.05, 0.10, 0.20))
    # replicate 0 = the point estimates of test_scores_by_hand
    assert reps["CA_0.10"][0] == pytest.approx(0.1836592, abs=1e-6)
    assert reps["ID"][0] == pytest.approx(0.958278, abs=1e-6)
    assert reps["MGBI"][0] == pytest.approx(0.419520, abs=1e-6)
    # replicate 1: sorted (0.918296, 1, 1); CA_0.10 at position 0.2
    # -> 0.918296 + 0.2 * 0.081704 = 0.934637
    assert reps["CA_0.10"][1] == pytest.approx(0.934637, abs=1e-6)
    assert reps["CA_mean"][1] == pytest.approx((H12 + 2) / 3)
    # gender templates: u2 twice -> (2, 0) -> H 0 -> ID 0 -> MGBI 0
    assert reps["ID"][1] == 0.0 and reps["MGBI"][1] == 0.0
    # replicate 2: race has no template image in the resample -> ID nan; scenes all 0
    assert math.isnan(reps["ID"][2]) and reps["CA_0.20"][2] == 0.0
    # weighted quantile equals numpy's quantile of the expanded multiset
    vals = np.array([0.1, 0.4, 0.5, 0.9])
    w = np.array([[2.0, 0.0, 1.0, 3.0]])
    expanded = np.repeat(vals, w[0].astype(int))
    for q in (0.05, 0.1, 0.2, 0.5, 0.9):
        assert _weighted_quantile(vals, w, q)[0] == pytest.approx(np.quantile(expanded, q))
