"""IMPLICIT-Bench App. C.1's direct arm: the triplet written from the sentence pair, rendered
and scored like the unit-based arm; its contrast rate (share of unit-seed pairs with dx > 0)
beside the unit-based arm's, and the planted truth recovery sets beside it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.analysis.direct_arm import contrast_rates, direct_arm_block
from implicit_bench.construction.triplets.direct import add_direct_prompts, deterministic_direct
from implicit_bench.world.params import SimJudgeWorld, WorldParams
from implicit_bench.world.recovery.stage import contrast_truth
from implicit_bench.world.sampling import perceive_many, rubric_scores, tilt
from implicit_bench.world.truth import plant, world_json

OURS = ("neutral", "stereotype", "anti_stereotype")
DIRECT = ("direct_neutral", "direct_stereotype", "direct_anti_stereotype")


def _rows(unit: str, seed: int, arm: tuple[str, ...], scores: tuple[float, float, float]):
    return [
        {"unit_id": unit, "seed": seed, "variant": v, "config": "c", "judge": "j", "score": x}
        for v, x in zip(arm, scores, strict=True)
    ]


def _table() -> pd.DataFrame:
    rows = [
        # u1 seed 1: ours dx = |4-0| - |4-5| = 3 > 0; direct |1-0| - |1-5| = -3
        *_rows("u1", 1, OURS, (4, 5, 0)),
        *_rows("u1", 1, DIRECT, (1, 5, 0)),
        # u1 seed 2: ours |2-1| - |2-4| = -1; direct 0 - 0 = 0 (not > 0)
        *_rows("u1", 2, OURS, (2, 4, 1)),
        *_rows("u1", 2, DIRECT, (3, 3, 3)),
        # u2 seed 1: ours |3-1| - |3-5| = 0; direct |5-0| - 0 = 5
        *_rows("u2", 1, OURS, (3, 5, 1)),
        *_rows("u2", 1, DIRECT, (5, 5, 0)),
        # u2 seed 2: ours neutral invalid (incomplete); direct |4-0| - 0 = 4
        *_rows("u2", 2, OURS, (np.nan, 5, 1)),
        *_rows("u2", 2, DIRECT, (4, 4, 0)),
        # u3: unit-based arm only -> left out of both arms
        *_rows("u3", 1, OURS, (5, 5, 0)),
    ]
    return pd.DataFrame(rows).assign(task="rubric")


def test_contrast_rate_on_a_hand_worked_table():
    out = contrast_rates(_table(), Bootstrap(n=200, seed=1))
    assert out["units"] == 2
    j = out["by_judge"]["j"]
    assert j["ours"]["pairs"] == 3 and j["ours"]["pairs_positive"] == 1
    assert j["ours"]["pair_rate"]["value"] == pytest.approx(1 / 3)
    assert j["direct"]["pairs"] == 4 and j["direct"]["pairs_positive"] == 2
    assert j["direct"]["pair_rate"]["value"] == pytest.approx(1 / 2)
    assert j["difference_pair_rate"]["value"] == pytest.approx(1 / 6)
    lo, hi = j["direct"]["pair_rate"]["ci"]
    assert lo <= 0.5 <= hi
    # unit means: ours u1 (3 - 1) / 2 = 1 > 0, u2 0; direct u1 -1.5, u2 4.5
    assert j["ours"]["unit_rate"] == pytest.approx(0.5)
    assert j["direct"]["unit_rate"] == pytest.approx(0.5)
    assert j["ours"]["mean_dx"] == pytest.approx((1 + 0) / 2)
    assert j["direct"]["mean_dx"] == pytest.approx((-1.5 + 4.5) / 2)
    assert out["union_unit_rate"] == {"ours": 0.5, "direct": 0.5}


def test_no_direct_rows_no_block():
    table = _table()
    assert direct_arm_block(table[table["variant"].isin(OURS)], Bootstrap(n=10)) is None
    block = direct_arm_block(table, Bootstrap(n=10))
    assert set(block["configs"]) == {"c"}


def test_contrast_truth_by_hand():
    # a judge that reads every picture right and scores s 5, a 0, neither 2 (no noise)
    spec = SimJudgeWorld(
        confusion={
            "s": {"s": 1.0, "a": 0.0, "neither": 0.0},
            "a": {"s": 0.0, "a": 1.0, "neither": 0.0},
            "neither": {"s": 0.0, "a": 0.0, "neither": 1.0},
        },
        rubric_mean={"s": 5.0, "a": 0.0, "neither": 2.0},
        rubric_sd=0.0,
    )
    probs = {
        "n": np.array([[0.5, 0.0, 0.5], [0.0, 0.0, 1.0]]),
        "s": np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]),
        "a": np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
    }
    # row 1: neutral s (5): |5-0| - |5-5| = 5 > 0; neutral neither (2): |2-0| - |2-5| = -1
    # row 2: scores 2, 5, 2: |2-2| - |2-5| = -3 -> never
    assert contrast_truth(probs, spec) == pytest.approx([0.5, 0.0])


def test_contrast_truth_matches_the_simulated_judge():
    """The exact P(dx > 0) against the simulated judge's own sampling rule (planted truth)."""
    spec = SimJudgeWorld()
    rng = np.random.default_rng(3)
    m = 40_000
    probs = {
        "n": np.tile([0.5, 0.1, 0.4], (m, 1)),
        "s": np.tile([0.9, 0.01, 0.09], (m, 1)),
        "a": np.tile([0.3, 0.55, 0.15], (m, 1)),
    }
    conf = np.array([[spec.confusion[t][r] for r in ("s", "a", "neither")] for t in spec.confusion])
    score = {}
    for key, p in probs.items():
        shown = (rng.random((m, 1)) >= np.cumsum(p, axis=1)[:, :2]).sum(axis=1)
        seen = perceive_many(shown, conf, rng.random(m))
        score[key] = rubric_scores(seen, spec, rng.random(m))
    dx = np.abs(score["n"] - score["a"]) - np.abs(score["n"] - score["s"])
    truth = float(contrast_truth({k: v[:1] for k, v in probs.items()}, spec)[0])
    assert float((dx > 0).mean()) == pytest.approx(truth, abs=0.01)


