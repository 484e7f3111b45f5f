"""DVC experiments on subsets and configurations, and two fresh clones (docs/experiments.md).

The same small baseline as tests/e2e/test_dvc_experiments.py (built once per test run, shared by
the workers: tests/helpers/dvc_workspace.py), in this module's own copy: a smaller subset and back,
a render configuration added and removed, and an independent build from a fresh copy of the
repository that must give the baseline's hashes.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers.dvc_workspace import (
    N_UNITS,
    Workspace,
    first_config,
    small_params,
    small_workspace,
)
from tests.helpers.paths import REPO_ROOT, copy_repo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ws(dvc_base, tmp_path_factory) -> Workspace:
    """A private copy of the run's small baseline (tests/helpers/dvc_workspace.py,
    ``build_small``)."""
    return small_workspace(tmp_path_factory, dvc_base, "exp-subsets")


def test_subset_down_and_up(ws):
    config = first_config(ws.params())
    ws.exp(["judge", "clip"], f"subset.max_units={N_UNITS - 2}")
    units = set(ws.table("data/interim/units.parquet")["unit_id"].astype(str))
    assert len(units) == N_UNITS - 2
    for path in (
        f"data/images/{config}/index.parquet",
        "data/judgements/judgements.parquet",
        "data/judgements/clip.parquet",
    ):
        assert set(ws.table(path)["unit_id"].astype(str)) == units, path
    ws.exp(["judge", "clip"], f"subset.max_units={N_UNITS}")
    render = ws.last_run("render")
    run = next(v for k, v in render.items() if k.endswith(".run"))
    # an image depends on its own unit only, so going back renders nothing (a generator whose
    # settings hash covers every planned unit, e.g. a world fingerprint over all units, fails here)
    assert run["written"] == {}, run
    assert ws.last_run("judge")["model_calls"] == 0
    now = ws.lock_md5()
    for path in ("data/judgements/judgements.parquet", "data/judgements/clip.parquet"):
        assert now[path] == ws.baseline[path], path


def test_removing_a_render_configuration_removes_it_downstream(ws):
    params = ws.params()
    first = first_config(params)
    block = params["generators"][first]
    extra = f"{first}_copy"
    flow = "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in block.items()) + "}"
    ws.exp(["judge", "clip"], f"+generators.{extra}={flow}", f"render.run=[{first},{extra}]")
    assert extra in set(ws.table("data/judgements/judgements.parquet")["config"])
    ws.exp(["judge", "clip"], f"render.run=[{first}]")
    for path in ("data/judgements/judgements.parquet", "data/judgements/clip.parquet"):
        assert set(ws.table(path)["config"]) == {first}, path
    # the images folder holds the plan's stores only; the dropped store's items wait
    # in the model-call cache's pool for a later plan to adopt
    assert not (ws.root / f"data/images/{extra}").exists()
    assert (ws.root / f"cache/image_pool/data/images/{extra}/journal.jsonl").exists()


def test_two_fresh_clones_give_the_same_hashes(ws, tmp_path):
    """A second fresh copy reproduces the baseline's outputs byte for byte, retrieval included."""
    other = Workspace(tmp_path / "clone")
    copy_repo(REPO_ROOT, other.root)
    small_params(other.root / "params.yaml")
    (other.root / "dvc.lock").unlink(missing_ok=True)  # only the stages this clone runs
    other.run("git", "init", "-q")
    other.run("git", "add", "-A")
    other.run("git", "commit", "-qm", "copy")
    other.run("dvc", "repro", "retrieve", "render")
    theirs = other.lock_md5()
    assert {"data/processed/retrieval.parquet", "data/images"} <= set(theirs)
    differ = {
        p: (h, ws.baseline.get(p))
        for p, h in theirs.items()
        if p in ws.baseline and ws.baseline[p] != h
    }
    assert not differ, differ
