"""`implicit-bench profile NAME` replaces params.yaml once, atomically: DVC's in-place writer
works on a temporary copy, so a kill never leaves a truncated params.yaml."""

from __future__ import annotations

import shutil

import dvc.utils.hydra

from implicit_bench.params.profiles import write_profile
from tests.helpers.paths import REPO_ROOT


def test_dvc_writer_never_touches_params_yaml_in_place(tmp_path, monkeypatch):
    shutil.copytree(REPO_ROOT / "profiles", tmp_path / "profiles")
    params = tmp_path / "params.yaml"
    shutil.copy(REPO_ROOT / "params.yaml", params)
    monkeypatch.chdir(tmp_path)
    real = dvc.utils.hydra.apply_overrides
    seen = []

    def spy(path, overrides):
        seen.append(str(path))
        return real(path, overrides)

    monkeypatch.setattr(dvc.utils.hydra, "apply_overrides", spy)
    inode = params.stat().st_ino
    write_profile("default", str(params), str(params))
    assert seen and all(p != str(params) for p in seen)
    assert params.stat().st_ino != inode  # replaced by a rename, not rewritten
    assert not list(tmp_path.glob(".params.yaml.*"))
    again = params.read_bytes()
    write_profile("default", str(params), str(params))
    assert params.read_bytes() == again
