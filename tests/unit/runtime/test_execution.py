"""The executor: bounded retries, failures recorded, and Ray local mode == in-process."""

from __future__ import annotations

import functools
import os

import pandas as pd
import pytest

from implicit_bench.render.images import ImageStore
from implicit_bench.render.params import RenderParams
from implicit_bench.render.stage import render_all
from implicit_bench.runtime.execution import ExecutorConfig, WorkItem, ray_address, run_items
from tests.helpers.paths import REPO_ROOT
from tests.helpers.render_fixtures import tiny_config, units_frame
from tests.helpers.workers import make_flaky


def _run(config: ExecutorConfig, flaky: dict[int, int]) -> tuple[dict, object]:
    outcomes = {}
    items = [WorkItem(f"i{x}", x) for x in range(6)]
    stats = run_items(
        items,
        functools.partial(make_flaky, flaky),
        config,
        lambda o: outcomes.__setitem__(o.item.id, o),
    )
    return outcomes, stats


def test_local_retries_then_records_failure_and_finishes():
    # item 2 fails once (ok at attempt 2); item 4 always fails (3 attempts, then failed)
    outcomes, stats = _run(ExecutorConfig(max_attempts=3, progress=False), {2: 1, 4: 99})
    assert [outcomes[f"i{x}"].value for x in (0, 1, 2, 3, 5)] == [0, 1, 4, 9, 25]
    assert outcomes["i2"].attempts == 2 and outcomes["i2"].ok
    assert not outcomes["i4"].ok and outcomes["i4"].attempts == 3
    assert outcomes["i4"].error.startswith("RuntimeError: boom 4 (workers.py:")
    # retries = (2 - 1) + (3 - 1) = 3
    assert (stats.items, stats.ok, stats.failed, stats.retries) == (6, 5, 1, 3)


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray")
    # workers import tests.helpers.workers and the package: give them both roots
    dirs = [REPO_ROOT, REPO_ROOT / "src"]
    path = os.pathsep.join([*map(str, dirs), os.environ.get("PYTHONPATH", "")])
    ray.init(
        address="local",  # a new local instance, never a cluster another test (worker) started
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    yield ray
    ray.shutdown()


def test_ray_local_mode_matches_in_process(ray_local, tiny_generator_dir, tmp_path):
    # the same retry semantics on Ray actors
    ray_cfg = ExecutorConfig(kind="ray", workers=1, num_cpus=1, max_attempts=2, progress=False)
    outcomes, stats = _run(ray_cfg, {1: 1, 3: 5})
    assert outcomes["i1"].value == 1 and outcomes["i1"].attempts == 2
    assert not outcomes["i3"].ok and outcomes["i3"].attempts == 2
    assert (stats.ok, stats.failed, stats.retries) == (5, 1, 2)

    # renders: 4 units x 1 seed x 3 variants in batches of 4, on 2 actors vs in-process
    config = tiny_config(tiny_generator_dir)
    units = units_frame()
    local = RenderParams(
        configs={"tiny": config}, seeds=[42], executor=ExecutorConfig(progress=False)
    )
    ray = RenderParams(
        configs={"tiny": config},
        seeds=[42],
        executor=ExecutorConfig(kind="ray", workers=2, num_cpus=1, progress=False),
    )
    render_all(local, units, tmp_path / "local")
    render_all(ray, units, tmp_path / "ray")
    a = pd.read_parquet(tmp_path / "local" / "tiny" / "index.parquet")
    b = pd.read_parquet(tmp_path / "ray" / "tiny" / "index.parquet")
    assert len(a) == 12 and (a["status"] == "ok").all()
    pd.testing.assert_frame_equal(a, b)
    sa, sb = ImageStore(tmp_path / "local" / "tiny"), ImageStore(tmp_path / "ray" / "tiny")
    assert all(sa.read_bytes(h) == sb.read_bytes(h) for h in a["sha256"])


def test_an_unset_ray_address_starts_a_local_ray_unless_ray_address_names_one(monkeypatch):
    """executor.address null: RAY_ADDRESS when set (a `ray job submit` driver), else "local"
    (a new Ray), never Ray's default of joining the last cluster started on the machine."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert ray_address(None) == "local"
    assert ray_address("auto") == "auto"
    assert ray_address("ray://head:10001") == "ray://head:10001"
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert ray_address(None) == "10.0.0.1:6379"
    assert ray_address("auto") == "auto"
    monkeypatch.setenv("RAY_ADDRESS", "")
    assert ray_address(None) == "local"
