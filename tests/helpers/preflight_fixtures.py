"""A judge stage run against a local server, for the preflight tests."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import yaml
from click.testing import CliRunner

from tests.helpers.paths import REPO_ROOT

KEY_ENV = "STAGE_PREFLIGHT_TEST_KEY"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_judge_params(
    where: Path,
    base_url: str,
    model: str = "judge-model",
    key_env: str | None = KEY_ENV,
    **extra: object,
) -> None:
    params = {
        "judges": {
            "api": {
                "backend": "openai",
                "model": model,
                "base_url": base_url,
                "api_key_env": key_env,
            }
        },
        "judge": {"tasks": {"rubric": {"judges": ["api"]}}, "configs": ["base"], "progress": False},
        **extra,
    }
    (where / "params.yaml").write_text(yaml.safe_dump(params))


def judge_stage():
    import runpy

    return runpy.run_path(str(REPO_ROOT / "stages" / "judge.py"))["main"]


def run_judge_stage(args: list[str] | None = None):
    start = time.monotonic()
    result = CliRunner().invoke(judge_stage(), args or [])
    return result, time.monotonic() - start
