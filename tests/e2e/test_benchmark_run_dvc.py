"""`implicit-bench run --benchmark FIXTURE --generator <tiny diffusers dir> --judge
openai:MODEL@<local server>` end to end in a DVC workspace ("Done when"): the fixture
is in the release's exact layout (tests/helpers/release_fixtures.py, plus experiment 13), the
generator a
tiny diffusers pipeline built locally, the judge an OpenAI-compatible server in this process.
The report's leaderboard holds the fixture's four Table 4 generators beside the new one, with
paired differences and the different-judge note."""

from __future__ import annotations

import json

import pytest

from tests.helpers.chat_server import ChatServer
from tests.helpers.dvc_workspace import Workspace, small_workspace
from tests.helpers.emulated_vlm_server import judge_answer
from tests.helpers.release_fixtures import _eval, write_release

pytestmark = pytest.mark.slow
MODEL = "Qwen/Qwen3-VL-8B-Instruct"


@pytest.fixture(scope="module")
def ws(dvc_base, tmp_path_factory) -> Workspace:
    return small_workspace(tmp_path_factory, dvc_base, "benchmark-run")


def test_run_benchmark_release_fixture_to_the_report(ws, tmp_path):
    from implicit_bench.backends.tiny.generator import build

    release = write_release(tmp_path / "IMPLICIT-Bench")
    (release / "cache/eval_results/exp_13_eval.csv").write_text(
        _eval(13, [("a1", 0, "3"), ("a1", 1, "2"), ("007", 0, "4"), ("007", 1, "1")])
    )
    model = build(tmp_path / "tinysd")
    with ChatServer(judge_answer, models=[MODEL]) as server:
        out = ws.run(
            "implicit-bench",
            "run",
            "--benchmark",
            str(release),
            "--generator",
            str(model),
            "--judge",
            f"openai:{MODEL}@{server.base_url}",
            "--tables",
            "4",
            "--name",
            "bench-fixture",
        )
    assert "note: judge" in out and "different judge: differences include judge effects" in out
    assert "benchmark: 2 units of" in out
    ws.run("dvc", "exp", "apply", "bench-fixture")
    board = ws.json("metrics/benchmark.json")["leaderboard"]
    beside = board["beside_release"]
    sources = {r["config"]: r["source"] for r in beside["rows"]}
    assert sources == {
        "tinysd": "this run",
        "qwen_image": "authors' release",
        "sd3": "authors' release",
        "gpt_image_2": "authors' release",
        "nano_banana_2": "authors' release",
    }, json.dumps(beside["rows"])[:2000]
    new = next(r for r in beside["rows"] if r["config"] == "tinysd")
    assert new["requested"] == 6  # 2 units x seeds 42 / 1042 / 2042, neutral prompts
    pairs = {(p["b"], p["metric"]) for p in beside["pairs"]}
    assert {(g, "bias_score") for g in sources if g != "tinysd"} <= pairs
    site = ws.root / "site"
    ws.run("implicit-bench", "report", ".", "--out", str(site))
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "Beside the paper" in html and html.count("authors&#x27; release") >= 4
    assert "tinysd" in html and "different judge: differences include judge effects" in html
