"""DVC workspaces built once per test run, copied by the end-to-end tests that need one.

`dvc repro triplets` (sources -> kg -> triplets: the knowledge graph over all 5,737 sentence
pairs) is the prefix the DVC end-to-end tests on the shipped params have in common and the
slowest part of it. ``build_base`` runs it once in a committed copy of the repository (the
session fixture ``dvc_base`` in conftest.py); each test takes a private copy of that workspace
(``copy_workspace``: ``cp -a``, reflinks where the file system has them: work tree, git
history, dvc.lock and the DVC cache), so a test that changes params, runs experiments or
commits never touches another test's workspace. A test about fresh clones (two independent
builds give the same hashes) still copies the repository itself (``conftest.copy_repo``).

``shared_build`` builds a workspace once per run even under pytest-xdist: the first worker to
ask builds it, under a file lock, in the temp folder all workers share; the others wait for
it and copy it. The experiment tests' small baseline (``build_small``: the shrunk params
reproduced end to end) is built the same way, so the experiment modules can run on two
workers from one build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import yaml

BASE_TARGETS = ("triplets",)  # what the shared workspace has reproduced and committed
N_UNITS = 4  # subset.max_units of the experiments' small baseline
DEBIAS_UNITS = 2  # debias.subset.max_units of the small baseline


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


def checked_run(root: Path, cmd: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` in ``root`` (``workspace_env``); a failure shows the command, its exit status
    and the tail of its output."""
    done = subprocess.run(cmd, cwd=root, env=workspace_env(root), capture_output=True, text=True)
    assert done.returncode == 0, (
        f"{' '.join(cmd)}: exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    return done


def run_in(root: Path, *cmd: str) -> str:
    """Run ``cmd`` in ``root`` and return its stdout (``checked_run``)."""
    return checked_run(root, cmd).stdout


def build_base(repo_root: Path, root: Path) -> Path:
    """Copy ``repo_root`` to ``root``, commit it, `dvc repro` BASE_TARGETS and commit again."""
    from tests.helpers.paths import copy_repo

    copy_repo(repo_root, root)
    # the shipped dvc.lock holds every stage of the shipped params; the tests' workspaces write
    # their own (a smaller lock: DVC parses it at each stage, about a second per 8,000 lines)
    (root / "dvc.lock").unlink(missing_ok=True)
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


def shared_build(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:  # noqa: ANN001
    """``<run temp>/<name>/repo``, made by ``build(path)`` once per test run: under pytest-xdist
    the run's temp folder is shared by the workers, and a file lock makes the first worker
    build while the others wait; a failed build leaves no marker, so the next caller retries
    (and fails the same way, in its own test)."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # pytest-N/, above each worker's popen-gwK/
    target = root / name / "repo"
    with FileLock(str(root / f"{name}.lock")):
        if not (root / name / "built").exists():
            shutil.rmtree(root / name, ignore_errors=True)
            build(target)
            (root / name / "built").touch()
    return target


def small_params(path: Path) -> dict:
    """Shrink the sizes of params.yaml in place; keep its models, seeds and configurations."""
    params = yaml.safe_load(path.read_text(encoding="utf-8"))
    params["subset"]["max_units"] = N_UNITS
    debias = params["debias"]
    debias["subset"]["max_units"] = DEBIAS_UNITS
    keep = debias["scoring"]["unmodified"]
    debias["configs"] = {keep: debias["configs"][keep]}
    if "b6" in params:  # B.6 re-scores the configurations kept only
        b6 = params["b6"]
        b6["debias_configs"] = [c for c in b6.get("debias_configs") or [] if c in debias["configs"]]
    path.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return params


def build_small(base: Path, root: Path) -> Path:
    """A copy of ``base`` (the ``dvc_base`` workspace) at ``root`` with ``small_params``
    committed, `dvc repro` of the whole pipeline, committed as the baseline."""
    copy_workspace(base, root)
    small_params(root / "params.yaml")
    run_in(root, "git", "add", "-A")
    run_in(root, "git", "commit", "-qm", "small params")
    run_in(root, "dvc", "repro")
    run_in(root, "git", "add", "-A")
    run_in(root, "git", "commit", "-qm", "baseline", "--allow-empty")
    return root


def first_config(params: dict) -> str:
    """The first render configuration of ``params``."""
    render = params["render"]
    return (render.get("run") or list(params["generators"]))[0]


class Workspace:
    """A DVC workspace with small params: git and DVC at hand, its tables and run log read."""

    def __init__(self, root: Path):
        self.root = root
        self.env = workspace_env(root)
        self.baseline = self.lock_md5()

    def run(self, *cmd: str) -> str:
        """Run ``cmd`` in the workspace; its stdout and stderr together."""
        done = checked_run(self.root, cmd)
        return done.stdout + done.stderr

    def params(self) -> dict:
        return yaml.safe_load((self.root / "params.yaml").read_text(encoding="utf-8"))

    def json(self, path: str) -> dict:
        return json.loads((self.root / path).read_text(encoding="utf-8"))

    def table(self, path: str) -> pd.DataFrame:
        return pd.read_parquet(self.root / path)

    def last_run(self, stage: str) -> dict | None:
        path = self.root / "logs/runs.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        found = [json.loads(line) for line in lines if json.loads(line).get("stage") == stage]
        return found[-1] if found else None

    def lock_md5(self) -> dict[str, str]:
        """out path -> md5 of every stage in dvc.lock (empty before the first repro)."""
        path = self.root / "dvc.lock"
        if not path.exists():
            return {}
        lock = yaml.safe_load(path.read_text(encoding="utf-8"))
        return {
            o["path"]: o.get("md5") for st in lock["stages"].values() for o in st.get("outs", [])
        }

    def exp(self, targets: list[str], *sets: str) -> str:
        args = [a for s in sets for a in ("-S", s)]
        return self.run("dvc", "exp", "run", *targets, *args)


def small_workspace(tmp_path_factory, dvc_base: Path, name: str) -> Workspace:  # noqa: ANN001
    """A private copy of the run's small baseline (built once: ``build_small``)."""
    if not dvc_available():
        import pytest

        pytest.skip("dvc not installed")
    built = shared_build(tmp_path_factory, "dvc-small", lambda root: build_small(dvc_base, root))
    return Workspace(copy_workspace(built, tmp_path_factory.mktemp(name) / "repo"))
