"""Ray beyond one machine: a local multi-node cluster on 127.0.0.1 (head + two
worker nodes, one CPU each; a custom resource ``gpu_slot`` stands in for GPUs): work that needs
the resource lands only on nodes that offer it, and a worker node killed mid-run loses and
duplicates nothing. Kept tiny: the machine has 2 shared cores."""

from __future__ import annotations

import os

import pytest

from implicit_bench.runtime.execution import ExecutorConfig, WorkItem, run_items
from tests.helpers.paths import REPO_ROOT
from tests.helpers.workers import node_worker

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    path = os.pathsep.join(
        [
            str(REPO_ROOT),
            str(REPO_ROOT / "src"),
            os.environ.get("PYTHONPATH", ""),
        ]
    )
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    gpu_nodes = [c.add_node(num_cpus=1, resources={"gpu_slot": 2}) for _ in range(2)]
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield ray, c, gpu_nodes
    ray.shutdown()
    c.shutdown()


def test_gpu_work_lands_only_on_nodes_that_offer_it(cluster):
    ray, c, gpu_nodes = cluster
    head_id = c.head_node.node_id
    config = ExecutorConfig(
        kind="ray", workers=2, num_cpus=0, resources={"gpu_slot": 1}, progress=False
    )
    outcomes = []
    stats = run_items(
        [WorkItem(f"i{i}", i) for i in range(12)], node_worker, config, on_outcome=outcomes.append
    )
    assert stats.ok == 12
    nodes = {o.value["node"] for o in outcomes}
    assert head_id not in nodes and nodes <= {n.node_id for n in gpu_nodes}


def test_worker_node_killed_mid_run_loses_and_duplicates_nothing(cluster):
    ray, c, gpu_nodes = cluster
    config = ExecutorConfig(
        kind="ray", workers=2, num_cpus=0, resources={"gpu_slot": 1}, max_attempts=3, progress=False
    )
    seen: list[str] = []
    killed = {}

    def on_outcome(outcome):
        assert outcome.ok, outcome.error
        seen.append(outcome.item.id)
        if len(seen) == 8 and not killed:
            victim = next(n for n in gpu_nodes if n.node_id == outcome.value["node"])
            c.remove_node(victim)  # the node that just answered dies mid-run
            killed["node"] = victim.node_id

    stats = run_items(
        [WorkItem(f"i{i}", i) for i in range(40)], node_worker, config, on_outcome=on_outcome
    )
    assert killed and stats.ok == 40 and stats.failed == 0
    assert sorted(seen) == sorted(f"i{i}" for i in range(40))  # 0 lost, 0 duplicated
