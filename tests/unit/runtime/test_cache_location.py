"""One model-call cache per repository (docs/experiments.md): where it lives, and two writers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from implicit_bench.runtime import cache_location
from implicit_bench.runtime.cache import DiskCache


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "PATH": "/usr/bin:/bin",
        },
    )


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.delenv(cache_location.ENV_VAR, raising=False)
    cache_location.repository_root.cache_clear()
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "params.yaml").write_text("base: {profile: default}\n")
    _git(root, "add", "params.yaml")
    _git(root, "commit", "-q", "-m", "init")
    yield root
    cache_location.repository_root.cache_clear()


def test_workspace_worktree_and_dvc_temp_workspace_share_one_cache_dir(repo, tmp_path):
    assert cache_location.cache_dir(repo) == (repo / "cache").resolve()
    _git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "other")
    assert cache_location.cache_dir(tmp_path / "wt") == (repo / "cache").resolve()
    temp = repo / ".dvc/tmp/exps/tmpabc123"  # where `dvc exp run --temp` and queue workers run
    temp.mkdir(parents=True)
    _git(temp, "init", "-q")  # DVC makes its own git repository there
    assert cache_location.cache_dir(temp) == (repo / "cache").resolve()
    standalone = repo / ".dvc/tmp/exps/standalone/tmpxyz"
    standalone.mkdir(parents=True)
    assert cache_location.cache_dir(standalone) == (repo / "cache").resolve()
    # cache/NAME params values land there; absolute paths and other relative paths do not move
    assert (
        cache_location.resolve("cache/judge.sqlite", temp)
        == (repo / "cache/judge.sqlite").resolve()
    )
    assert cache_location.resolve(tmp_path / "x.sqlite", temp) == tmp_path / "x.sqlite"
    assert cache_location.resolve("elsewhere/x.sqlite", temp) == temp / "elsewhere/x.sqlite"


def test_params_key_and_environment_variable_choose_the_location(repo, tmp_path, monkeypatch):
    (repo / "params.yaml").write_text("base: {profile: default, cache_dir: ../shared-cache}\n")
    assert cache_location.cache_dir(repo) == (tmp_path / "shared-cache").resolve()
    assert cache_location.where_from(repo) == "base.cache_dir"
    monkeypatch.setenv(cache_location.ENV_VAR, str(tmp_path / "env-cache"))
    assert cache_location.cache_dir(repo) == (tmp_path / "env-cache").resolve()
    assert (
        cache_location.resolve("cache/clip.sqlite", repo)
        == (tmp_path / "env-cache/clip.sqlite").resolve()
    )
    assert cache_location.where_from(repo) == f"${cache_location.ENV_VAR}"


def test_outside_git_the_cache_is_the_working_directory_s(tmp_path, monkeypatch):
    monkeypatch.delenv(cache_location.ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    cache = DiskCache("cache/a.sqlite")
    try:
        assert cache.path == (tmp_path / "cache/a.sqlite").resolve()
    finally:
        cache.close()


WRITER = """
import sys
from implicit_bench.runtime.cache import DiskCache
cache = DiskCache(sys.argv[1])
tag = sys.argv[2]
for batch in range(40):
    cache.put_many([(f"shared-{batch}-{i}", {"v": i}) for i in range(25)]
                   + [(f"{tag}-{batch}-{i}", {"w": tag}) for i in range(25)])
    cache.put(f"{tag}-single-{batch}", batch)
cache.close()
"""


def test_two_writers_at_once_lose_and_corrupt_nothing(tmp_path):
    path = tmp_path / "cache.sqlite"
    DiskCache(path).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), tag], stderr=subprocess.PIPE, text=True
        )
        for tag in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    cache = DiskCache(path)
    try:
        assert len(cache) == 40 * 25 + 2 * (40 * 25 + 40)
        got = cache.get_many([f"{t}-{b}-{i}" for t in "ab" for b in range(40) for i in range(25)])
        assert len(got) == 2 * 40 * 25 and {v["w"] for v in got.values()} == {"a", "b"}
        assert cache._conn().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        cache.close()
