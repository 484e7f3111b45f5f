"""The simulated world's expected values, fast path, coverage and power
against hand-worked numbers."""

from __future__ import annotations

import numpy as np
import pytest

from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.world import measure
from implicit_bench.world.params import SimJudgeWorld, WorldParams
from implicit_bench.world.recovery.fastpath import estimates, simulate, truths
from implicit_bench.world.recovery.power import with_gap
from implicit_bench.world.recovery.truth import entry, strength_group_truth
from implicit_bench.world.sampling import perceive_many, rubric_scores

JUDGE = SimJudgeWorld(
    confusion={
        "s": {"s": 0.8, "a": 0.1, "neither": 0.1},
        "a": {"s": 0.0, "a": 1.0, "neither": 0.0},
        "neither": {"s": 0.0, "a": 0.0, "neither": 1.0},
    },
    slot_a=0.5,
    invalid=0.0,
    rubric_mean={"s": 4.0, "a": 0.0, "neither": 2.0},
    rubric_sd=1.0,
    alignment_error=0.1,
)


def test_blind_stored_by_hand():
    # shows s with 0.5, neither with 0.5; perceived: s 0.4, a 0.05,
    # neither 0.55; unsure -> A half the time
    probs = np.array([[0.5, 0.0, 0.5], [0.5, 0.0, 0.5]])
    stored = measure.blind_stored(probs, JUDGE, np.array(["sa", "as"]))
    assert np.allclose(stored[0], [0.4 + 0.275, 0.05, 0.275])
    assert np.allclose(stored[1], [0.4, 0.05 + 0.275, 0.275])
    assert np.allclose(measure.slot_a(probs, JUDGE, np.array(["sa", "as"])), [0.675, 0.325])
    assert np.allclose(measure.flip(probs, JUDGE), 0.55 * 0.75)
    assert np.allclose(measure.aligned(np.array([0.0, 1.0]), JUDGE), [0.9, 0.1])


def test_score_pmf_matches_the_sampling_rule():
    rng = np.random.default_rng(3)
    n = 200_000
    perceived = rng.integers(0, 3, n)
    scores = rubric_scores(perceived, JUDGE, rng.random(n))
    pmf = measure.score_pmf(JUDGE)
    for k in range(3):
        freq = np.bincount(scores[perceived == k], minlength=6) / (perceived == k).sum()
        assert np.allclose(freq, pmf[k], atol=0.006)
    assert np.allclose(pmf.sum(axis=1), 1.0)
    # a sure judge with no noise gives its mean
    exact = JUDGE.model_copy(update={"rubric_sd": 0.0})
    assert measure.score_pmf(exact)[0, 4] == 1.0


def test_pooled_score_moments_weigh_each_judge_by_its_valid_answers():
    """Judge A: images with E[score] 1 and 3 (E[score^2] 1 and 9), always valid; judge B: one
    image, E 2, E2 4, valid half the time. Weight 1 + 1 + 0.5 = 2.5; mean (1 + 3 + 0.5 * 2) /
    2.5 = 2.0; E2 (1 + 9 + 0.5 * 4) / 2.5 = 4.8; variance 4.8 - 4 = 0.8 (equal weights would
    give 14 / 3 - 4 = 0.667)."""
    parts = [
        (np.array([1.0, 3.0]), np.array([1.0, 9.0]), 1.0),
        (np.array([2.0]), np.array([4.0]), 0.5),
    ]
    mean, var = measure.pooled_score_moments(parts)
    assert mean == pytest.approx(2.0) and var == pytest.approx(0.8)


def test_perceive_many_is_inverse_cdf():
    conf = measure.confusion(JUDGE)
    assert perceive_many(np.array([0, 0, 0]), conf, np.array([0.1, 0.85, 0.95])).tolist() == [
        0,
        1,
        2,
    ]


def test_strength_group_probabilities_by_hand():
    import pandas as pd

    frame = pd.DataFrame({"unit_id": ["u"] * 3, "p_s": [0.5, 0.5, 0.5]})
    g = strength_group_truth(frame, 1.0, 3).iloc[0]
    assert g["0 of 3"] == pytest.approx(0.125) and g["3 of 3"] == pytest.approx(0.125)
    assert g["1-2 of 3"] == pytest.approx(0.75)
    assert strength_group_truth(frame, 0.9, 3).iloc[0][
        ["0 of 3", "1-2 of 3", "3 of 3"]
    ].sum() == pytest.approx(0.729)


def test_entry_coverage_flag():
    assert entry("g", "x", 0.5, 0.4, [0.3, 0.6])["covered"] is True
    assert entry("g", "x", 0.5, 0.4, [0.3, 0.6], n=7)["estimate"] == {
        "value": 0.4,
        "ci": [0.3, 0.6],
        "n": 7,
        "level": 0.95,
    }
    assert entry("g", "x", 0.7, 0.4, [0.3, 0.6])["covered"] is False
    assert entry("g", "x", None, 0.4, [0.3, 0.6])["covered"] is None
    assert entry("g", "x", 0.5, 0.4, [0.3, 0.6], diagnostic=True)["covered"] is None


