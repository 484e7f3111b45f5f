"""The release as a benchmark, end to end without DVC: a fixture in the release's
exact layout -> its units (write_benchmark_units) -> the benchmark phase's stages
(bench_render with a tiny diffusers pipeline built locally, bench_judge with an OpenAI-compatible
judge served by a local server) -> analyze with the release beside -> the report, whose
leaderboard holds the fixture's four Table 4 generators and the new one with paired
differences. `run --benchmark` wires these same steps as DVC stages."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from implicit_bench.analysis.byo.core import run_analyze
from implicit_bench.bench.stage import run_bench_judge, run_bench_render
from implicit_bench.cli.report import report_command
from implicit_bench.planning.overlay import generator_entry, judge_entry
from implicit_bench.release.benchmark import write_benchmark_units
from implicit_bench.release.beside import DIFFERENT_JUDGE, RELEASE, THIS_RUN
from implicit_bench.release.judge_notice import judge_notice
from tests.helpers.chat_server import ChatServer
from tests.helpers.emulated_vlm_server import judge_answer
from tests.helpers.release_fixtures import _eval, write_release

pytestmark = pytest.mark.slow
MODEL = "Qwen/Qwen3-VL-8B-Instruct"


def test_benchmark_phase_on_the_release_fixture_to_the_report(tmp_path):
    from implicit_bench.backends.tiny.generator import build

    root = write_release(tmp_path / "IMPLICIT-Bench")
    # experiment 13 (SD3, Table 4) beside the fixture's 0, 12 and 14: the release's four rows
    (root / "cache/eval_results/exp_13_eval.csv").write_text(
        _eval(13, [("a1", 0, "3"), ("a1", 1, "2"), ("007", 0, "4"), ("007", 1, "1")])
    )
    ws = tmp_path / "ws"
    units_path = ws / "data/raw/benchmark_units.parquet"
    bench = write_benchmark_units(root, units_path)
    name, gen = generator_entry(str(build(tmp_path / "tinysd")), {}, "auto")
    gen.update(device="cpu", threads=1, steps=2, width=32, height=32, batch_size=4)
    with ChatServer(judge_answer, models=[MODEL]) as server:
        judge_name, judge = judge_entry(f"openai:{MODEL}@{server.base_url}", {}, "auto", None)
        raw = {
            "generators": {name: gen},
            "judges": {judge_name: judge},
            "render": {"executor": {"kind": "local"}},
            "judge": {"tasks": {}},
            "bench": {
                "units": str(units_path.relative_to(ws)),
                "seed_index": {42: 0, 1042: 1, 2042: 2},
                "generators": {name: {"variants": ["neutral"], "seeds": [42, 1042, 2042]}},
                "tasks": {
                    "rubric": {"judges": [judge_name], "variants": ["neutral"]},
                    "alignment": {"judges": [judge_name], "variants": ["neutral"]},
                },
            },
        }
        notice = judge_notice({judge_name: judge}, str(root))
        rendered = run_bench_render(raw, ws)
        judged = run_bench_judge(raw, ws)
    assert len(notice) == 1 and notice[0].endswith(DIFFERENT_JUDGE)
    assert rendered[name]["run"]["planned"] == 2 * 3  # 2 units x 3 seeds, neutral: Table 4 row
    frame = judged.frame
    assert set(frame["task"]) == {"rubric", "alignment"} and len(frame) == 2 * 6
    identity = json.loads(frame["judge_identity"].iloc[0])
    assert identity["model"] == MODEL and identity["template_sha256"]

    out = tmp_path / "analysis"
    index = ws / f"data/bench_images/{name}/index.parquet"
    run_analyze(
        str(units_path),
        [str(ws / "data/judgements/bench.parquet")],
        str(out),
        {
            "evaluate": {
                "config": name,
                "rubric_judges": [judge_name],
                "beside_release": str(root),
                "bootstrap": {"n": 50, "seed": 1},
            }
        },
        refusals=(str(index),),
    )
    board = json.loads((out / "metrics/benchmark.json").read_text())["leaderboard"]
    assert board["benchmark_sha256"] == bench.sha256
    beside = board["beside_release"]
    sources = {r["config"]: r["source"] for r in beside["rows"]}
    assert sources == {
        name: THIS_RUN,
        "qwen_image": RELEASE,
        "gpt_image_2": RELEASE,
        "sd3": RELEASE,
        "nano_banana_2": RELEASE,
    }
    new = next(r for r in beside["rows"] if r["config"] == name)
    assert new["requested"] == 6 and new["returned"] + new["refused"] + new["missing"] == 6
    metrics = {(p["b"], p["metric"]) for p in beside["pairs"]}
    assert {(g, "bias_score") for g in ("qwen_image", "sd3", "gpt_image_2", "nano_banana_2")} <= (
        metrics
    )
    assert all(p["note"].startswith(DIFFERENT_JUDGE) for p in beside["pairs"] if p["note"])

    site = tmp_path / "site"
    result = CliRunner().invoke(report_command, [str(out), "--out", str(site)])
    assert result.exit_code == 0, result.output
    html = (site / "index.html").read_text()
    assert "Beside the paper" in html and html.count("authors&#x27; release") >= 4
    table = pd.read_csv(out / "tables/leaderboard_beside_release_pairs.csv")
    assert len(table) == len(beside["pairs"]) and table["p_holm"].notna().all()
