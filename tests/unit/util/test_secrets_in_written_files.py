"""Secrets stay out of every file the tool writes, not only off the screen (docs/errors.md,
"Secrets"): a ``user:password@`` in a ``base_url`` is refused in params (which DVC records in
dvc.lock and git keeps), by every HTTP backend's params model and by ``profile NAME`` before it
writes params.yaml; ``implicit-bench results`` writes an old run's params and metrics with
every string redacted."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from pydantic import ValidationError

from implicit_bench._util.redact import MASK, userinfo_keys
from implicit_bench.cli.main import main

PASSWORD = "Pw-in-files-0042"
URL = f"http://svc:{PASSWORD}@127.0.0.1:9/v1"


def _models():
    from implicit_bench.backends.embedders.base import EmbedderParams
    from implicit_bench.backends.generators.gemini import GeminiImagesParams
    from implicit_bench.backends.generators.openai_images import OpenAIImagesParams
    from implicit_bench.backends.judges.openai_vlm import OpenAIJudgeParams
    from implicit_bench.backends.llm.openai import OpenAIParams

    return [OpenAIParams, OpenAIJudgeParams, OpenAIImagesParams, GeminiImagesParams, EmbedderParams]


@pytest.mark.parametrize("index", range(5))
def test_every_http_backend_refuses_a_password_in_base_url(index):
    model = _models()[index]
    fields = {"model": "m"} if "model" in model.model_fields else {}
    with pytest.raises(ValidationError) as info:
        model.model_validate({**fields, "base_url": URL})
    message = "; ".join(e["msg"] for e in info.value.errors())
    assert "user name or password" in message and PASSWORD not in message
    model.model_validate({**fields, "base_url": "http://127.0.0.1:9/v1"})  # no userinfo: fine


def test_userinfo_keys_names_every_key_holding_one():
    params = {"judges": {"a": {"base_url": URL}, "b": {"base_url": "http://h/v1"}}, "x": [URL]}
    assert userinfo_keys(params) == ["judges.a.base_url", "x.0"]


def test_results_file_holds_no_password(tmp_path, monkeypatch):
    """An old run's params.yaml and a metrics error text holding the password: the results
    file names the URL with ``[REDACTED]@`` (the password was written as it was)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RESULTS_TEST_API_KEY", "sk-results-secret-123456")
    (tmp_path / "params.yaml").write_text(
        yaml.safe_dump({"judges": {"api": {"backend": "openai", "model": "m", "base_url": URL}}})
    )
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics/summary.json").write_text(
        json.dumps({"simulated": False, "note": f"failed at {URL} with sk-results-secret-123456"})
    )
    out = tmp_path / "results.json"
    result = CliRunner().invoke(main, ["results", "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert PASSWORD not in text and "sk-results-secret" not in text
    doc = json.loads(text)
    assert doc["params"]["judges"]["api"]["base_url"] == f"http://{MASK}@127.0.0.1:9/v1"


def test_profile_with_a_password_url_is_refused_before_params_yaml_is_written(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text("base:\n  profile: default\n")
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "remote.yaml").write_text(
        f"judges:\n  api: {{backend: openai, model: m, base_url: '{URL}'}}\n"
    )
    before = (tmp_path / "params.yaml").read_text()
    result = CliRunner().invoke(main, ["profile", "remote"])
    assert result.exit_code == 1, result.output
    assert "judges.api.base_url" in result.output and PASSWORD not in result.output
    assert (tmp_path / "params.yaml").read_text() == before
