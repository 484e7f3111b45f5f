"""`implicit-bench run --generator NEW` on the default profile: the benchmark phase only.

A private copy of the small baseline (tests/helpers/dvc_workspace.py); a profile adds one simulated
generator, `sim_new`, that construction never renders. `run --generator sim_new` must plan and
run no construction render for it: its images are the benchmark phase's, on the committed
selection's units only (data/bench_images/sim_new), judged by bench_judge, and evaluate analyses
them.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.helpers.dvc_workspace import Workspace, small_workspace

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ws(dvc_base, tmp_path_factory) -> Workspace:
    return small_workspace(tmp_path_factory, dvc_base, "bench-phase")


def test_run_generator_renders_the_benchmark_phase_only(ws):
    (ws.root / "profiles/newgen.yaml").write_text(
        "# a generator construction does not render\n"
        "generators:\n  sim_new: {backend: sim, model: 'sim:sim_api', batch_size: 32}\n",
        encoding="utf-8",
    )
    ws.run("git", "add", "-A")
    ws.run("git", "commit", "-qm", "profile newgen")
    selected = set(ws.table("data/processed/selected_units.parquet")["unit_id"].astype(str))
    candidates = set(ws.table("data/interim/units.parquet")["unit_id"].astype(str))
    assert selected and selected < candidates  # the fixed unit set is smaller than construction's
    images_before = ws.lock_md5()["data/images"]

    out = ws.run(
        "implicit-bench",
        "run",
        "--profile",
        "newgen",
        "--generator",
        "sim_new",
        "--judge",
        "qwen3vl",
        "--judge",
        "gpt54",
        "--no-preflight",
    )
    lines = out.splitlines()
    plan_rows = [line for line in lines if re.match(r"^\S+( \S+)?\s+(image|judge answer)\s", line)]
    assert not any(line.startswith("render sim_new ") for line in plan_rows), out
    bench = next(line for line in lines if line.startswith("bench_render sim_new"))
    assert bench.split()[3] == f"{len(selected) * 3 * 3:,}", bench  # units x 3 variants x 3 seeds

    # construction rendered nothing for sim_new: no store, the same data/images
    assert not (ws.root / "data/images/sim_new").exists()
    assert set(ws.json("metrics/render.json")["configs"]) == {"sim_local", "sim_api"}
    assert ws.lock_md5()["data/images"] == images_before
    index = pd.read_parquet(ws.root / "data/bench_images/sim_new/index.parquet")
    assert set(index["unit_id"].astype(str)) == selected
    assert sorted(index["variant"].unique()) == ["anti_stereotype", "neutral", "stereotype"]
    assert len(index) == len(selected) * 9
    judged = ws.table("data/judgements/bench.parquet")
    assert set(judged["config"]) == {"sim_new"} and set(judged["unit_id"]) <= selected
    assert set(judged["task"]) == {"rubric", "blind", "alignment"}
    # the blind judges asked one order (hash) per image: 2 judges x every image
    blind = judged[judged["task"] == "blind"]
    assert len(blind) == 2 * len(index[index["status"] == "ok"])
    assert ws.json("metrics/benchmark.json")["config"] == "sim_new"
    table4 = pd.read_csv(ws.root / "tables/table04_generators.csv")
    assert "sim_new" in set(table4["config"])
