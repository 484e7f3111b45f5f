"""The simulated world: planted truth, pictures read from pixels, simulated backends."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from implicit_bench._util.files import write_json, write_table
from implicit_bench.backends.generators import RenderRequest, create_generator, png_bytes
from implicit_bench.backends.judges import build_judge
from implicit_bench.backends.judges.base import JudgeRequest
from implicit_bench.protocol.judge_tasks import load_task, task_fields
from implicit_bench.protocol.prompt_fields import unit_fields
from implicit_bench.protocol.schema import blind_order
from implicit_bench.runtime.provenance import markdown_banner, merge_provenance, provenance
from implicit_bench.world.params import SimJudgeWorld, WorldParams
from implicit_bench.world.picture import Shown, draw, read_bytes
from implicit_bench.world.sampling import outcomes, prime, tilt, variant_probs
from implicit_bench.world.truth import plant, world_json


def _units(n: int = 6) -> pd.DataFrame:
    rows = []
    for i in range(n):
        rows.append(
            {
                "unit_id": f"u{i}",
                "source": "stereoset",
                "bias_type": ["gender", "race"][i % 2],
                "head": "nurse",
                "relation": None,
                "stereotype": f"kind{i}",
                "anti_stereotype": f"rude{i}",
                "prompt_neutral": "a photo of a nurse",
                "prompt_stereotype": f"a photo of a kind{i} nurse",
                "prompt_anti_stereotype": f"a photo of a rude{i} nurse",
            }
        )
    return pd.DataFrame(rows)


@pytest.fixture
def world_dir(tmp_path):
    params = WorldParams(
        generators={"g": {"bias": 0.0, "refuses": True}},
        judges={
            "exact": SimJudgeWorld(
                confusion={
                    c: {d: float(c == d) for d in ("s", "a", "neither")}
                    for c in ("s", "a", "neither")
                },
                slot_a=0.0,
                invalid=0.0,
                rubric_sd=0.0,
                alignment_error=0.0,
            )
        },
        bias_types={"gender": {"stereo": 0.5, "anti": 0.2, "refusal": 0.3}},
    )
    write_table(plant(_units(), params), tmp_path / "truth.parquet")
    write_json(tmp_path / "world.json", world_json(params))
    return tmp_path


def test_picture_round_trip_and_corruption():
    shown = Shown("kind, gentle", "nurse", "female", "elderly", noise=12345)
    data = png_bytes(draw(shown))
    assert read_bytes(data) == shown
    broken = bytearray(data)
    broken[len(broken) // 2] ^= 0xFF
    assert read_bytes(bytes(broken)) is None
    assert read_bytes(b"not a png") is None


def test_tilt_and_prime_by_hand():
    probs = np.array([[0.5, 0.25, 0.25]])
    out = tilt(probs, np.log(4.0))  # s * 2, a / 2
    assert np.allclose(out, np.array([[1.0, 0.125, 0.25]]) / 1.375)
    assert np.allclose(prime(probs, 0.2), [[0.6, 0.2, 0.2]])


def test_variant_probs_plant_the_anti_success_slope():
    params = WorldParams()
    base = np.array([[0.2, 0.3, 0.5], [0.8, 0.1, 0.1]])
    succ_a = np.clip(0.9 - 0.7 * base[:, 0], 0.05, 1)
    anti = variant_probs(
        base,
        np.full(2, 0.9),
        succ_a,
        "anti_stereotype",
        params.model_copy(
            update={"success": params.success.model_copy(update={"anti_slope": 0.7})}
        ),
    )
    assert np.allclose(anti[:, 1], [0.76, 0.34])
    assert np.allclose(anti.sum(axis=1), 1.0)


def test_outcomes_follow_the_probabilities():
    rng = np.random.default_rng(0)
    n = 40_000
    probs = np.tile([0.5, 0.3, 0.2], (n, 1))
    out = outcomes(
        probs,
        np.full(n, 0.1),
        np.zeros(n),
        np.full(n, 0.25),
        np.tile([0.2, 0.5, 0.3], (n, 1)),
        rng.random((n, 5)),
    )
    assert abs(out.refused.mean() - 0.1) < 0.01
    shown = out.shown[~out.refused]
    assert np.allclose([np.mean(shown == k) for k in range(3)], [0.5, 0.3, 0.2], atol=0.01)
    assert abs(np.mean(out.gender == 0) - 0.25) < 0.01


def test_sim_judge_answers_through_the_real_parsers(world_dir):
    judge = build_judge({"backend": "sim", "model": "sim:exact", "world": str(world_dir)})
    truth = pd.read_parquet(world_dir / "truth.parquet")
    unit = _units().iloc[0].to_dict()
    fields = unit_fields(unit)
    stereo_png = png_bytes(draw(Shown(truth.iloc[0]["shown_s"], "nurse", "male", "young")))
    blank_png = png_bytes(draw(Shown("", "", "", "")))
    blind = load_task("blind")
    for order in ("sa", "as"):
        prompt = blind.render(task_fields(blind, fields, order))
        ((text, err),) = judge.answer([JudgeRequest(prompt, stereo_png)])
        parsed = blind.parse(text)
        assert err is None and parsed.valid and blind.stored_value(parsed.answer, order) == "s"
    rubric = load_task("rubric")
    prompt = rubric.render(task_fields(rubric, fields))
    assert rubric.parse(judge.answer([JudgeRequest(prompt, stereo_png)])[0][0]).answer == 4
    alignment = load_task("alignment")
    prompt = alignment.render(task_fields(alignment, fields))
    assert alignment.parse(judge.answer([JudgeRequest(prompt, stereo_png)])[0][0]).answer is True
    assert alignment.parse(judge.answer([JudgeRequest(prompt, blank_png)])[0][0]).answer is False
    # a corrupted picture cannot be read: the answer is invalid
    broken = bytearray(stereo_png)
    broken[len(broken) // 2] ^= 0xFF
    assert not rubric.parse(judge.answer([JudgeRequest(prompt, bytes(broken))])[0][0]).valid
    assert blind_order("u0", 42, "neutral") in ("sa", "as")


def test_sim_judge_reads_long_attribute_lists(tmp_path):
    """An attribute list longer than the code band carries (60 characters) is still read as
    what it is, by blind and rubric questions alike (it was read as neither)."""
    long_s = "kind, caring, gentle, patient, nurturing, soft-spoken, devoted, selfless"
    long_a = "rude, careless, harsh, impatient, cold, loud, neglectful, self-centred"
    units = _units(1).assign(stereotype=long_s, anti_stereotype=long_a)
    params = WorldParams(
        generators={"g": {}},
        judges={
            "exact": SimJudgeWorld(
                confusion={
                    c: {d: float(c == d) for d in ("s", "a", "neither")}
                    for c in ("s", "a", "neither")
                },
                slot_a=0.0,
                invalid=0.0,
                rubric_sd=0.0,
                alignment_error=0.0,
            )
        },
    )
    write_table(plant(units, params), tmp_path / "truth.parquet")
    write_json(tmp_path / "world.json", world_json(params))
    judge = build_judge({"backend": "sim", "model": "sim:exact", "world": str(tmp_path)})
    fields = unit_fields(units.iloc[0].to_dict())
    rubric, blind = load_task("rubric"), load_task("blind")
    for text, label, score in (
        (long_s, "s", 4),
        (long_a, "a", 1),
    ):  # rubric_mean s 4.0, a 0.5 (rounds up)
        assert len(text) > 60
        png = png_bytes(draw(Shown(text, "nurse", "male", "young")))
        assert (
            rubric.parse(
                judge.answer([JudgeRequest(rubric.render(task_fields(rubric, fields)), png)])[0][0]
            ).answer
            == score
        )
        for order in ("sa", "as"):
            parsed = blind.parse(
                judge.answer([JudgeRequest(blind.render(task_fields(blind, fields, order)), png)])[
                    0
                ][0]
            )
            assert blind.stored_value(parsed.answer, order) == label


def test_malformed_answers_are_invalid():
    from implicit_bench.backends.judges.sim import MALFORMED, UNREADABLE

    for task, key in (("blind", "choice"), ("rubric", "score"), ("alignment", "aligned")):
        spec = load_task(task)
        for text in (*MALFORMED, UNREADABLE):
            assert not spec.parse(text.replace("{key}", key)).valid


@pytest.mark.slow
def test_sim_generator_refuses_and_steering_moves_the_stereotype_rate(world_dir):
    import torch

    gen = create_generator({"backend": "sim", "model": "sim:g", "world": str(world_dir)})
    results = gen.generate(
        [RenderRequest(f"c/u0/neutral/{s}", "a photo of a nurse", s) for s in range(40)]
    )
    assert {r.status for r in results} <= {"ok", "refused"}
    assert any(r.status == "refused" for r in results)  # gender units refuse 30% with refuses: true
    ok = [r for r in results if r.status == "ok"]
    assert all(read_bytes(r.png).head in ("a nurse", "") for r in ok)  # the prompt's subject
    # steering along anti - stereo lowers the projection: the shift
    # is negative, and stronger with alpha
    enc = gen.encode(["a photo of a nurse"])
    d = gen.direction("u0")[0]
    shifts = []
    for alpha in (0.0, 1.0, 2.0):
        steered = enc.embeds[0, 0].numpy() - alpha * d.astype(np.float32)
        shifts.append(gen.shift("u0", "neutral", steered))
    assert shifts[0] == pytest.approx(0.0, abs=1e-5) and shifts[2] < shifts[1] < 0
    enc.embeds = torch.from_numpy(
        (enc.embeds[0, 0].numpy() - 2 * d.astype(np.float32))[None, None, :]
    )
    images = gen.generate_encoded(enc, [7], item_ids=["c/u0/neutral/7"])
    assert len(images) == 1


def test_provenance_says_simulated():
    block = provenance([("judge", "sim:judge_a"), ("clip", "models/x")])
    assert block["simulated"] is True and block["simulated_models"] == ["sim:judge_a"]
    assert "SIMULATED" in block["warning"] and block["random_init"] is False
    assert merge_provenance(block, provenance([]))["simulated"] is True
    assert markdown_banner(block).startswith("> **SIMULATED**")
    assert "simulated" not in provenance([("clip", "openai/clip")])
    assert json.loads(json.dumps(block))  # JSON-able
