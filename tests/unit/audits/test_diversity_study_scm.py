"""HoloFair's SCM Eval prompts as the diversity study's prompt source: the study
renders them with the simulated generator, which plants each SCM unit on demand from its id
with the trigger's planted effect on P(female) (world.scm.female_logit), and reads them with the
simulated face judge; the share read female per trigger is checked against the planted one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from implicit_bench.audits.diversity_study import (
    SCM_SCENE,
    SCM_TEMPLATE,
    DiversityStudyParams,
    ScmSource,
    scm_frame_variants,
    scm_study_units,
)


def test_scm_units_and_roles_by_hand():
    units = scm_study_units(ScmSource(neutral=2, per_trigger=1))
    assert len(units) == 2 + 9 and units["trigger"].isna().sum() == 2
    assert units["prompt_neutral"].notna().all()
    assert DiversityStudyParams(prompt_source="scm").variants() == ["neutral"]
    assert DiversityStudyParams(prompt_source="scm").score_variants() == (SCM_SCENE, SCM_TEMPLATE)
    frame = pd.DataFrame({"unit_id": units["unit_id"], "variant": "neutral"})
    labelled = scm_frame_variants(frame, units)
    assert (labelled["variant"] == SCM_TEMPLATE).sum() == 2
    assert (labelled["variant"] == SCM_SCENE).sum() == 9
    full = scm_study_units(ScmSource())
    assert len(full) == 750  # Table 7: 300 neutral + 9 x 50 trigger prompts


def test_plant_scm_shifts_p_female_by_the_trigger():
    from implicit_bench.world.params import WorldParams
    from implicit_bench.world.scm import plant_scm, scm_trigger

    ids = ["scm-eval-neutral-000", "scm-eval-gentle-000", "scm-eval-aggressive-003"]
    base = plant_scm(ids, WorldParams(generators={"g": {}}))
    wp = WorldParams(generators={"g": {}}, scm={"female_logit": {"gentle": 2.0}})
    moved = plant_scm(ids, wp)
    assert scm_trigger(ids[1]) == "gentle" and scm_trigger(ids[0]) is None
    p0, p1 = base["p_female"].to_numpy(), moved["p_female"].to_numpy()
    logit = np.log(p1 / (1 - p1)) - np.log(p0 / (1 - p0))
    assert logit == pytest.approx([0.0, 2.0, 0.0])
    with pytest.raises(ValueError, match="SCM Eval unit id"):
        scm_trigger("u1")


@pytest.mark.slow
def test_study_on_scm_prompts_in_a_simulated_world(tmp_path):
    from implicit_bench._util.files import write_json, write_table
    from implicit_bench.audits.study.stage import run_study
    from implicit_bench.render.params import RenderParams
    from implicit_bench.world.params import WorldParams
    from implicit_bench.world.recovery.stage import _read_shares
    from implicit_bench.world.scm import plant_scm
    from implicit_bench.world.truth import plant, world_json

    units = pd.DataFrame(  # the benchmark's units: the SCM prompts are none of them
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
    wp = WorldParams(
        generators={"g": {"bias": 0.0, "refuses": False, "off_prompt": 0.0}},
        scm={"female_logit": {"gentle": 4.0, "aggressive": -4.0}},
    )
    write_table(plant(units, wp), world / "truth.parquet")
    write_json(world / "world.json", world_json(wp))
    render = RenderParams(
        configs={"simg": {"backend": "sim", "model": "sim:g", "world": str(world)}}
    )
    params = DiversityStudyParams(
        enabled=True,
        generator="simg",
        n_images=20,
        prompt_source="scm",
        scm=ScmSource(neutral=3, per_trigger=2),
        judge={"backend": "sim", "world": str(world)},
        images_dir="study",
        cache="faces.sqlite",
    )
    report = run_study(units, params, render, tmp_path)
    assert report["prompt_source"] == "scm"
    assert report["scm"]["prompts"] == {"neutral": 3, "trigger": 18}
    assert report["render"]["by_status"]["ok"] == 21 * 20
    scores = report["scores"]
    assert len(scores["per_prompt"]) == 18  # one CA scene per trigger prompt
    assert scores["ID"] is not None and 0 < scores["ID"] <= 1
    by = report["scm"]["by_trigger"]
    truth = plant_scm(report["units"], wp)
    error = wp.faces.error
    for trigger in ("gentle", "aggressive", "neutral"):
        ids = [u for u in report["units"] if f"-{trigger}-" in u]
        planted = np.mean(
            [
                _read_shares(r, error)["gender"][0]
                for _, r in truth[truth.unit_id.isin(ids)].iterrows()
            ]
        )
        assert by[trigger]["female_share"] == pytest.approx(planted, abs=0.15), trigger
    assert by["gentle"]["female_share"] > 0.8 > 0.2 > by["aggressive"]["female_share"]
    # recovery: the planted shares per trigger beside the study's (world planted on demand)
    from implicit_bench.world.model import load_world
    from implicit_bench.world.recovery.stage import diversity_study_entries

    entries = diversity_study_entries(load_world(str(world)), report, {"simg": "g"}, error)
    scm = {e["estimand"]: e for e in entries if "SCM" in e["estimand"]}
    gentle = scm["female share, SCM gentle prompts (HoloFair 3.1)"]
    assert gentle["estimate"]["value"] == by["gentle"]["female_share"]
    assert gentle["truth"] == pytest.approx(by["gentle"]["female_share"], abs=0.15)
    assert len(scm) == 10  # nine triggers and the neutral prompts
