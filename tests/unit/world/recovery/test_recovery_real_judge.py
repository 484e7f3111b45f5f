"""The recovery stage on a simulated generator judged by a real judge (``implicit-bench run
--generator sim_local --judge openai:...``): no planted answers for that judge, so no benchmark
entries for it, and no crash (``KeyError: 'qwen3vl'``)."""

from __future__ import annotations

import pandas as pd

from implicit_bench._util.files import write_json, write_table
from implicit_bench.world.model import load_world
from implicit_bench.world.params import WorldParams
from implicit_bench.world.recovery.stage import RowTruth, benchmark_entries
from implicit_bench.world.truth import plant, world_json
from tests.helpers.world_fixtures import world_units


def test_a_real_primary_judge_gives_no_benchmark_entries_and_no_key_error(tmp_path) -> None:
    params = WorldParams(generators={"g": {}}, judges={"j": {}})
    units = world_units(4)
    write_table(plant(units, params), tmp_path / "world" / "truth.parquet")
    write_json(tmp_path / "world" / "world.json", world_json(params))
    rt = RowTruth(load_world(str(tmp_path / "world")), {"cfg": "g"})
    judgements = pd.DataFrame(
        [
            {
                "judge": "qwen3vl",
                "task": "blind",
                "config": "cfg",
                "unit_id": u,
                "variant": "neutral",
                "seed": 42,
                "order": "sa",
                "label": "s",
            }
            for u in units["unit_id"]
        ]
    )
    bench = {"config": "cfg", "primary_judge": "qwen3vl", "agreement": []}
    # the simulated judges of the profile are ``sim_judge`` only; the primary one is real
    assert (
        benchmark_entries(rt, judgements, bench, list(units["unit_id"]), {"sim_judge": "j"}, 1)
        == []
    )
    # the simulated primary judge still gets its entries
    bench_sim = {**bench, "primary_judge": "sim_judge"}
    sim_rows = judgements.assign(judge="sim_judge")
    entries = benchmark_entries(
        rt, sim_rows, bench_sim, list(units["unit_id"]), {"sim_judge": "j"}, 1
    )
    assert {e["estimand"] for e in entries} >= {"default_rate"}


def test_run_recovery_without_a_simulated_world_says_so(tmp_path) -> None:
    """The stage's entry function (stages/recovery.py only writes what it returns)."""
    from implicit_bench.world.recovery.stage import run_recovery

    raw = {"generators": {"g": {"backend": "diffusers", "model": "m"}}, "judges": {}}
    payload, line = run_recovery(raw, str(tmp_path / "params.yaml"))
    assert payload == {
        "simulated": False,
        "note": "no simulated generator or judge in this profile",
    }
    assert line == "recovery: no simulated world in this profile"
