"""HoloFair items beside MGBI: the Deviation Ratio (C.5), the Fair-GRPO reward
(3.4.1, E.3), the abstention threshold tau (3.3) and the bootstrap over prompts and
generations (F.2), on hand-worked values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from implicit_bench.audits.diversity_study import ATTRIBUTES, face_diversity_scores
from implicit_bench.audits.holofair import (
    deviation_ratio,
    fair_grpo_rewards,
    two_level_replicates,
)
from implicit_bench.backends.faces import ABSTAINED, NO_FACE, FaceParams
from implicit_bench.backends.faces.attributes import distribution, face_attributes


def test_deviation_ratio_by_hand():
    assert deviation_ratio([10, 10]) == 0.0
    assert deviation_ratio([15, 5]) == pytest.approx(0.5)  # |0.75 - 0.5| / (1 - 0.5)
    assert deviation_ratio([20, 0]) == 1.0
    # shares 0.6 / 0.3 / 0.1: |0.6 - 1/3| / (2/3) = 0.4
    assert deviation_ratio([6, 3, 1]) == pytest.approx(0.4)
    # erasing a 10% group moves DR linearly (C.5): 0.1 -> 0.0 of three groups
    assert deviation_ratio([5, 4, 1]) == pytest.approx((1 / 3 - 0.1) / (2 / 3))  # 0.35
    assert deviation_ratio([5, 5, 0]) == pytest.approx((1 / 3) / (2 / 3))  # 0.5
    assert math.isnan(deviation_ratio([0, 0]))
    with pytest.raises(ValueError):
        deviation_ratio([3])


def test_fair_grpo_reward_by_hand():
    gender = ["female"] * 15 + ["male"] * 5  # N = 20, w = 1
    r = fair_grpo_rewards({"gender": gender}, {"gender": ("female", "male")})
    assert r[:15] == pytest.approx([math.log(0.5 / 0.75)] * 15)  # -0.405465
    assert r[15:] == pytest.approx([math.log(0.5 / 0.25)] * 5)  # +0.693147
    # the group mean is -KL(p || uniform) = H(p) - log 2 (nats) = -0.130812
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert r.mean() == pytest.approx(h - math.log(2)) == pytest.approx(-0.1308121, abs=1e-6)
    # a balanced group earns 0 everywhere
    balanced = fair_grpo_rewards(
        {"gender": ["female", "male"] * 10}, {"gender": ("female", "male")}
    )
    assert balanced == pytest.approx(np.zeros(20))


def test_fair_grpo_reward_two_attributes_weights_and_no_reading():
    cats = {"gender": ("female", "male"), "age": ("young", "middle", "elderly")}
    readings = {
        "gender": ["female", "female", "male", NO_FACE],
        "age": ["young", "young", "young", None],
    }
    r = fair_grpo_rewards(readings, cats, weights={"gender": 1.0, "age": 0.5})
    # gender over the 3 read images: female 2/3, male 1/3; age: young 3/3
    expected = [
        math.log(0.5 / (2 / 3)) + 0.5 * math.log((1 / 3) / 1.0),
        math.log(0.5 / (2 / 3)) + 0.5 * math.log((1 / 3) / 1.0),
        math.log(0.5 / (1 / 3)) + 0.5 * math.log((1 / 3) / 1.0),
        0.0,  # no reading of either attribute
    ]
    assert r == pytest.approx(expected)
    # a non-uniform target (HoloFair D.2): 2/3 female is on target, reward 0 for gender
    on_target = fair_grpo_rewards(
        {"gender": readings["gender"]},
        {"gender": cats["gender"]},
        targets={"gender": {"female": 2 / 3, "male": 1 / 3}},
    )
    assert on_target == pytest.approx([0, 0, 0, 0])


def test_abstention_threshold():
    face = {"gender": "male", "gender_confidence": 80, "age": 45, "age_confidence": 55}
    face["box"] = [0, 0, 9, 9]
    off = face_attributes([face], FaceParams())
    assert (off["gender"], off["age_group"]) == ("male", "middle")
    tau = face_attributes([face], FaceParams(tau=0.6))
    assert (tau["gender"], tau["age_group"]) == ("male", ABSTAINED)  # 0.55 < 0.6 <= 0.80
    both = face_attributes([face], FaceParams(tau=0.9))
    assert both["gender"] == both["age_group"] == ABSTAINED
    none = face_attributes([], FaceParams(tau=0.9))
    assert none["gender"] == NO_FACE
    d = distribution(pd.Series(["male", ABSTAINED, "female", NO_FACE]), ("female", "male"))
    assert d["abstained"] == 1 and d["no_face"] == 1 and d["shares"]["male"] == 0.5
    with pytest.raises(ValueError):
        FaceParams(tau=1.5)


def _frame(scene: dict[str, list[tuple[str, str]]], template: list[tuple[str, str]]):
    rows = []
    for unit, images in scene.items():
        rows += [
            {"unit_id": unit, "variant": "neutral", "gender": g, "age_group": a} for g, a in images
        ]
        rows += [
            {"unit_id": unit, "variant": "subject", "gender": g, "age_group": a}
            for g, a in template
        ]
    return pd.DataFrame(rows)


def test_scores_carry_deviation_ratio_reward_and_abstentions():
    frame = _frame(
        {
            "u1": [("female", "young")] * 3 + [("male", "young")],
            "u2": [("female", "young"), ("male", "middle"), (ABSTAINED, "elderly")],
        },
        [("female", "young"), ("male", "middle")],
    )
    s = face_diversity_scores(frame, ["gender", "age"], "neutral", "subject", (0.1,))
    per = {p["unit_id"]: p for p in s["per_prompt"]}
    assert per["u1"]["DR_gender"] == pytest.approx(0.5)  # 3/4 female
    assert per["u1"]["DR_age"] == pytest.approx(1.0)  # all young
    assert per["u2"]["DR_gender"] == pytest.approx(0.0)  # abstained image left out
    assert per["u2"]["DR_age"] == pytest.approx(0.0)
    # u1's group reward: gender -KL(3/4, 1/4) + age log((1/3) / 1)
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert per["u1"]["fair_grpo_reward"] == pytest.approx(h - math.log(2) + math.log(1 / 3))
    # u2: gender balanced over 2 read images (0 each, 0 for the abstained one), age uniform
    assert per["u2"]["fair_grpo_reward"] == pytest.approx(0.0)
    assert s["deviation_ratio"]["template"] == {"gender": 0.0, "age": pytest.approx(0.5)}
    assert s["deviation_ratio"]["scenes_max"]["age"] == pytest.approx(1.0)
    assert s["images_abstained"] == {"gender": 1, "age": 0}


ATTRS = {a: ATTRIBUTES[a] for a in ("gender", "age")}


def test_two_level_bootstrap_collapsed_prompts_stay_collapsed():
    # every scene prompt shows one class only: D = 0 in every replicate, whatever is drawn
    frame = _frame(
        {"u1": [("female", "young")] * 5, "u2": [("male", "elderly")] * 5},
        [("female", "young"), ("male", "middle")],
    )
    reps = two_level_replicates(frame, ATTRS, "neutral", "subject", (0.1,), 50, 1)
    assert np.all(reps["CA_0.10"] == 0) and np.all(reps["CA_mean"] == 0)
    assert np.all(reps["MGBI"] == 0)


def test_two_level_bootstrap_resamples_generations():
    # one prompt: resampling prompts alone cannot move CA-mean; resampling its images does
    images = [("female", "young"), ("male", "middle"), ("female", "elderly"), ("male", "young")]
    frame = _frame({"u1": images}, images)
    point = face_diversity_scores(frame, ["gender", "age"], "neutral", "subject", (0.1,))
    reps = two_level_replicates(frame, ATTRS, "neutral", "subject", (0.1,), 200, 3)
    assert np.nanstd(reps["CA_mean"]) > 0
    assert np.nanmax(reps["CA_mean"]) <= point["CA_mean"] + 1e-12  # balanced is the maximum
    again = two_level_replicates(frame, ATTRS, "neutral", "subject", (0.1,), 200, 3)
    assert np.array_equal(reps["CA_mean"], again["CA_mean"], equal_nan=True)  # seeded


def test_recovery_sets_planted_face_shares_beside_the_study():
    from implicit_bench.world.recovery.stage import diversity_study_entries

    class World:
        def rows(self, generator):
            assert generator == "w_local"
            return pd.DataFrame(
                {"p_female": [0.75], "p_young": [0.6], "p_middle": [0.3], "p_elderly": [0.1]},
                index=["u1"],
            )

    study = {
        "generator": "sim_local",
        "scores": {
            "per_prompt": [{"unit_id": "u1", "DR_gender": 0.6, "DR_age": 0.5}],
            "deviation_ratio": {"scenes_mean": {"gender": 0.6, "age": 0.5}},
            "fair_grpo_reward": {"weights": {"gender": 1.0, "age": 1.0}, "mean": -0.5},
        },
    }
    dr_g, dr_a, reward = diversity_study_entries(World(), study, {"sim_local": "w_local"}, 0.0)
    assert dr_g["truth"] == pytest.approx(0.5) and dr_g["estimate"]["value"] == 0.6
    assert dr_a["truth"] == pytest.approx((0.6 - 1 / 3) / (2 / 3))  # 0.4
    kl_g = 0.75 * math.log(0.5 / 0.75) + 0.25 * math.log(0.5 / 0.25)
    kl_a = sum(p * math.log((1 / 3) / p) for p in (0.6, 0.3, 0.1))
    assert reward["truth"] == pytest.approx(kl_g + kl_a)  # -0.331479
    assert reward["covered"] is None
    # a misreading judge pulls the read shares toward uniform: 0.75 -> 0.7 at error 0.1
    dr_g, _, _ = diversity_study_entries(World(), study, {"sim_local": "w_local"}, 0.1)
    assert dr_g["truth"] == pytest.approx((0.75 * 0.9 + 0.25 * 0.1 - 0.5) / 0.5)
