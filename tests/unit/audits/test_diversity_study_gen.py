"""HoloFair's Gen set (C.3.2: 30 race x age x gender prompts) as the diversity study's prompt
source: the face judge's reading against what each prompt asks, worked by hand; the simulated
world plants each Gen unit on demand (world.scm.gen_follow) and the study recovers it."""

from __future__ import annotations

import pandas as pd
import pytest

from implicit_bench.audits.diversity_study import (
    DiversityStudyParams,
    gen_agreement,
    gen_study_units,
)


def _units() -> pd.DataFrame:
    return (
        gen_study_units()
        .set_index("unit_id")
        .loc[["scm-gen-asian-young-female", "scm-gen-white-elderly-male"]]
        .reset_index()
    )


def test_gen_agreement_by_hand():
    units = _units()
    a, w = units["unit_id"]
    frame = pd.DataFrame(
        {
            "unit_id": [a, a, a, a, w, w, w],
            "gender": ["female", "female", "male", "no face", "male", "male", "female"],
            "age_group": ["young", "middle", "young", "no face", "elderly", "elderly", "abstained"],
        }
    )
    got = gen_agreement(frame, units)
    assert (got["prompts"], got["images"]) == (2, 7)
    gender = got["attributes"]["gender"]
    # read: 6 faces (the no-face image left out); as asked: 2 (Asian woman) + 2 (White man)
    assert (gender["images_read"], gender["read_as_asked"]) == (6, 4)
    assert gender["share_read_as_asked"] == pytest.approx(4 / 6)
    assert gender["confusion"] == {
        "female": {"female": 2, "male": 1},
        "male": {"female": 1, "male": 2},
    }
    assert gender["share_read_as_asked_by_race"] == {
        "Asian": pytest.approx(2 / 3),
        "White": pytest.approx(2 / 3),
    }
    age = got["attributes"]["age"]
    # read: 5 (no face and abstained left out); as asked: young 2 of 3, elderly 2 of 2
    assert (age["images_read"], age["read_as_asked"]) == (5, 4)
    assert age["share_read_as_asked"] == pytest.approx(0.8)
    assert age["confusion"]["young"] == {"young": 2, "middle": 1, "elderly": 0}
    assert age["confusion"]["elderly"] == {"young": 0, "middle": 0, "elderly": 2}
    assert age["confusion"]["middle"] == {"young": 0, "middle": 0, "elderly": 0}
    assert age["share_read_as_asked_by_race"] == {"Asian": pytest.approx(2 / 3), "White": 1.0}


def test_gen_units_roles_and_frame():
    units = gen_study_units()
    assert len(units) == 30 and units["unit_id"].is_unique
    assert units.groupby(["asked_race", "asked_age_group", "asked_gender"]).size().eq(1).all()
    assert units["prompt_neutral"].str.startswith("a photo of ").all()
    params = DiversityStudyParams(prompt_source="gen")
    assert params.variants() == ["neutral"]
    # every image pooled for ID and each prompt one CA scene: both roles on the one variant
    assert params.score_variants() == ("neutral", "neutral")


def test_plant_gen_follows_the_request():
    from implicit_bench.world.params import WorldParams
    from implicit_bench.world.scm import gen_request, is_scm_unit, plant_scm

    ids = ["scm-gen-asian-young-female", "scm-gen-others-elderly-male"]
    assert all(is_scm_unit(u) for u in ids)
    assert gen_request(ids[1]) == {"race": "others", "age_group": "elderly", "gender": "male"}
    wp = WorldParams(generators={"g": {}}, scm={"gen_follow": 0.7})
    rows = plant_scm(ids, wp).set_index("unit_id")
    assert rows.loc[ids[0], "p_female"] == pytest.approx(0.7)
    assert rows.loc[ids[1], "p_female"] == pytest.approx(0.3)
    assert rows.loc[ids[0], ["p_young", "p_middle", "p_elderly"]].tolist() == pytest.approx(
        [0.7, 0.15, 0.15]
    )
    assert rows.loc[ids[1], ["p_young", "p_middle", "p_elderly"]].tolist() == pytest.approx(
        [0.15, 0.15, 0.7]
    )
    with pytest.raises(ValueError, match="Gen unit id"):
        gen_request("scm-eval-gentle-000")


