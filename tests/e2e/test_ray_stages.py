"""The judge stage's real entry (``run_judge_stage``) on Ray beyond one process:
a local cluster on 127.0.0.1 (head + two worker nodes, one CPU each, a custom resource
``gpu_slot`` standing in for GPUs) with the driver SIGKILLed part way and re-run, and with a worker
node killed mid-run; and the ``ray job submit`` recipe of docs/gpu.md run against a local head
with its dashboard (job server). The judge is the OpenAI-compatible backend against a real local
HTTP server, so no model is loaded: kept tiny, the machine has 2 shared cores. Every wait has a
timeout and every cluster is torn down in a ``finally``/fixture."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.backends.judges.stage import run_judge_stage
from tests.helpers.chat_server import ChatServer, completion
from tests.helpers.judge_fixtures import make_inputs
from tests.helpers.paths import REPO_ROOT

pytestmark = pytest.mark.slow
PATH = os.pathsep.join([str(REPO_ROOT / "src"), str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])
N = 11  # rubric judgements make_inputs plans (one per stored image)


def _params(server: ChatServer, executor: dict) -> JudgeStageParams:
    judges = {
        "api": {
            "backend": "openai",
            "model": "m",
            "base_url": server.base_url,
            "api_key_env": None,
            "batch_size": 1,
            "concurrency": 1,
        }
    }
    return JudgeStageParams(
        judges=judges, tasks={"rubric": None}, configs=["base"], progress=False, executor=executor
    )


def _slow(started: threading.Event, after: int, delay_s: float = 0.3):
    def answer(body, n):
        if n >= after:
            started.set()
        time.sleep(delay_s)
        return 200, completion('{"score": 2}')

    return answer


def _settle(server: ChatServer, quiet_s: float = 2.0, limit_s: float = 30.0) -> int:
    """Wait until the server got no request for ``quiet_s``; the number of requests then."""
    deadline = time.monotonic() + limit_s
    last, since = server.hits, time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < quiet_s:
        time.sleep(0.1)
        if server.hits != last:
            last, since = server.hits, time.monotonic()
    return last


def _check_table(root: Path, params: JudgeStageParams) -> None:
    """0 lost, 0 duplicated: one valid row per planned judgement."""
    frame = pd.read_parquet(root / params.out)
    assert len(frame) == N and frame["valid"].all()
    key = [
        c
        for c in ("judge", "task", "config", "unit_id", "variant", "seed", "order")
        if c in frame.columns
    ]
    assert not frame.duplicated(subset=key).any()


@pytest.fixture(scope="module")
def cluster():
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        nodes = [c.add_node(num_cpus=1, resources={"gpu_slot": 1}) for _ in range(2)]
        c.wait_for_nodes(timeout=90)
        ray.init(
            address=c.address, log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": PATH}}
        )
        yield ray, c, nodes
    finally:
        ray.shutdown()
        c.shutdown()


def _executor(c) -> dict:
    # one actor per worker node (each offers gpu_slot: 1), never on the head
    return {
        "kind": "ray",
        "address": c.address,
        "workers": 2,
        "num_cpus": 0,
        "resources": {"gpu_slot": 1},
        "max_attempts": 3,
        "runtime_env": {"env_vars": {"PYTHONPATH": PATH}},
    }


def test_driver_sigkilled_and_rerun_resumes_from_the_cache(cluster, tmp_path):
    ray, c, _ = cluster
    make_inputs(tmp_path)
    started = threading.Event()
    with ChatServer(_slow(started, after=6)) as server:
        params = _params(server, _executor(c))
        script = (
            "from pathlib import Path; from implicit_bench.backends.judges.stage import *; "
            f"p = JudgeStageParams.model_validate_json({params.model_dump_json()!r}); "
            f"run_judge_stage(p, Path({str(tmp_path)!r}))"
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONPATH": PATH},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            assert started.wait(90), "the driver asked fewer than 6 judgements in 90 s"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
        assert proc.returncode == -signal.SIGKILL
        asked_before = _settle(server)  # the killed driver's actors die with it (Ray owns them)
        assert 6 <= asked_before < N
        resumed = run_judge_stage(
            params, tmp_path
        )  # the same entry, a new driver on the same cluster
        asked_after = server.hits - asked_before
    print(
        f"driver kill: asked before {asked_before}, cache hits "
        f"{resumed.cache_hits}, asked after {asked_after}"
    )
    # answers stored before the kill are read back (all but those in flight: at most
    # workers x max_in_flight = 4 batches handed to the actors and not yet returned);
    # only the missing ones are asked
    assert (
        resumed.cache_hits >= max(1, asked_before - 4)
        and resumed.cache_hits + resumed.model_calls == N
    )
    assert asked_after == resumed.model_calls and not resumed.errors
    assert (
        N <= asked_before + asked_after <= N + 4
    )  # only requests in flight at the kill asked twice
    _check_table(tmp_path, params)


def test_worker_node_killed_mid_stage_loses_and_duplicates_nothing(cluster, tmp_path):
    ray, c, nodes = cluster
    make_inputs(tmp_path)
    started = threading.Event()
    out: dict[str, object] = {}

    def stage():
        try:
            out["result"] = run_judge_stage(params, tmp_path)
        except BaseException as exc:  # reported below, in the test's thread
            out["error"] = exc

    with ChatServer(_slow(started, after=4)) as server:
        params = _params(server, _executor(c))
        runner = threading.Thread(target=stage, daemon=True)
        runner.start()
        assert started.wait(90), "the stage asked fewer than 4 judgements in 90 s"
        victim = nodes.pop(0)
        c.remove_node(victim)  # its actor dies with it, the request in flight is lost
        killed_at = server.hits
        # a replacement node joins (Cluster needs the main thread: signal handlers)
        nodes.append(c.add_node(num_cpus=1, resources={"gpu_slot": 1}))
        runner.join(100)
        assert not runner.is_alive(), "the stage did not finish in 100 s after the node loss"
    assert "error" not in out, out.get("error")
    result = out["result"]
    print(
        f"node kill: at request {killed_at}, batches {result.model_calls}, requests {server.hits}"
    )
    assert killed_at < N  # killed mid-run
    assert result.model_calls == N and not result.errors  # every batch handed back exactly once
    assert N <= server.hits <= N + 2  # the lost request (one per actor on the node) asked again
    _check_table(tmp_path, params)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, limit_s: float) -> bool:
    """True once the server answers at all (Ray 2.60 enables token auth: 401 without a token)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            time.sleep(1)
    return False


