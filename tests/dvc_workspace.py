"""One DVC workspace per test session, copied by the end-to-end tests that need one.

`dvc repro triplets` (sources -> kg -> triplets: the knowledge graph over all 5,737 sentence
pairs) is the prefix the DVC end-to-end tests on the shipped params have in common and the
slowest part of it. ``build_base`` runs it once in a committed copy of the repository (the
session fixture ``dvc_base`` in conftest.py); each test takes a private copy of that workspace
(``copy_workspace``: ``cp -a``, reflinks where the file system has them: work tree, git
history, dvc.lock and the DVC cache), so a test that changes params, runs experiments or
commits never touches another test's workspace. A test about fresh clones (two independent
builds give the same hashes) still copies the repository itself (``conftest.copy_repo``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

BASE_TARGETS = ("triplets",)  # what the shared workspace has reproduced and committed


def dvc_available() -> bool:
    """Whether `dvc` is on the virtual environment's or the shell's PATH."""
    return (
        shutil.which("dvc", path=str(Path(sys.executable).parent)) is not None
        or shutil.which("dvc") is not None
    )


def workspace_env(root: Path) -> dict[str, str]:
    """The environment of commands run in the workspace ``root``: its own sources, git identity,
    one thread per stage and the workspace's own answer cache (``<root>/cache``)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(root / "src"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "OMP_NUM_THREADS": "1",
        "IMPLICIT_BENCH_RUN_LOG": "",
    }
    env.pop("IMPLICIT_BENCH_CACHE_DIR", None)
    return env


def run_in(root: Path, *cmd: str) -> str:
    """Run ``cmd`` in ``root`` and return its stdout; a failure shows the command and the tail
    of its output."""
    done = subprocess.run(cmd, cwd=root, env=workspace_env(root), capture_output=True, text=True)
    assert done.returncode == 0, (
        f"{' '.join(cmd)}: exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    return done.stdout


def build_base(repo_root: Path, root: Path) -> Path:
    """Copy ``repo_root`` to ``root``, commit it, `dvc repro` BASE_TARGETS and commit again."""
    from tests.conftest import copy_repo

    copy_repo(repo_root, root)
    run_in(root, "git", "init", "-q")
    run_in(root, "git", "add", "-A")
    run_in(root, "git", "commit", "-qm", "copy")
    run_in(root, "dvc", "repro", *BASE_TARGETS)
    run_in(root, "git", "add", "-A")
    run_in(root, "git", "commit", "-qm", "base", "--allow-empty")
    return root


def copy_workspace(base: Path, dst: Path) -> Path:
    """A private copy of the workspace ``base`` at ``dst`` (which must not exist yet)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", "--reflink=auto", str(base), str(dst)], check=True)
    return dst
