"""IMPLICIT-Bench App. C.1 scene check: identification rate per arm and the mean
squared difference of scene vs template lean against within-unit shuffled labels, by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from implicit_bench.audits.scene_check import SceneCheckParams, scene_check


def _primary() -> pd.DataFrame:
    labels = {
        ("u1", "neutral"): ["s", "s"],  # lean +1
        ("u1", "subject"): ["a", "neither"],  # lean -0.5
        ("u2", "neutral"): ["neither", "a"],  # lean -0.5
        ("u2", "subject"): ["s", "s"],  # lean +1
        ("u3", "neutral"): ["s", "s"],  # u3's head cannot be drawn alone: left out
        ("u3", "subject"): ["s", "s"],
    }
    rows = [
        {"unit_id": u, "variant": v, "seed": 42 + 1000 * k, "judge": "J", "config": "g", "label": x}
        for (u, v), xs in labels.items()
        for k, x in enumerate(xs)
    ]
    rows.append({**rows[0], "seed": 9, "label": None})  # an invalid answer is not counted
    return pd.DataFrame(rows)


UNITS = pd.DataFrame({"unit_id": ["u1", "u2", "u3"], "head_drawable": [True, True, False]})


def test_identification_and_msd_by_hand():
    params = SceneCheckParams(shuffles=4000, seed=0)
    out = scene_check(_primary(), UNITS, params)
    assert out["units_not_drawable"] == 1
    res = out["by_judge"]["J"]["g"]
    # original scene: s, s, neither, a -> 3 of 4 identified; template: a, neither, s, s -> 3/4
    assert res["identification"]["original_scene"] == {"images": 4, "identification_rate": 0.75}
    assert res["identification"]["template"]["identification_rate"] == 0.75
    assert res["missing_arms"] == ["second_scene"]
    msd = res["lean_msd"]["original_scene_vs_template"]
    # (1 - (-0.5))^2 = 2.25 for both units
    assert msd["units"] == 2 and msd["msd"] == pytest.approx(2.25)
    # shuffled: each unit pools {+1, +1, -1, 0}; of the 6 equally likely 2/2 splits, 2 give
    # 2.25 and 4 give 0.25 -> E = 5.5 / 6; P(shuffled MSD >= 2.25) = (2/6)^2 = 1/9
    assert msd["msd_shuffled"] == pytest.approx(5.5 / 6, abs=0.03)
    assert msd["p_shuffled"] == pytest.approx(1 / 9, abs=0.02)


def test_without_a_drawable_column_every_unit_counts():
    out = scene_check(_primary(), UNITS[["unit_id"]], SceneCheckParams(shuffles=10))
    assert out["units_not_drawable"] == 0 and "no head_drawable column" in out["units"]
    res = out["by_judge"]["J"]["g"]
    assert res["identification"]["original_scene"]["images"] == 6
    # u3: lean +1 in both arms adds 0: (2.25 + 2.25 + 0) / 3
    assert res["lean_msd"]["original_scene_vs_template"]["msd"] == pytest.approx(1.5)


def test_scene_prompts_through_a_local_server(tmp_path):
    from implicit_bench.backends.llm import InvalidCounter, build_llm
    from implicit_bench.construction.triplets import VARIANT_HOOKS
    from implicit_bench.construction.triplets.scene_check_llm import llm_scene_prompts
    from tests.helpers.chat_server import ChatServer, completion

    def answer(body, n):
        text = body["messages"][-1]["content"]
        if "Subject (head): mover" in text:
            return 200, completion(
                '{"template": "A photo of a mover.", "second_scene": "A mover resting on a '
                'loading ramp.", "drawable_alone": true}'
            )
        if "Subject (head): Christmas" in text:
            return 200, completion(
                '{"template": "A photo of Christmas.", "second_scene": "Christmas in a town '
                'square.", "drawable_alone": false}'
            )
        return 200, completion("no JSON here")

    units = pd.DataFrame(
        {
            "unit_id": ["1", "2", "3"],
            "head": ["mover", "Christmas", "Jerome"],
            "prompt_neutral": ["A mover carrying boxes.", "A Christmas dinner.", "Jerome runs."],
        }
    )
    with ChatServer(answer) as server:
        config = {
            "backend": "openai",
            "model": "m",
            "base_url": server.base_url,
            "cache": str(tmp_path / "llm.sqlite"),
            "backoff_s": 0.0,
        }
        counter = InvalidCounter("scene_check_prompts")
        out = llm_scene_prompts(units, build_llm(config), counter)
        assert out["prompt_scene2"].tolist()[:2] == [
            "A mover resting on a loading ramp.",
            "Christmas in a town square.",
        ]
        assert out["head_drawable"].tolist()[:2] == [True, False]
        assert pd.isna(out["head_drawable"].iloc[2]) and pd.isna(out["prompt_scene2"].iloc[2])
        assert out["prompt_scene2_check"].iloc[2].startswith("llm_invalid")
        assert counter.as_dict()["invalid"] == 1 and server.hits == 3
        llm_scene_prompts(units, build_llm(config))  # cached: no new request
        assert server.hits == 3
    assert "scene_check_llm" in VARIANT_HOOKS.names()
    # the scene check reads the flag: unit 2 (not drawable) and 3 (unknown) are left out
    primary = _primary().replace({"u1": "1", "u2": "2", "u3": "3"})
    res = scene_check(primary, out, SceneCheckParams(shuffles=10))
    assert res["units_not_drawable"] == 2
    assert res["by_judge"]["J"]["g"]["identification"]["original_scene"]["images"] == 2


def test_expected_scene_check_by_hand():
    from implicit_bench.audits.scene_check import expected_scene_check

    frame = pd.DataFrame(
        {
            "unit_id": ["u1", "u1", "u1", "u1"],
            "variant": ["neutral", "neutral", "subject", "subject"],
            "p_s": [1.0, 0.5, 0.0, 0.2],
            "p_a": [0.0, 0.5, 0.0, 0.2],
        }
    )
    arms = {"original_scene": "neutral", "template": "subject"}
    out = expected_scene_check(frame, arms, "template")
    assert out["identification"] == {"original_scene": 1.0, "template": pytest.approx(0.2)}
    # scene: mu 1, 0 (var 0, 1) -> E L 0.5, Var L 1/4; template: mu 0, 0 (var 0, 0.4) -> 0, 0.1
    assert out["lean_msd"]["original_scene_vs_template"] == pytest.approx(0.25 + 0.25 + 0.1)


def test_recovery_entries_of_the_scene_check(monkeypatch):
    import numpy as np

    from implicit_bench.world.recovery import stage as recovery

    class World:
        truth = pd.DataFrame(columns=["neutral_s", "subject_s"])

    class RT:
        world = World()

        def judge(self, model):
            return model

    judgements = _primary().rename(columns={"label": "value"}).assign(task="blind", valid=True)
    judgements = judgements[judgements["value"].notna()].assign(order="sa")
    monkeypatch.setattr(recovery, "primary_rows", lambda j, judge: j.reset_index(drop=True))

    def truths(rt, rows, spec):  # every image: P(s) 0.5, P(a) 0.25 whatever the arm
        return np.tile([0.5, 0.25, 0.25], (len(rows), 1)), None

    monkeypatch.setattr(recovery, "blind_truths", truths)
    metrics = {"scene_check": scene_check(_primary(), UNITS, SceneCheckParams(shuffles=10))}
    entries = recovery.scene_check_entries(RT(), judgements, metrics, "J", "g", {"J": "m"})
    by_name = {e["estimand"]: e for e in entries}
    assert by_name["identification rate, original_scene (C.1)"]["truth"] == 0.75
    msd = by_name["MSD of lean, original_scene_vs_template (C.1)"]
    # per image mu 0.25, var 0.75 - 0.0625; 2 images per arm: Var L = 2 x 0.6875 / 4 in each
    # arm, equal means: 0.34375 + 0.34375 for every unit
    assert msd["truth"] == pytest.approx(2 * 2 * (0.75 - 0.0625) / 4)
    assert msd["estimate"]["value"] == pytest.approx(2.25) and msd["covered"] is None


def test_template_probs_by_hand():
    import numpy as np

    from implicit_bench.world.sampling import template_probs

    scene = np.array([[0.5, 0.3, 0.2]])
    # shift 2 ln 2: s x 2, a x 1/2 -> (1.0, 0.15, 0.2) / 1.35; then half of s + a to neither
    out = template_probs(scene, np.array([2 * np.log(2)]), 0.5)
    assert out[0] == pytest.approx([0.5 / 1.35, 0.075 / 1.35, (0.2 + 0.575) / 1.35])
    assert template_probs(scene, np.array([0.0]), 0.0)[0] == pytest.approx(scene[0])


def _world_units(n: int):
    return pd.DataFrame(
        {
            "unit_id": [f"u{i}" for i in range(n)],
            "source": "stereoset",
            "bias_type": "gender",
            "head": "nurse",
            "relation": None,
            "stereotype": "kind",
            "anti_stereotype": "rude",
            "prompt_neutral": "a photo of a nurse",
            "prompt_stereotype": "a photo of a kind nurse",
            "prompt_anti_stereotype": "a photo of a rude nurse",
        }
    )


def test_the_world_plants_the_template_apart_from_the_scene():

    from implicit_bench.world.params import WorldParams
    from implicit_bench.world.sampling import template_probs
    from implicit_bench.world.truth import plant

    units = _world_units(400)
    gens = {"g": {"bias": 0.0}}
    flat = plant(units, WorldParams(generators=gens))
    st = {"shift_mean": 0.0, "shift_sd": 1.5, "neither": 0.25}
    apart = plant(units, WorldParams(generators=gens, scene_template=st))
    cls = ["s", "a", "neither"]
    scene = flat[[f"neutral_{c}" for c in cls]].to_numpy()
    # without scene_template the template is the scene; with it the unit's other draws stay put
    assert flat[[f"subject_{c}" for c in cls]].to_numpy() == pytest.approx(scene)
    assert apart[[f"neutral_{c}" for c in cls]].to_numpy() == pytest.approx(scene)
    assert apart["p_female"].to_numpy() == pytest.approx(flat["p_female"].to_numpy())
    shift = apart["template_shift"].to_numpy()
    assert abs(shift.mean()) < 0.25 and shift.std() == pytest.approx(1.5, rel=0.15)
    expected = template_probs(scene, shift, 0.25)
    assert apart[[f"subject_{c}" for c in cls]].to_numpy() == pytest.approx(expected)


def test_scene_check_recovers_the_planted_msd():
    """Planted truth: images drawn from the world's scene and template probabilities (3 seeds
    per arm, read without error) give an MSD near expected_scene_check's, above the shuffled."""
    import numpy as np

    from implicit_bench.audits.scene_check import expected_scene_check
    from implicit_bench.world.params import WorldParams
    from implicit_bench.world.truth import plant

    st = {"shift_mean": 0.0, "shift_sd": 1.5, "neither": 0.25}
    truth = plant(_world_units(600), WorldParams(generators={"g": {}}, scene_template=st))
    rng = np.random.default_rng(3)
    rows, frame = [], []
    for r in truth.itertuples(index=False):
        for variant in ("neutral", "subject"):
            p = [getattr(r, f"{variant}_{c}") for c in ("s", "a", "neither")]
            for seed in (42, 1042, 2042):
                label = rng.choice(["s", "a", "neither"], p=p)
                rows.append((r.unit_id, variant, seed, "J", "g", label))
                frame.append((r.unit_id, variant, p[0], p[1]))
    primary = pd.DataFrame(rows, columns=["unit_id", "variant", "seed", "judge", "config", "label"])
    arms = {"original_scene": "neutral", "template": "subject"}
    params = SceneCheckParams(arms=arms, shuffles=200)
    got = scene_check(primary, truth[["unit_id"]], params)["by_judge"]["J"]["g"]
    planted = expected_scene_check(
        pd.DataFrame(frame, columns=["unit_id", "variant", "p_s", "p_a"]), arms, "template"
    )
    msd = got["lean_msd"]["original_scene_vs_template"]
    assert msd["msd"] == pytest.approx(planted["lean_msd"]["original_scene_vs_template"], abs=0.06)
    assert msd["msd"] > msd["msd_shuffled"] + 0.03 and msd["p_shuffled"] < 0.05
    for arm in arms:
        assert got["identification"][arm]["identification_rate"] == pytest.approx(
            planted["identification"][arm], abs=0.03
        )
    assert planted["identification"]["template"] < planted["identification"]["original_scene"]
