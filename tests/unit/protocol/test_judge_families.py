"""E.4 step 4 (IMPLICIT-Bench): a blind judge outside the Qwen / Gemma families."""

from __future__ import annotations

import pandas as pd
import yaml
from click.testing import CliRunner

from implicit_bench.audits.stage import RISK_DEFINITION, judge_audit
from implicit_bench.cli import check as check_module
from implicit_bench.protocol.judge_families import (
    blind_family_check,
    blind_models_from_judgements,
    blind_models_from_params,
    model_family,
)
from tests.helpers.paths import REPO_ROOT


def test_family_from_model_id():
    assert model_family("Qwen/Qwen3-VL-30B-A3B-Instruct") == "qwen"
    assert model_family("google/gemma-4-26B-A4B-it") == "gemma"
    assert model_family("gpt-5.4") is None
    assert model_family("sim:judge_c") is None
    assert model_family(None) is None


def test_check_needs_one_judge_outside():
    only_selection = blind_family_check({"a": "Qwen/Qwen3-VL", "b": "google/gemma-4"})
    assert not only_selection["ok"] and only_selection["outside"] == []
    assert "a, b" in only_selection["warning"]
    mixed = blind_family_check({"qwen3vl": "Qwen/Qwen3-VL", "gpt54": "gpt-5.4"})
    assert mixed["ok"] and mixed["outside"] == ["gpt54"] and mixed["warning"] is None
    assert not blind_family_check({})["ok"]  # no blind judge at all


def test_blind_judges_from_params():
    judges = {"q": {"model": "Qwen/x"}, "g": {"model": "gemma-y"}, "o": {"model": "gpt"}}
    assert blind_models_from_params(
        {"judges": judges, "judge": {"tasks": {"blind": {"judges": ["q", "g"]}}}}
    ) == {"q": "Qwen/x", "g": "gemma-y"}
    # null: every judges entry; no blind task: none
    assert list(blind_models_from_params({"judges": judges, "judge": {"tasks": {"blind": None}}}))
    assert blind_models_from_params({"judges": judges, "judge": {"tasks": {"rubric": None}}}) == {}


def _params_with_blind_models(tmp_path, models: dict[str, str]):
    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    for name, model in models.items():
        params["judges"][name]["model"] = model
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    return path


def test_check_warns_without_failing(tmp_path, monkeypatch):
    monkeypatch.setattr(check_module, "preflight", lambda *a, **k: [])
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    path = _params_with_blind_models(tmp_path, {"qwen3vl": "sim:qwen_a", "gpt54": "sim:gemma_c"})
    out = runner.invoke(check_module.check_command, ["--params", str(path), "--no-disk"])
    assert out.exit_code == 0, out.output
    assert "check: warning: no blind judge outside the Qwen and Gemma families" in out.output
    path = _params_with_blind_models(tmp_path, {"qwen3vl": "sim:qwen_a", "gpt54": "sim:judge_c"})
    out = runner.invoke(check_module.check_command, ["--params", str(path), "--no-disk"])
    assert out.exit_code == 0 and "warning" not in out.output


def test_judge_audit_records_families_and_risk_definition():
    rows = []
    for judge, model in (("qwen3vl", "Qwen/Qwen3-VL"), ("gemma4", "google/gemma-4")):
        for unit in ("u1", "u2"):
            rows.append(
                {
                    "unit_id": unit,
                    "seed": 42,
                    "variant": "anti_stereotype",
                    "config": "g",
                    "judge": judge,
                    "task": "blind",
                    "value": "a",
                    "valid": True,
                    "order": "sa",
                    "model": model,
                }
            )
    clip = {**rows[0], "judge": "clip", "model": "openai/clip-vit-large-patch14", "order": None}
    frame = pd.DataFrame([*rows, clip])
    # the CLIP blind judge (no option order) asks no A/B/C question: it does not count
    assert blind_models_from_judgements(frame) == {
        "qwen3vl": "Qwen/Qwen3-VL",
        "gemma4": "google/gemma-4",
    }
    report, _ = judge_audit(frame, None)
    assert report["blind_judge_families"]["ok"] is False
    assert report["risk_definition"] == RISK_DEFINITION
    assert "1 - success_a" in RISK_DEFINITION and "human utilities" in RISK_DEFINITION
