"""DVC experiments you can trust, end to end in a copy of the repository (docs/experiments.md).

One small baseline (`dvc repro` of the whole pipeline on a few units, in a copy of the run's
DVC workspace: tests/helpers/dvc_workspace.py) is built once per test run, shared by the workers;
each module takes its own copy. The tests run `dvc exp run -S ...` on it and check that
outputs follow the plan: judgements, CLIP rows and indexes hold exactly the planned items,
going back to a larger plan reuses every stored image and cached answer, metrics diffs show
the change, and nothing tracked depends on the clock or on cache state. They are written
against params.yaml (whatever profile it holds): they read its configuration names and seeds
and shrink only the sizes (`subset.max_units`, `debias.subset`, the debiasing configurations).
This module: run state, the plan command, seeds (render and debiasing) and queued
experiments; tests/e2e/test_dvc_experiment_subsets.py: subsets, configurations, fresh clones.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tests.helpers.dvc_workspace import (
    DEBIAS_UNITS,
    N_UNITS,
    Workspace,
    first_config,
    small_workspace,
)

pytestmark = pytest.mark.slow

RUN_STATE = {
    "seconds",
    "images_per_s",
    "embedded_now",
    "cache_hits",
    "llm_calls",
    "embedding_calls",
    "skipped_done",
    "batches_run",
    "model_calls",
}


@pytest.fixture(scope="module")
def ws(dvc_base, tmp_path_factory) -> Workspace:
    """A private copy of the run's small baseline (tests/helpers/dvc_workspace.py,
    ``build_small``)."""
    return small_workspace(tmp_path_factory, dvc_base, "exp")


def _run_state_keys(node, path="") -> list[str]:
    if isinstance(node, dict):
        return [f"{path}{k}" for k in node if k in RUN_STATE] + [
            p for k, v in node.items() for p in _run_state_keys(v, f"{path}{k}.")
        ]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _run_state_keys(v, f"{path}{i}.")]
    return []


def test_second_repro_runs_nothing_and_tracked_outputs_hold_no_run_state(ws):
    out = ws.run("dvc", "repro")
    assert "Running stage" not in out, out
    assert ws.run("git", "status", "--porcelain").strip() == ""
    tracked = [
        *ws.root.glob("metrics/*.json"),
        *ws.root.glob("data/debias/images/*/summary.json"),
        ws.root / "report/report.json",
    ]
    leaks = {
        str(p.relative_to(ws.root)): _run_state_keys(json.loads(p.read_text()))
        for p in tracked
        if p.exists()
    }
    assert not {k: v for k, v in leaks.items() if v}, leaks
    assert ws.last_run("render") is not None  # the timings went to the run log instead


def test_plan_command_sizes_the_run(ws):
    params = ws.params()
    config = first_config(params)
    out = json.loads(ws.run("implicit-bench", "plan", "--json"))
    assert out["units"] == N_UNITS and out["units_from"] == "data/interim/units.parquet"
    render = next(s for s in out["stages"] if s["stage"] == f"render {config}")
    index = ws.table(f"data/images/{config}/index.parquet")
    assert (
        render["items"] == len(index)
        and render["cached"] == len(index)
        and render["model_calls"] == 0
    )
    judge = next(s for s in out["stages"] if s["stage"] == "judge")
    rows = len(ws.table("data/judgements/judgements.parquet"))
    # the requests of the images rendered (refused ones not judged), each looked up in the
    # cache (unique request keys: identical images share answers)
    assert 0 < judge["cached"] == judge["items"] <= rows
    assert judge["model_calls"] == judge["items"] - judge["cached"]
    # a finished run: every stage's calls are stored or cached (refused images are not judged;
    # CLIP, retrieval and the debiasing judges' caches are looked up too)
    assert out["totals"]["model_calls"] == 0, [
        (s["stage"], s["model_calls"]) for s in out["stages"] if s["model_calls"]
    ]
    bigger = json.loads(
        ws.run(
            "implicit-bench",
            "plan",
            "--json",
            "--params",
            _seeds_params(ws, [*params["render"]["seeds"], 9042]),
        )
    )
    render2 = next(s for s in bigger["stages"] if s["stage"] == f"render {config}")
    per_seed = len(index) // len(params["render"]["seeds"])
    assert render2["items"] == len(index) + per_seed and render2["model_calls"] == per_seed


def _seeds_params(ws: Workspace, seeds: list[int]) -> str:
    params = ws.params()
    params["render"]["seeds"] = seeds
    path = ws.root / "logs/plan-params.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return str(path)


def test_seeds_experiment_follows_the_plan_and_going_back_reuses_everything(ws):
    seeds = ws.params()["render"]["seeds"]
    assert len(seeds) >= 2
    config = first_config(ws.params())
    fewer = seeds[:-1]
    ws.exp(["summary"], f"render.seeds={json.dumps(fewer)}")
    judgements = ws.table("data/judgements/judgements.parquet")
    assert sorted(judgements["seed"].unique()) == sorted(fewer)
    assert sorted(ws.table("data/judgements/clip.parquet")["seed"].unique()) == sorted(fewer)
    index = ws.table(f"data/images/{config}/index.parquet")
    assert sorted(index["seed"].unique()) == sorted(fewer) and index["unit_id"].nunique() == N_UNITS
    bench = ws.json("metrics/benchmark.json")
    assert bench["n_seeds"] == len(fewer)
    diff = json.loads(ws.run("dvc", "metrics", "diff", "--json"))["metrics/summary.json"]
    assert diff["n_seeds"] == {"old": len(seeds), "new": len(fewer), "diff": -1}
    assert diff["images"]["new"] < diff["images"]["old"]
    judge_run = ws.last_run("judge")
    assert judge_run["model_calls"] == 0  # every answer of the smaller plan was cached

    ws.exp(["summary"], f"render.seeds={json.dumps(seeds)}")
    render = ws.last_run("render")
    run = next(v for k, v in render.items() if k.endswith(".run"))
    assert run["written"] == {} and run["skipped_done"] == run["planned"]  # nothing re-rendered
    assert ws.last_run("judge")["model_calls"] == 0
    now = ws.lock_md5()
    for path in (
        "data/judgements/judgements.parquet",
        "data/judgements/clip.parquet",
        "metrics/benchmark.json",
    ):
        if path in ws.baseline:
            assert now[path] == ws.baseline[path], path  # back to the baseline, byte for byte
    assert (
        json.loads(ws.run("dvc", "metrics", "diff", "--json")).get("metrics/summary.json", {}) == {}
    )


def test_debias_seeds_down_and_up(ws):
    params = ws.params()
    seeds = params["debias"]["seeds"]
    unmodified = params["debias"]["scoring"]["unmodified"]
    fewer = seeds[:-1]
    ws.exp(["debias_score"], f"debias.seeds={json.dumps(fewer)}")
    judged = ws.table(f"data/debias/judgements/{unmodified}.parquet")
    assert sorted(judged["seed"].unique()) == sorted(fewer)
    index = ws.table(f"data/debias/images/{unmodified}/index.parquet")
    assert len(index) == DEBIAS_UNITS * len(fewer)
    assert ws.json(f"data/debias/images/{unmodified}/summary.json")["items"] == DEBIAS_UNITS * len(
        fewer
    )
    assert ws.json("metrics/debias.json")["seeds"] == fewer
    ws.exp(["debias_score"], f"debias.seeds={json.dumps(seeds)}")
    run = ws.last_run(f"debias_render@{unmodified}")["run"]
    assert run["written"] == {} and run["skipped_done"] == DEBIAS_UNITS * len(seeds)
    now = ws.lock_md5()
    for path in (f"data/debias/judgements/{unmodified}.parquet", "metrics/debias.json"):
        if path in ws.baseline:
            assert now[path] == ws.baseline[path], path


def _queue_done(ws: Workspace, names: list[str], timeout_s: float = 1200) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = ws.run("dvc", "queue", "status")
        rows = [line for line in status.splitlines() if any(n in line for n in names)]
        if rows and all("Success" in r or "Failed" in r for r in rows) and len(rows) >= len(names):
            assert all("Success" in r for r in rows), status
            return
        time.sleep(2)
    raise AssertionError(f"queue not done in {timeout_s} s:\n{ws.run('dvc', 'queue', 'status')}")


def test_queued_experiments_share_the_repository_cache_and_two_workers_keep_it_consistent(ws):
    """Queue workers run in <root>/.dvc/tmp/exps/...: they find the workspace's answers in the
    one cache of the repository (0 model calls) and two of them at once corrupt nothing."""
    import sqlite3

    seeds = ws.params()["render"]["seeds"]
    names = ["q-fewer", "q-first"]
    # targets judge and clip: the stages with model caches that a seeds change re-runs (the
    # stages after them call no model)
    for name, fewer in zip(names, (seeds[:-1], seeds[:1]), strict=True):
        ws.run(
            "dvc",
            "exp",
            "run",
            "--queue",
            "--name",
            name,
            "judge",
            "clip",
            "-S",
            f"render.seeds={json.dumps(fewer)}",
        )
    judge_cache = ws.root / "cache/judge.sqlite"
    before = sqlite3.connect(judge_cache).execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    ws.run("dvc", "queue", "start", "-j", "2")
    try:
        _queue_done(ws, names)
    finally:
        subprocess.run(
            ["dvc", "queue", "stop", "--kill"], cwd=ws.root, env=ws.env, capture_output=True
        )
    for name in names:
        log = ws.run("dvc", "queue", "logs", name)
        judge_line = next(line for line in log.splitlines() if line.startswith("judge: "))
        assert ", 0 model calls," in judge_line, (
            judge_line
        )  # every answer came from the shared cache
        clip_line = next(line for line in log.splitlines() if line.startswith("clip: "))
        assert "(0 embedded now)" in clip_line, clip_line
    for path in sorted((ws.root / "cache").glob("*.sqlite")):
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", path
    after = sqlite3.connect(judge_cache).execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    assert after == before  # nothing was asked again, nothing lost
    assert not list(
        (ws.root / ".dvc/tmp/exps").glob("*/cache/*.sqlite")
    )  # no private caches in the temp workspaces