def test_ray_job_submit_recipe_against_a_local_head(tmp_path):
    """docs/gpu.md, "Submitting the stage as a Ray job": ``ray start --head`` with its dashboard,
    ``ray job submit --address http://127.0.0.1:<dashboard port> --working-dir . -- python ...``
    running the judge stage with ``executor: {kind: ray, address: auto}``; the head is stopped in
    a ``finally`` (its whole process group: nothing else on the machine is touched)."""
    pytest.importorskip("ray")
    pytest.importorskip("aiohttp_cors", reason="the dashboard (job server) needs ray[default]")
    ray_bin = str(Path(sys.executable).with_name("ray"))
    ports = {
        k: _free_port()
        for k in (
            "port",
            "dashboard-port",
            "node-manager-port",
            "object-manager-port",
            "dashboard-agent-listen-port",
            "dashboard-agent-grpc-port",
            "runtime-env-agent-port",
            "metrics-export-port",
            "ray-client-server-port",
        )
    }
    temp = tempfile.mkdtemp(prefix="rj", dir="/tmp")  # short: Ray's unix sockets live under it
    # Ray 2.60 (pinned) turns token authentication on for a new head: the head and the submitting
    # client share a token (here through the environment; `ray get-auth-token` prints a head's)
    env = {
        **os.environ,
        "PYTHONPATH": PATH,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
    }
    head = subprocess.Popen(
        [
            ray_bin,
            "start",
            "--head",
            "--block",
            "--node-ip-address",
            "127.0.0.1",
            "--num-cpus",
            "1",
            "--include-dashboard",
            "true",
            "--dashboard-host",
            "127.0.0.1",
            "--temp-dir",
            temp,
            *[a for k, v in ports.items() for a in (f"--{k}", str(v))],
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    dashboard = f"http://127.0.0.1:{ports['dashboard-port']}"
    try:
        assert _wait_http(f"{dashboard}/api/version", 90), "the dashboard did not answer in 90 s"
        make_inputs(tmp_path)
        with ChatServer(lambda body, n: (200, completion('{"score": 4}'))) as server:
            params = _params(
                server, {"kind": "ray", "address": "auto", "workers": 1, "num_cpus": 0}
            )
            script = (
                "import os; from pathlib import Path;"
                " from implicit_bench.backends.judges.stage import *; "
                f"p = JudgeStageParams.model_validate_json({params.model_dump_json()!r}); "
                f"r = run_judge_stage(p, Path({str(tmp_path)!r})); "
                "import implicit_bench; print('JOB', r.model_calls, implicit_bench.__file__)"
            )
            runtime_env = {"env_vars": {"PYTHONPATH": "src", "RAY_USAGE_STATS_ENABLED": "0"}}
            job = subprocess.run(
                [
                    ray_bin,
                    "job",
                    "submit",
                    "--address",
                    dashboard,
                    "--working-dir",
                    str(REPO_ROOT),
                    "--runtime-env-json",
                    json.dumps(runtime_env),
                    "--",
                    "python",
                    "-c",
                    script,
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=110,
            )
        out = job.stdout + job.stderr
        assert job.returncode == 0 and "succeeded" in out, out[-3000:]
        # the job's driver ran the uploaded checkout (not this one), asked every judgement once
        line = next(x for x in out.splitlines() if x.startswith("JOB "))
        calls, source = line.split()[1:3]
        assert int(calls) == N and server.hits == N and not source.startswith(str(REPO_ROOT))
        _check_table(tmp_path, params)
    finally:
        head.send_signal(signal.SIGTERM)  # --block: ray start stops the head's processes on SIGTERM
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(60)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)  # anything of this head still alive (its own group)
        head.wait(30)
        shutil.rmtree(temp, ignore_errors=True)