@pytest.mark.slow
def test_study_on_the_gen_set_in_a_simulated_world(tmp_path):
    from implicit_bench._util.files import write_json, write_table
    from implicit_bench.audits.study.stage import run_study
    from implicit_bench.render.params import RenderParams
    from implicit_bench.world.params import WorldParams
    from implicit_bench.world.truth import plant, world_json

    units = pd.DataFrame(  # the benchmark's units: the Gen prompts are none of them
        [
            {
                "unit_id": "u0",
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
        ]
    )
    world = tmp_path / "world"
    world.mkdir()
    wp = WorldParams(generators={"g": {"bias": 0.0, "refuses": False, "off_prompt": 0.0}})
    write_table(plant(units, wp), world / "truth.parquet")
    write_json(world / "world.json", world_json(wp))
    render = RenderParams(
        configs={"simg": {"backend": "sim", "model": "sim:g", "world": str(world)}}
    )
    params = DiversityStudyParams(
        enabled=True,
        generator="simg",
        n_images=20,
        prompt_source="gen",
        judge={"backend": "sim", "world": str(world)},
        images_dir="study",
        cache="faces.sqlite",
    )
    report = run_study(units, params, render, tmp_path)
    assert report["prompt_source"] == "gen"
    assert report["render"]["by_status"]["ok"] == 30 * 20
    gen = report["gen"]
    assert (gen["prompts"], gen["images"]) == (30, 600)
    follow, error = wp.scm.gen_follow, wp.faces.error
    # planted: shown as asked with P follow, the judge misreads with P error (an age group
    # as either other group equally): gender 0.9 x 0.95 + 0.1 x 0.05 = 0.86; age 0.9 x 0.95 +
    # 0.1 x 0.025 = 0.8575; 600 images: standard error about 0.014
    g = gen["attributes"]["gender"]
    a = gen["attributes"]["age"]
    assert g["images_read"] == a["images_read"] == 600
    assert g["share_read_as_asked"] == pytest.approx(
        follow * (1 - error) + (1 - follow) * error, abs=0.05
    )
    assert a["share_read_as_asked"] == pytest.approx(
        follow * (1 - error) + (1 - follow) * error / 2, abs=0.05
    )
    scores = report["scores"]
    assert len(scores["per_prompt"]) == 30  # each Gen prompt one CA scene
    assert report["quality"]["rules"]["one_face"]["seen"] == 600  # each image once
    # the pooled Gen images are balanced by design: ID near 1; each prompt near one reading
    assert scores["ID"] > 0.9
    assert scores["CA_mean"] < scores["ID"]
    # recovery: the planted shares beside the study's (the Gen units planted on demand)
    from implicit_bench.world.model import load_world
    from implicit_bench.world.recovery.stage import diversity_study_entries

    entries = diversity_study_entries(load_world(str(world)), report, {"simg": "g"}, error)
    gen_entries = {e["estimand"]: e for e in entries if e["estimand"].startswith("Gen set")}
    gender = gen_entries["Gen set: gender read as the prompt asks (HoloFair C.3.2)"]
    age = gen_entries["Gen set: age read as the prompt asks (HoloFair C.3.2)"]
    assert gender["truth"] == pytest.approx(0.86)  # 0.9 x 0.95 + 0.1 x 0.05, every prompt
    assert age["truth"] == pytest.approx(0.8575)  # 0.9 x 0.95 + 0.1 x 0.05 / 2
    assert gender["estimate"]["value"] == g["share_read_as_asked"]


def test_gen_follow_leaves_the_world_fingerprint_at_its_default():
    """world.json (the simulated world's fingerprint: every stored image and cached answer) is
    as before the Gen set existed while gen_follow keeps its default; set, it changes."""
    from implicit_bench.world.params import WorldParams
    from implicit_bench.world.truth import world_json

    default = world_json(WorldParams(generators={"g": {}}))
    assert "gen_follow" not in default["params"]["scm"]
    moved = world_json(WorldParams(generators={"g": {}}, scm={"gen_follow": 0.7}))
    assert moved["params"]["scm"]["gen_follow"] == 0.7