@pytest.mark.slow
def test_fast_path_estimates_recover_the_planted_truth():
    params = WorldParams(
        generators={"g": {"bias": 0.5}, "api": {"refuses": True}},
        judges={"j": JUDGE.model_copy(update={"invalid": 0.05}), "k": SimJudgeWorld()},
        bias_types={
            "gender": {"stereo": 0.6, "anti": 0.15, "refusal": 0.2},
            "race": {"stereo": 0.3, "anti": 0.3},
        },
    )
    world = simulate(
        params,
        n_units=3000,
        seeds=[42, 1042, 2042],
        generator="g",
        api_generator="api",
        blind_judge="j",
        rubric_judges=["j", "k"],
        rng=np.random.default_rng(5),
    )
    truth = truths(world, params, "j", ["j", "k"], 3)
    est = estimates(world, "j", ["j", "k"], 3, Bootstrap(n=200, seed=1))
    for name in (
        "default_rate",
        "success_stereotype",
        "success_anti",
        "gap",
        "a_to_s",
        "slot_a_share",
        "flip_rate",
        "refusal_rate",
        "success_anti [3 of 3]",
        "success_anti [0 of 3]",
    ):
        assert est[name]["value"] == pytest.approx(truth[name], abs=0.025), name
    for bt in ("gender", "race"):
        assert est[f"hedges_g [{bt}]"]["value"] == pytest.approx(
            truth[f"hedges_g [{bt}]"], abs=0.12
        )
    # the planted slope: units whose neutral images are all s succeed less on anti prompts
    assert truth["success_anti [3 of 3]"] < truth["success_anti [0 of 3]"]


def test_with_gap_plants_the_requested_gap():
    params = with_gap(WorldParams(), 0.2)
    assert params.success.stereo - params.success.anti_base == pytest.approx(0.2)
    assert params.success.anti_slope == 0.0


def test_recovery_truth_of_judgement_rows(tmp_path):
    """RowTruth maps judgement rows to their planted probabilities;
    primary_rows keeps the hash order."""
    import pandas as pd

    from implicit_bench._util.files import write_json, write_table
    from implicit_bench.protocol.schema import blind_order
    from implicit_bench.world.model import load_world
    from implicit_bench.world.recovery.truth import RowTruth, blind_truths, primary_rows
    from implicit_bench.world.truth import plant, world_json

    params = WorldParams(generators={"g": {"bias": 0.0}}, judges={"j": JUDGE})
    units = pd.DataFrame(
        [
            {
                "unit_id": "u1",
                "bias_type": "x",
                "head": "nurse",
                "relation": None,
                "stereotype": "kind",
                "anti_stereotype": "rude",
                "prompt_neutral": "a photo of a nurse",
            }
        ]
    )
    write_table(plant(units, params), tmp_path / "truth.parquet")
    write_json(tmp_path / "world.json", world_json(params))
    world = load_world(str(tmp_path))
    rows = pd.DataFrame(
        [
            {
                "judge": "j",
                "task": "blind",
                "config": "c",
                "unit_id": "u1",
                "variant": "neutral",
                "seed": 42,
                "order": o,
            }
            for o in ("sa", "as")
        ]
    )
    kept = primary_rows(rows, "j")
    assert kept["order"].tolist() == [blind_order("u1", 42, "neutral")]
    rt = RowTruth(world, {"c": "g"})
    stored, rendered = blind_truths(rt, kept, JUDGE)
    planted = world.truth.iloc[0]
    assert np.allclose(rendered[0], [planted["p_s"], planted["p_a"], planted["p_n"]])
    assert np.allclose(
        stored[0], measure.blind_stored(rendered, JUDGE, kept["order"].to_numpy())[0]
    )
    assert np.isclose(stored.sum(), 1.0)


def test_recovery_draws_the_evaluate_stages_bootstrap():
    """One way to build a Bootstrap from params: the top-level block under evaluate's own keys
    (level too, which the hand merge dropped)."""
    from implicit_bench.world.recovery.stage import evaluate_bootstrap

    raw = {
        "bootstrap": {"n": 500, "seed": 3, "level": 0.9},
        "evaluate": {"bootstrap": {"seed": 11}},
    }
    boot = evaluate_bootstrap(raw, "params.yaml")
    assert (boot.n, boot.seed, boot.level) == (500, 11, 0.9)
    assert (
        evaluate_bootstrap({}, "params.yaml").n,
        evaluate_bootstrap({}, "params.yaml").seed,
    ) == (1000, 42)
