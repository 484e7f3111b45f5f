"""Published records never carry keys, endpoints with credentials or machine paths: a key, a
URL password and a home path planted in the params (and a key in the environment) appear in
no exported file; Hugging Face eval-results entries hold the headline of one generator."""

from __future__ import annotations

import shutil

import pytest
import yaml
from click.testing import CliRunner

from implicit_bench.cli.main import main as cli_main
from implicit_bench.publish.scrub import scrub_text
from tests.helpers.paths import REPO_ROOT

KEY = "sk-plantedsecret0123456789"
PASSWORD = "hunter2pw"
HOME = "/home/alice/models/my-sd3"
ENV_KEY = "envplanted-98765"


@pytest.fixture
def planted(tmp_path, monkeypatch):
    root = tmp_path / "run"
    root.mkdir()
    shutil.copytree(REPO_ROOT / "metrics", root / "metrics")
    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    params["generators"]["sim_api"] = {
        "backend": "diffusers",
        "model": HOME,
        "api_key": KEY,
        "base_url": f"https://bob:{PASSWORD}@gen.example.org/v1",
    }
    params["judges"]["gemma4"] = {
        "backend": "openai",
        "model": f"{HOME}/judge",
        "api_key": KEY,
        "base_url": f"https://bob:{PASSWORD}@judge.example.org/v1?api_key={KEY}",
        "temperature": 0,
    }
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.setenv("MY_SERVICE_API_KEY", ENV_KEY)
    return root


def _all_text(folder) -> str:
    return "\n".join(p.read_text() for p in sorted(folder.rglob("*")) if p.is_file())


def test_no_key_password_endpoint_or_home_path_in_a_record(planted, tmp_path):
    out = tmp_path / "eee"
    res = CliRunner().invoke(
        cli_main,
        ["export", "eee", str(planted), "--out", str(out), "--organization", KEY],
    )
    assert res.exit_code == 0, res.output
    text = _all_text(out)
    for secret in (KEY, PASSWORD, "/home/", "alice", "example.org", str(tmp_path)):
        assert secret not in text, secret
    assert '"id": "local/my-sd3"' in text  # a local directory: its last part only
    assert "[REDACTED]" in text  # the planted key given as the organisation


def test_scrub_text_cases(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_API_KEY", ENV_KEY)
    assert scrub_text(f"model at {HOME} ok") == "model at [LOCAL PATH]/my-sd3 ok"
    assert scrub_text("~/x/y.bin") == "[LOCAL PATH]/y.bin"
    assert scrub_text("https://u:pw@h.org/v1") == "https://[REDACTED]@h.org/v1"
    assert scrub_text(f"token {ENV_KEY}") == "token [REDACTED]"
    assert scrub_text("stabilityai/stable-diffusion-3") == "stabilityai/stable-diffusion-3"
    assert scrub_text("a / b") == "a / b"


def test_hf_eval_results_entries(planted, tmp_path):
    out = tmp_path / "card"
    res = CliRunner().invoke(
        cli_main,
        [
            "export",
            "hf-eval-results",
            str(planted),
            "--model-id",
            "my-org/my-model",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    path = out / ".eval_results" / "implicit-bench.yaml"
    entries = yaml.safe_load(path.read_text())
    assert [e["dataset"]["task_id"] for e in entries] == ["bias_score", "alignment", "default_rate"]
    assert {e["dataset"]["id"] for e in entries} == {"my-org/implicit-bench"}
    # the run's own configuration (sim_local): its leaderboard values, percent for rates
    assert entries[0]["value"] == round(2.70324, 4)  # 4 decimals
    assert entries[2]["value"] == round(100 * 0.558313, 4)
    assert all(e["notes"].startswith("SIMULATED") for e in entries)
    assert "95% CI [49.75, 61.60], 139 units" in entries[2]["notes"]
    text = path.read_text()
    assert KEY not in text and "/home/" not in text
    res = CliRunner().invoke(
        cli_main,
        ["export", "hf-eval-results", str(planted), "--model-id", "nope", "--out", str(out)],
    )
    assert res.exit_code != 0 and "ORG/NAME" in res.output
    res = CliRunner().invoke(
        cli_main,
        [
            "export",
            "hf-eval-results",
            str(planted),
            "--model-id",
            "a/b",
            "--config",
            "x",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code != 0 and "sim_api, sim_local" in res.output


def test_model_ids_name_models_never_paths_or_endpoints(tmp_path):
    from implicit_bench.publish.eee import _model_info, model_id

    hub = "stabilityai/stable-diffusion-3-medium-diffusers"
    assert model_id("sd3", {"backend": "diffusers", "model": hub}, tmp_path) == hub
    tiny = {"backend": "diffusers", "model": "models/tiny/generator"}
    assert model_id("tiny", tiny, tmp_path) == "local/generator"
    assert model_id("g", {"backend": "openai_images", "model": "gpt-image-2"}, tmp_path) == (
        "openai_images/gpt-image-2"
    )
    assert model_id("s", {"backend": "sim", "model": "sim:sim_api"}, tmp_path) == "simulated/s"
    assert model_id("x", {}, tmp_path, given="org/x") == "org/x"
    api = _model_info("j", {"backend": "openai", "model": "gpt-5"}, tmp_path, False)
    served = _model_info(
        "j",
        {"backend": "openai", "model": "Qwen/Qwen3-VL", "base_url": "http://h/v1"},
        tmp_path,
        False,
    )
    assert api["additional_details"]["deployment_type"] == "externally_managed"
    assert served["additional_details"]["deployment_type"] == "unknown"
    assert served["id"] == "Qwen/Qwen3-VL" and "http" not in str(served)
