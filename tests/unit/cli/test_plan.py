"""`implicit-bench plan` on a fresh clone: sizes from params and the
committed metrics, hand-worked."""

from __future__ import annotations

import json

from click.testing import CliRunner

from implicit_bench.cli.plan import plan_command
from implicit_bench.planning.plan import build_plan, format_plan
from tests.helpers.plan_fixtures import PLAN_PARAMS, write_plan_metrics


def test_fresh_clone_plan_is_hand_worked(tmp_path):
    write_plan_metrics(tmp_path)
    plans, info = build_plan(PLAN_PARAMS, tmp_path)
    assert info["units"] == 5 and "estimated" in info["units_from"] and info["configs"] == ["a"]
    by = {p.stage: p for p in plans}
    assert (by["kg"].items, by["kg"].model_calls) == (100, 100)  # one answer per sentence pair
    assert "triplets" not in by  # the template writer calls no model
    # 5 units x 3 variants x 2 seeds; config b is not in render.run
    assert (by["render a"].items, by["render a"].cached, by["render a"].model_calls) == (
        30,
        None,
        30,
    )
    assert "render b" not in by
    # rubric: 30 images x 2 judges; blind: 30 x 2 orders x 1 judge; alignment: 10 neutral x 1
    assert by["judge"].items == 60 + 60 + 10 and by["judge"].cached is None
    text = format_plan(plans, info)
    total = next(line for line in text.splitlines() if line.startswith("total model calls"))
    assert "render a" in text and total.endswith("260")  # 100 + 30 + 130


def test_subset_larger_than_the_kg_is_capped_and_the_command_prints_json(tmp_path, monkeypatch):
    write_plan_metrics(tmp_path)
    params = {**PLAN_PARAMS, "subset": {"max_units": 0}}
    plans, info = build_plan(params, tmp_path)
    assert info["units"] == 9  # 0 = every unit: the committed triplets count
    monkeypatch.chdir(tmp_path)
    import yaml

    (tmp_path / "params.yaml").write_text(yaml.safe_dump(PLAN_PARAMS))
    result = CliRunner().invoke(plan_command, ["--json"], catch_exceptions=False)
    out = json.loads(result.output)
    assert out["units"] == 5 and [s["stage"] for s in out["stages"]] == ["kg", "render a", "judge"]


def test_hours_and_money_from_catalogue_keys_hand_worked(tmp_path):
    write_plan_metrics(tmp_path)
    params = {
        **PLAN_PARAMS,
        "kg": {"extractor": "minimal_pair"},
        "generators": {"a": {"backend": "diffusers", "model": "m", "seconds_per_item": 48}},
        "judges": {
            "j1": {"backend": "transformers", "model": "x", "seconds_per_item": 2.0},
            "j2": {
                "backend": "openai",
                "model": "gpt",
                "seconds_per_item": 1.0,
                "usd_per_item": 0.002,
            },
        },
    }
    plans, info = build_plan(params, tmp_path)
    by = {p.stage: p for p in plans}
    assert (
        by["render a"].hours == 0.4 and by["render a"].usd is None
    )  # 30 images x 48 s; no price given
    # j1: rubric 30 + blind 60 = 90 answers x 2 s; j2 (an API): rubric
    # 30 + alignment 10 = 40 x 1 s, 40 x $0.002
    assert by["judge"].calls_by_model == {"judges.j1": 90, "judges.j2": 40}
    assert (
        by["judge"].hours == round((90 * 2 + 40 * 1) / 3600, 3) and by["judge"].usd is None
    )  # j1 has no price
    assert by["judge"].gpu is False  # an API model's time is not GPU time
    text = format_plan(plans, info)
    assert "GPU-hours (local models): 0.40; API hours: 0.06" in text
    assert "no usd_per_item (USD '-'): generators.a, judges.j1" in text


def test_cost_keys_change_no_identity():
    from implicit_bench.backends.generators import settings_hash

    plain = {"backend": "diffusers", "model": "m"}
    assert settings_hash({**plain, "seconds_per_item": 48, "usd_per_item": 0.01}) == settings_hash(
        plain
    )


def test_calibrate_measures_seconds_per_item_with_real_calls(tmp_path, monkeypatch):
    import yaml

    from tests.helpers.chat_server import ChatServer, completion

    write_plan_metrics(tmp_path)
    monkeypatch.chdir(tmp_path)
    import base64
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (1024, 1024), (10, 20, 30)).save(buf, format="PNG")  # the requested size
    png = base64.b64encode(buf.getvalue()).decode()

    def answer(body, n):  # the images endpoint for the generator, chat completions for the judges
        return 200, completion('{"score": 3}') if "messages" in body else {
            "data": [{"b64_json": png}]
        }

    with ChatServer(answer, models=["vlm"]) as server:
        params = {
            **PLAN_PARAMS,
            "kg": {"extractor": "minimal_pair"},
            "generators": {
                "a": {
                    "backend": "openai_images",
                    "model": "img",
                    "base_url": server.base_url,
                    "api_key_env": None,
                }
            },
            "judges": {
                "j1": {
                    "backend": "openai",
                    "model": "vlm",
                    "base_url": server.base_url,
                    "api_key_env": None,
                },
                "j2": {
                    "backend": "openai",
                    "model": "vlm",
                    "base_url": server.base_url,
                    "api_key_env": None,
                    "usd_per_item": 0.001,
                },
            },
        }
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
        result = CliRunner().invoke(
            plan_command, ["--json", "--calibrate", "2"], catch_exceptions=False
        )
        asked = len(server.requests)
    out = json.loads(result.output)
    measured = out["measured_seconds_per_item"]
    assert set(measured) == {"generators.a", "judges.j1", "judges.j2"} and all(
        v > 0 for v in measured.values()
    )
    assert asked == 3 * (1 + 2)  # per model: one warm-up item and N = 2 timed ones
    judge = next(s for s in out["stages"] if s["stage"] == "judge")
    expected = (90 * measured["judges.j1"] + 40 * measured["judges.j2"]) / 3600
    assert abs(judge["hours"] - expected) < 1e-3 and judge["usd"] is None  # j1 has no price


def test_plan_reads_the_task_selection_as_the_judge_stage_does(tmp_path):
    """`variants: []` means every variant in the judge stage's planner; the plan counts it the
    same way (it read it as no variant), and cyclic3 asks three orders."""
    write_plan_metrics(tmp_path)
    params = json.loads(json.dumps(PLAN_PARAMS))
    params["judge"] = {
        "tasks": {"alignment": {"judges": ["j2"], "variants": []}, "blind": {"judges": ["j1"]}},
        "blind_orders": "cyclic3",
    }
    by = {p.stage: p for p in build_plan(params, tmp_path)[0]}
    # alignment: every variant of the task (30 images) x 1 judge; blind: 30 x 3 orders x 1 judge
    assert by["judge"].items == 30 + 90
