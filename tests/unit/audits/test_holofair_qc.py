"""HoloFair C.4's quality-control rules against values worked out by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from implicit_bench.audits.holofair_qc import (
    MAJORITY,
    REVIEW,
    UNANIMOUS,
    QualityParams,
    VoteParams,
    clip_rule,
    face_rule,
    quality_control,
    sim_votes,
    vote_outcome,
)

GENDER = {"gender": ("gender", ("female", "male"))}


def test_clip_rule_discards_scores_below_0_20():
    kept = clip_rule(pd.Series([0.25, 0.20, 0.19999, math.nan]), 0.20)
    assert kept.tolist() == [True, True, False, False]  # a missing score fails


def test_one_face_rule_with_and_without_detector_confidences():
    faces = pd.Series([0, 1, 2, 1, 1, 1])
    detector = pd.Series([[], [None], [0.95, 0.5], [0.85], [0.9], None])
    kept, reason = face_rule(faces, detector, 0.9)
    assert reason.tolist() == [
        "no face",
        "",  # one face, no detector confidence reported: the count alone
        "several faces",
        "low detector confidence",
        "",  # exactly 0.9 is enough
        "",
    ]
    assert kept.tolist() == [False, True, False, False, True, True]


def test_vote_rule_all_agree_or_two_with_mean_confidence_0_6():
    assert vote_outcome(["f", "f", "f"], [0.1, 0.1, 0.1], 0.6) == UNANIMOUS
    assert vote_outcome(["f", "f", "m"], [0.7, 0.5, 0.9], 0.6) == MAJORITY  # mean 0.6
    assert vote_outcome(["f", "m", "f"], [0.7, 1.0, 0.49], 0.6) == REVIEW  # mean 0.595
    assert vote_outcome(["young", "middle", "elderly"], [1.0, 1.0, 1.0], 0.6) == REVIEW


def test_simulated_voters_misread_with_their_error_rates():
    right = VoteParams(errors=[0.0, 0.0, 0.0], confidence_low=0.5)
    labels, confs = sim_votes("abc", "gender", "female", ("female", "male"), right)
    assert labels == ["female"] * 3 and all(0.5 <= c <= 1 for c in confs)
    wrong = VoteParams(errors=[0.0, 1.0, 1.0])
    labels, _ = sim_votes("abc", "gender", "female", ("female", "male"), wrong)
    assert labels == ["female", "male", "male"]  # two voters agree on the other gender


def _frame():
    return pd.DataFrame(
        {
            "sha256": ["a", "b", "c", "d", "e"],
            "faces": [1, 1, 0, 2, 1],
            "detector_confidences": [[None], [None], [], [None, None], [None]],
            "gender": ["female", "male", "no face", "male", "female"],
        }
    )


def test_quality_control_counts_per_rule_by_hand():
    frame = _frame()
    clip = pd.Series([0.30, 0.10, 0.40, 0.50, 0.25])
    params = QualityParams(vote=VoteParams(errors=[0.0, 0.0, 0.0]))
    block, passed = quality_control(frame, clip, GENDER, params, "sim")
    rules = block["rules"]
    # CLIP: b (0.10) discarded; faces among a, c, d, e: c none, d two -> a, e kept
    assert rules["clip_score"] == {
        "threshold": 0.2,
        "seen": 5,
        "kept": 4,
        "discarded": 1,
        "run": True,
    }
    assert (rules["one_face"]["seen"], rules["one_face"]["kept"]) == (4, 2)
    assert rules["one_face"]["reasons"] == {
        "no face": 1,
        "several faces": 1,
        "low detector confidence": 0,
    }
    assert rules["one_face"]["detector_confidence"].startswith("not reported by the face judge")
    # voters that never misread: a and e unanimous
    assert rules["vote"]["by_attribute"]["gender"] == {UNANIMOUS: 2, MAJORITY: 0, REVIEW: 0}
    assert block["kept"] == 2 and passed.tolist() == [True, False, False, False, True]
    # each rule alone over the five images; c has no face: nothing to vote on
    assert block["independent"]["one_face"] == {"seen": 5, "kept": 3, "discarded": 2}
    assert block["independent"]["vote"] == {"seen": 5, "kept": 4, "discarded": 1}
    assert block["simulated_voters"] is True


@pytest.mark.parametrize(("min_mean", "outcome"), [(0.0, MAJORITY), (1.0, REVIEW)])
def test_two_agreeing_voters_need_the_mean_confidence(min_mean, outcome):
    # voter 0 reads right, voters 1 and 2 always misread: two agree on the other gender;
    # confidences are below 1, so a mean of 1.0 is never reached and 0.0 always is
    params = QualityParams(vote=VoteParams(errors=[0.0, 1.0, 1.0], min_mean_confidence=min_mean))
    frame = _frame()
    block, passed = quality_control(frame, pd.Series([0.3] * 5), GENDER, params, "sim")
    # every CLIP-Score passes; one face: a, b and e
    assert block["rules"]["vote"]["by_attribute"]["gender"][outcome] == 3
    assert block["rules"]["vote"]["human_review"] == (3 if outcome == REVIEW else 0)
    assert block["kept"] == (0 if outcome == REVIEW else 3)


def test_without_a_clip_model_the_clip_rule_keeps_every_image_and_says_so():
    params = QualityParams(vote=VoteParams(errors=[0.0, 0.0, 0.0]))
    block, _ = quality_control(_frame(), None, GENDER, params, "sim")
    assert block["rules"]["clip_score"]["run"] is False
    assert block["rules"]["clip_score"]["kept"] == 5