def _units() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "unit_id": f"u{i}",
                "bias_type": "gender",
                "head": "nurse",
                "relation": "is",
                "stereotype": "woman",
                "anti_stereotype": "man",
                "prompt_neutral": "a photo of a nurse",
                "prompt_stereotype": "a photo of a woman nurse",
                "prompt_anti_stereotype": "a photo of a man nurse",
            }
            for i in range(5)
        ]
    )


def test_world_plants_the_direct_arm():
    same = plant(_units(), WorldParams())
    for v in ("neutral", "stereotype", "anti_stereotype"):
        for c in ("s", "a", "neither"):
            assert np.allclose(same[f"direct_{v}_{c}"], same[f"{v}_{c}"])
    # defaults leave the world's fingerprint file as it was before the arm existed
    assert "direct_arm" not in world_json(WorldParams())["params"]
    params = WorldParams(direct_arm={"shift_mean": 1.0, "shift_sd": 0.5, "success_scale": 0.5})
    assert "direct_arm" in world_json(params)["params"]
    moved = plant(_units(), params)
    neutral = moved[["neutral_s", "neutral_a", "neutral_neither"]].to_numpy()
    direct = moved[["direct_neutral_s", "direct_neutral_a", "direct_neutral_neither"]].to_numpy()
    assert np.allclose(direct, tilt(neutral, moved["direct_shift"].to_numpy()))
    assert np.allclose(moved["direct_stereotype_s"], 0.9 * 0.5)  # success.stereo x scale
    # the unit-based arm's draws do not move
    assert np.allclose(neutral, same[["neutral_s", "neutral_a", "neutral_neither"]].to_numpy())


def test_stand_in_writer_from_the_sentence_pair():
    n, s, a, why = deterministic_direct("The mover was a strong man", "The mover was a weak woman.")
    assert why is None
    assert n == "A photo illustrating: The mover was a."
    assert s == "A photo illustrating: The mover was a strong man."
    assert a == "A photo illustrating: The mover was a weak woman."
    assert deterministic_direct("same words", "same words")[3] == "no_difference"
    assert deterministic_direct("poor", "rich")[3] == "no_shared_words"
    table = pd.DataFrame({"unit_id": ["x", "y"], "source_pair_id": ["p1", "missing"]})
    pairs = pd.DataFrame(
        {
            "pair_id": ["p1"],
            "stereotype_sentence": ["Poor people are lazy."],
            "anti_stereotype_sentence": ["Rich people are lazy."],
        }
    )
    out = add_direct_prompts(table, pairs)
    assert out.loc[0, "prompt_direct_neutral"] == "A photo illustrating: people are lazy."
    assert pd.isna(out.loc[1, "prompt_direct_neutral"])
    assert out.loc[1, "prompt_direct_neutral_check"] == "pair_not_found"


