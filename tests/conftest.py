"""Shared fixtures. Everything runs offline: no hub downloads."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def tiny_generator_dir(tmp_path_factory) -> Path:
    """The tiny random text-to-image pipeline, built once under a fixed seed."""
    from implicit_bench.tiny.stage import build

    return build("generator", tmp_path_factory.mktemp("tiny") / "generator", seed=0)


def copy_repo(src: Path, dst: Path) -> None:
    """Copy the files git tracks or would track (not ignored ones) from ``src`` to ``dst``."""
    files = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=src,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        if (src / name).is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / name, dst / name)


@pytest.fixture(scope="session")
def dvc_base(tmp_path_factory) -> Path:
    """The session's one DVC workspace: the repository committed with `dvc repro triplets` run
    (tests/dvc_workspace.py); tests copy it with ``dvc_workspace.copy_workspace``."""
    from tests.dvc_workspace import build_base, dvc_available

    if not dvc_available():
        pytest.skip("dvc not installed")
    return build_base(REPO_ROOT, tmp_path_factory.mktemp("dvc-base") / "repo")
