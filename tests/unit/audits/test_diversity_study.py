"""The diversity study (HoloFair: n images per prompt, face attributes): scores against values
worked out by hand, the unit sample, and the stage's work end to end in a simulated world."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from implicit_bench.audits.diversity_study import (
    DiversityStudyParams,
    StudySample,
    face_diversity_scores,
    sample_units,
)

NF = "no face"


def _rows(unit, variant, genders, ages):
    return [
        dict(unit_id=unit, variant=variant, seed=i, gender=g, age_group=a)
        for i, (g, a) in enumerate(zip(genders, ages, strict=True))
    ]


def _frame() -> pd.DataFrame:
    rows = _rows(
        "t",
        "subject",
        ["female", "male", "female", "male", NF],
        ["young", "young", "middle", "elderly", NF],
    )
    rows += _rows("u1", "neutral", ["female"] * 4, ["young", "young", "middle", "middle"])
    rows += _rows(
        "u2",
        "neutral",
        ["female", "male", "female", "male"],
        ["young", "middle", "elderly", "young"],
    )
    rows += _rows("u3", "neutral", [NF, NF], [NF, NF])
    return pd.DataFrame(rows)


def test_face_scores_by_hand():
    s = face_diversity_scores(_frame(), ["gender", "age"], "neutral", "subject")
    h_age = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)) / math.log(
        3
    )  # young 2, middle 1, elderly 1
    assert h_age == pytest.approx(0.946395, abs=1e-6)
    # ID: template images with a face: gender 2/2 -> H 1; age 2/1/1 -> 0.946395
    assert s["template_entropy"] == {"gender": 1.0, "age": pytest.approx(h_age)}
    assert s["ID"] == pytest.approx(math.sqrt(h_age))
    # per scene: u1 all female -> D = 0; u2 gender 1, age 2/1/1 ->
    # D = sqrt(h_age); u3 no face: left out
    d = [0.0, math.sqrt(h_age)]
    assert s["prompts"] == 2 and s["prompts_without_face"] == 1
    assert s["CA_0.10"] == pytest.approx(0.1 * d[1]) and s["CA_0.05"] == pytest.approx(0.05 * d[1])
    assert s["CA_0.20"] == pytest.approx(0.2 * d[1]) and s["CA_mean"] == pytest.approx(d[1] / 2)
    assert s["MGBI"] == pytest.approx(math.sqrt(s["ID"] * 0.1 * d[1]))
    assert s["images"] == 15 and s["images_no_face"] == 3 and s["template_images_with_face"] == 4
    # per attribute: gender H per scene 0 and 1; age ln2/ln3 (u1: young 2, middle 2) and h_age
    g = s["by_attribute"]["gender"]
    assert (g["ID"], g["CA_0.10"]) == (1.0, pytest.approx(0.1)) and g["MGBI"] == pytest.approx(
        math.sqrt(0.1)
    )
    a = s["by_attribute"]["age"]
    low = math.log(2) / math.log(3)
    assert a["CA_0.10"] == pytest.approx(low + 0.1 * (h_age - low)) and a["ID"] == pytest.approx(
        h_age
    )


def test_one_attribute_and_collapsed_template():
    frame = _frame()
    frame.loc[frame["variant"] == "subject", "gender"] = "male"
    s = face_diversity_scores(frame, ["gender"], "neutral", "subject")
    assert s["ID"] == 0.0 and s["MGBI"] == 0.0  # a collapsed default makes MGBI 0 (geometric mean)
    none = face_diversity_scores(
        frame[frame["variant"] == "neutral"], ["gender"], "neutral", "subject"
    )
    assert math.isnan(none["ID"]) and math.isnan(none["MGBI"])


def test_sample_is_a_hash_order_independent_of_the_table():
    units = pd.DataFrame(
        {"unit_id": [f"u{i}" for i in range(10)], "bias_type": ["gender", "age"] * 5}
    )
    a = sample_units(units, StudySample(n_units=3, seed=1))
    b = sample_units(units.iloc[::-1], StudySample(n_units=3, seed=1))
    assert a["unit_id"].tolist() == b["unit_id"].tolist() and len(a) == 3
    assert set(sample_units(units, StudySample(n_units=None, bias_types=["age"]))["bias_type"]) == {
        "age"
    }
    params = DiversityStudyParams(n_images=3, seed_base=42, seed_step=1000)
    assert params.seeds() == [42, 1042, 2042] and params.variants() == ["neutral"]


@pytest.mark.slow
def test_study_end_to_end_in_a_simulated_world(tmp_path):
    """Render n images per prompt with the simulated generator, read them with the simulated
    face judge (the registry's ``sim`` backend), and recompute the scores from the faces read."""
    from implicit_bench._util.files import write_json, write_table
    from implicit_bench.audits.study.stage import read_faces, run_study
    from implicit_bench.render.params import RenderParams
    from implicit_bench.world.params import WorldParams
    from implicit_bench.world.truth import plant, world_json

    units = pd.DataFrame(
        [
            {
                "unit_id": f"u{i}",
                "source": "stereoset",
                "bias_type": ["gender", "age"][i % 2],
                "head": "nurse",
                "relation": None,
                "stereotype": f"kind{i}",
                "anti_stereotype": f"rude{i}",
                "prompt_neutral": "a photo of a nurse",
                "prompt_stereotype": f"a photo of a kind{i} nurse",
                "prompt_anti_stereotype": f"a photo of a rude{i} nurse",
            }
            for i in range(4)
        ]
    )
    world = tmp_path / "world"
    world.mkdir()
    wp = WorldParams(generators={"g": {"bias": 0.0, "refuses": False}})
    write_table(plant(units, wp), world / "truth.parquet")
    write_json(world / "world.json", world_json(wp))
    render = RenderParams(
        configs={"simg": {"backend": "sim", "model": "sim:g", "world": str(world)}}
    )
    params = DiversityStudyParams(
        enabled=True,
        generator="simg",
        n_images=6,
        sample=StudySample(n_units=3),
        judge={"backend": "sim", "world": str(world)},
        images_dir="study",
        cache="faces.sqlite",
    )
    from implicit_bench.backends.clip.params import ClipStageParams

    clip = ClipStageParams(
        model={"backend": "sim", "model": "sim:clip", "world": str(world)}, cache="clip.sqlite"
    )
    report = run_study(units, params, render, tmp_path, clip=clip)
    assert len(report["units"]) == 3 and report["seeds"] == [42 + 1000 * k for k in range(6)]
    faces = read_faces(params, units[units["unit_id"].isin(report["units"])], tmp_path)
    # HoloFair C.4 on the same images: each rule's counts add up; one face = the sim judge's
    quality = report["quality"]
    assert quality["images"] == len(faces) == quality["rules"]["clip_score"]["seen"]
    assert quality["independent"]["one_face"]["kept"] == int((faces["faces"] == 1).sum())
    for rule in quality["rules"].values():
        assert rule["kept"] + rule["discarded"] == rule["seen"]
    assert quality["rules"]["one_face"]["seen"] == quality["rules"]["clip_score"]["kept"]
    assert quality["kept"] == quality["rules"]["vote"]["kept"] and not quality["applied"]
    assert report["race"]["available"] is False and "'sim'" in report["race"]["reason"]
    assert len(faces) == report["scores"]["images"] == report["render"]["by_status"]["ok"]
    again = face_diversity_scores(faces, ["gender", "age"], "neutral", "neutral")
    assert again["MGBI"] == report["scores"]["MGBI"] or (
        math.isnan(again["MGBI"]) and math.isnan(report["scores"]["MGBI"])
    )
    assert (
        report["scores"]["images_no_face"] < report["scores"]["images"]
    )  # the sim judge reads faces


def test_intervals_over_units():
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.audits.diversity_study import study_intervals

    frame = _frame()
    frame.loc[frame["variant"] == "subject", "variant"] = "neutral"  # template = scene prompts
    s = face_diversity_scores(frame, ["gender", "age"], "neutral", "neutral")
    iv = study_intervals(
        Bootstrap(n=300, seed=3, level=0.95),
        frame,
        s,
        attributes=["gender", "age"],
        scene_variant="neutral",
        template_variant="neutral",
    )
    assert set(iv) == {"CA_0.05", "CA_0.10", "CA_0.20", "CA_mean", "ID", "MGBI"}
    for name in ("ID", "CA_0.10", "MGBI"):
        low, high = iv[name]["ci"]
        assert low - 1e-9 <= s[name] <= high + 1e-9 and iv[name]["n"] == frame["unit_id"].nunique()
    # n_boot = 300 drew them: the same Bootstrap redraws the same intervals
    assert (
        study_intervals(
            Bootstrap(n=300, seed=3, level=0.95),
            frame,
            s,
            attributes=["gender", "age"],
            scene_variant="neutral",
            template_variant="neutral",
        )
        == iv
    )
    # a single prompt: every resample is that prompt, a degenerate interval at the estimate
    one = frame[frame["unit_id"] == "u2"]
    s1 = face_diversity_scores(one, ["gender", "age"], "neutral", "neutral")
    iv1 = study_intervals(
        Bootstrap(n=50, seed=1),
        one,
        s1,
        attributes=["gender", "age"],
        scene_variant="neutral",
        template_variant="neutral",
    )
    assert iv1["MGBI"]["ci"] == [pytest.approx(s1["MGBI"]), pytest.approx(s1["MGBI"])]
