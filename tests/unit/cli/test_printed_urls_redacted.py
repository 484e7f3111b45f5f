"""No printed URL shows its password: ``base_url: http://svc:PASSWORD@host/v1`` in
a judge, generator or llm entry is ``http://[REDACTED]@host/v1`` in ``implicit-bench check``,
in each model stage's preflight line, in ``run --dry-run`` and in ``profile NAME --dry-run``."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from implicit_bench._util.redact import MASK, url
from implicit_bench.cli.main import main
from tests.helpers.chat_server import ChatServer
from tests.helpers.paths import enter_project_copy
from tests.helpers.preflight_fixtures import free_port, judge_stage, write_judge_params

PASSWORD = "Pw-not-to-print-37"
KEY_ENV = "URL_REDACTION_TEST_KEY"


def _with_userinfo(base_url: str) -> str:
    return base_url.replace("http://", f"http://svc:{PASSWORD}@", 1)


def _assert_redacted(output: str) -> None:
    assert PASSWORD not in output and "svc:" not in output, output
    assert f"http://{MASK}@127.0.0.1:" in output, output


def test_url_keeps_everything_but_the_userinfo():
    assert url(f"http://svc:{PASSWORD}@h:9/v1") == f"http://{MASK}@h:9/v1"
    assert url("https://api.openai.com/v1") == "https://api.openai.com/v1"


@pytest.mark.parametrize("kind", ["judges", "generators", "llms"])
@pytest.mark.parametrize("case", ["down", "unknown model", "no key"])
def test_check_prints_no_password_of_a_base_url(tmp_path, monkeypatch, kind, case):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(KEY_ENV, raising=False)
    with ChatServer(models=["other-model"]) as server:
        base = f"http://127.0.0.1:{free_port()}/v1" if case == "down" else server.base_url
        block = {
            "backend": "openai_images" if kind == "generators" else "openai",
            "model": "m",
            "base_url": _with_userinfo(base),
            "api_key_env": KEY_ENV if case == "no key" else None,
        }
        params = {kind: {"api": block}, "render": {"run": ["api"] if kind == "generators" else []}}
        params["judge"] = {"tasks": {"rubric": {"judges": ["api"] if kind == "judges" else []}}}
        if kind == "llms":
            params["kg"] = {"extractor": "llm", "llm": "api"}
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
        result = CliRunner().invoke(main, ["check", "--no-disk", "--timeout", "3"])
    assert result.exit_code == 1, result.output
    assert f"check: {kind}.api:" in result.output
    _assert_redacted(result.output)


def test_a_model_stage_preflight_line_prints_no_password(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IMPLICIT_BENCH_NO_PREFLIGHT", raising=False)
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    with ChatServer(models=["other-model"]) as server:
        write_judge_params(tmp_path, _with_userinfo(server.base_url), key_env=None)
        result = CliRunner().invoke(judge_stage(), [])
    assert result.exit_code == 1
    assert "judge: preflight: judges.api:" in result.output and "does not serve" in result.output
    _assert_redacted(result.output)


def test_run_dry_run_prints_no_password(tmp_path, monkeypatch):
    enter_project_copy(tmp_path, monkeypatch)
    base = _with_userinfo(f"http://127.0.0.1:{free_port()}/v1")
    result = CliRunner().invoke(
        main,
        ["run", "--generator", "sim_local", "--judge", f"openai:m@{base}", "--units", "2"]
        + ["--dry-run", "--timeout", "3"],
    )
    assert result.exit_code == 0, result.output
    assert "== preflight" in result.output and "cannot be reached" in result.output
    _assert_redacted(result.output)


def test_profile_dry_run_prints_no_password(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text("base:\n  profile: default\n")
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "remote.yaml").write_text(
        "judges:\n  api: {backend: openai, model: m, "
        f"base_url: 'http://svc:{PASSWORD}@127.0.0.1:9/v1'}}\n"
    )
    result = CliRunner().invoke(main, ["profile", "remote", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "base_url:" in result.output
    _assert_redacted(result.output)
