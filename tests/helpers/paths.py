"""The repository root, and copies of it for tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


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


def enter_project_copy(tmp_path: Path, monkeypatch) -> None:
    """Copy params.yaml, profiles/ and metrics/ into ``tmp_path`` and work there, offline."""
    shutil.copy(REPO_ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(REPO_ROOT / "profiles", tmp_path / "profiles")
    shutil.copytree(REPO_ROOT / "metrics", tmp_path / "metrics")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