def test_select_stage_writes_the_direct_arm_beside_the_unit_based_arm(tmp_path):
    """run_select on the selection fixture (tests/helpers/analysis_fixtures.py) plus a direct arm
    that
    repeats the unit-based arm's scores: equal rates, a zero difference; the analysis itself
    leaves the direct rows out (rejected, not analysed)."""
    from implicit_bench.analysis.load import load_tables
    from implicit_bench.analysis.params import SelectParams
    from implicit_bench.analysis.stage import run_select
    from tests.helpers.analysis_fixtures import RUBRIC_TYPES, rubric_judgements, units

    units(RUBRIC_TYPES).to_csv(tmp_path / "units.csv", index=False)
    ours = rubric_judgements()
    direct = ours.assign(variant="direct_" + ours["variant"])
    path = tmp_path / "j.parquet"
    pd.concat([ours, direct], ignore_index=True).to_parquet(path)
    tables = load_tables(tmp_path / "units.csv", [path])
    assert not tables.judgements["variant"].astype(str).str.startswith("direct_").any()
    params = SelectParams(config="gen", judgements=[str(path)], pairs=None, extracted=None)
    block = run_select(tables, params).metrics["direct_arm"]["configs"]["gen"]
    # by hand (tests/unit/analysis/test_analysis_selection.py's docstring): judge A's dx over its 8
    # complete
    # seeds 2, 0, -4 | 1, 1 | -5, -3, -3 -> 3 of 8 > 0, units u2 only; judge B's 7: 3 | 0, 0, 0
    # | -4, -3, -4 -> 1 of 7, units u1 only; union u1, u2
    want = {"A": (8, 3 / 8, 1 / 3), "B": (7, 1 / 7, 1 / 3)}
    assert block["units"] == 3
    for judge, (pairs, rate, unit_rate) in want.items():
        got = block["by_judge"][judge]
        for arm in ("ours", "direct"):
            assert got[arm]["pairs"] == pairs
            assert got[arm]["pair_rate"]["value"] == pytest.approx(rate)
            assert got[arm]["unit_rate"] == pytest.approx(unit_rate)
        assert got["difference_pair_rate"]["value"] == 0
    assert block["union_unit_rate"] == {
        "ours": pytest.approx(2 / 3),
        "direct": pytest.approx(2 / 3),
    }


def test_direct_llm_hook_through_a_local_server(tmp_path):
    """The hook ``direct_llm``: construction_ablation.writer writes the arm (a real local chat
    server); an invalid answer nulls the unit's three prompts, with its check reason."""
    import json

    from implicit_bench.construction.triplets import VARIANT_HOOKS
    from tests.helpers.chat_server import ChatServer, completion

    def answer(body, n):
        text = body["messages"][-1]["content"]
        if "The mover was a strong man." in text:
            return 200, completion(
                '{"neutral": "A mover at work.", "stereotype_trigger": "A male mover at work.", '
                '"anti_stereotype_trigger": "A female mover at work."}'
            )
        return 200, completion("no JSON")

    pairs = pd.DataFrame(
        {
            "pair_id": ["p1", "p2"],
            "source": ["stereoset", "stereoset"],
            "bias_type": ["gender", "race"],
            "target": ["mover", None],
            "stereotype_sentence": ["The mover was a strong man.", "S2"],
            "anti_stereotype_sentence": ["The mover was a strong woman.", "A2"],
        }
    )
    pairs.to_parquet(tmp_path / "pairs.parquet")
    table = pd.DataFrame({"unit_id": ["u1", "u2"], "source_pair_id": ["p1", "p2"]})
    with ChatServer(answer) as server:
        block = {"backend": "openai", "base_url": server.base_url, "backoff_s": 0.0}
        params = {
            "llms": {"w": {**block, "model": "w", "cache": str(tmp_path / "w.sqlite")}},
            "construction_ablation": {"writer": "w", "raters": []},
        }
        (tmp_path / "params.yaml").write_text(json.dumps(params))
        hook = VARIANT_HOOKS.resolve("direct_llm")
        out = hook(table, str(tmp_path / "params.yaml"), str(tmp_path / "pairs.parquet"))
    assert out.loc[0, "prompt_direct_neutral"] == "A mover at work."
    assert out.loc[0, "prompt_direct_anti_stereotype"] == "A female mover at work."
    assert pd.isna(out.loc[0, "prompt_direct_neutral_check"])
    assert out.loc[1, ["prompt_direct_neutral", "prompt_direct_stereotype"]].isna().all()
    assert out.loc[1, "prompt_direct_stereotype_check"] == "llm_invalid"


def test_recovery_sets_the_planted_contrast_rate_beside_select(tmp_path):
    """recovery.stage.direct_arm_entries: per arm, the mean P(dx > 0) over exactly the complete
    pairs select used (a unit with an invalid direct score on its only seed leaves both arms)."""
    from implicit_bench.world.model import World
    from implicit_bench.world.recovery.stage import RowTruth, direct_arm_entries
    from implicit_bench.world.truth import variant_matrix

    params = WorldParams(
        generators={"g": {}},
        judges={"jj": {}},
        direct_arm={"shift_mean": 2.0, "shift_sd": 0.0},
    )
    truth = plant(_units(), params)
    world = World(params, truth, "f")
    rows = []
    for i in range(5):
        for arm in (OURS, DIRECT):
            for v, x in zip(arm, (3, 5, 1), strict=True):
                valid = not (i == 4 and v == "direct_neutral")
                rows.append(
                    {
                        "unit_id": f"u{i}",
                        "seed": 1,
                        "variant": v,
                        "config": "c",
                        "judge": "j",
                        "task": "rubric",
                        "value": str(x) if valid else None,
                        "valid": valid,
                    }
                )
    judgements = pd.DataFrame(rows)
    scored = judgements.assign(score=pd.to_numeric(judgements["value"]))
    selection = {"direct_arm": direct_arm_block(scored, Bootstrap(n=50, seed=1))}
    entries = direct_arm_entries(RowTruth(world, {"c": "g"}), judgements, selection, {"j": "jj"})
    by_name = {e["estimand"]: e for e in entries}
    spec = params.judges["jj"]
    rows_g = truth.set_index("unit_id").loc[[f"u{i}" for i in range(4)]]
    want = {}
    for arm, variants in (("ours", OURS), ("direct", DIRECT)):
        probs = {k: variant_matrix(rows_g, v) for k, v in zip("nsa", variants, strict=True)}
        want[arm] = float(contrast_truth(probs, spec).mean())
        got = by_name[f"contrast rate, {arm} arm, c (j, C.1)"]
        assert got["truth"] == pytest.approx(want[arm])
        assert got["estimate"]["value"] == 0.0  # dx = |3 - 1| - |3 - 5| = 0 on every pair
    # the direct neutral leans further to s (shift +2): its contrast is likelier
    assert want["direct"] > want["ours"]
    diff = by_name["contrast rate, direct - ours, c (j, C.1)"]
    assert diff["truth"] == pytest.approx(want["direct"] - want["ours"])


def test_scored_rubric_rows_leaves_a_bad_row_out_and_skips_files_without_direct_rows(tmp_path):
    """A bad row is left out, as the analysis's load rejects it; a file without any direct-arm
    row is not read at all."""
    from implicit_bench.analysis.direct_arm import scored_rubric_rows

    header = "unit_id,variant,seed,config,judge,task,value,valid\n"
    (tmp_path / "with.csv").write_text(
        header + "u1,direct_neutral,42,gen,A,rubric,3,true\n"
        "u1,neutral,abc,gen,A,rubric,2,true\n"  # bad seed
        "u1,neutral,42,gen,A,rubric,2,true\n"
    )
    (tmp_path / "without.csv").write_text(header + "u2,neutral,zzz,gen,A,rubric,2,true\n")
    rows = scored_rubric_rows([str(tmp_path / "with.csv"), str(tmp_path / "without.csv")])
    assert sorted(rows["variant"].astype(str)) == ["direct_neutral", "neutral"]
    assert sorted(rows["score"]) == [2.0, 3.0] and set(rows["unit_id"]) == {"u1"}
