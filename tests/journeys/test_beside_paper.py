"""Journey 1: your model beside the paper's. A release in the authors' exact layout with all
1,831 units (tests/helpers/release_fixtures.py: generated prompts, SIMULATED Table 4 scores)
stands at ``REL`` in a fresh clone; the docs' commands (docs/experiments.md, "Put your model
beside the paper's") run a 100-unit pilot of it on the simulated generator and judge, grow it
to 200 units, and open the report in headless Chromium."""

from __future__ import annotations

import ast
import json
import re

import pytest

from tests.helpers.chromium import Chromium, require_chromium
from tests.helpers.journey_recipes import PILOT_100, PILOT_200
from tests.helpers.journeys import Journey, fresh_clone, stages_run
from tests.helpers.release_fixtures import RELEASE_UNITS, write_table4_release

pytestmark = pytest.mark.journey

RELEASE_GENERATORS = ["qwen_image", "gpt_image_2", "sd3", "nano_banana_2"]
BENCHMARK_PHASE = {"models", "world", "bench_render", "bench_judge", "evaluate"}
RENDERED = re.compile(r"bench_render \S+: (\{.*?\}) of (\d+) planned items \((\d+) reused")


def _rendered(log: str) -> tuple[dict[str, int], int, int]:
    """(status counts, planned, reused from the store) of the bench_render line."""
    m = RENDERED.search(log)
    assert m is not None, log[-3000:]
    return ast.literal_eval(m.group(1)), int(m.group(2)), int(m.group(3))


def _beside(clone) -> list[tuple[str, str]]:
    board = json.loads((clone / "metrics/benchmark.json").read_text())["leaderboard"]
    return [(r["source"], r["config"]) for r in board["beside_release"]["rows"]]


def test_beside_the_paper(tmp_path):
    clone = fresh_clone(tmp_path)
    write_table4_release(tmp_path / "IMPLICIT-Bench")
    (clone / "REL").symlink_to(tmp_path / "IMPLICIT-Bench", target_is_directory=True)
    with (clone / ".git/info/exclude").open("a") as f:
        f.write("REL\n")  # the user's copy of the release, outside the repository's history
    journey = Journey("beside_the_paper", clone)

    first = journey.type(PILOT_100, timeout=3600)
    log = first.stdout + first.stderr
    ran = stages_run(log)
    assert set(ran) == BENCHMARK_PHASE, ran  # no construction, debiasing or audit stage
    assert "construction and selection skipped" in log
    assert f"a pilot of {RELEASE_UNITS:,} units" in log
    counts, planned, reused = _rendered(log)
    assert (planned, reused) == (300, 0)  # 100 units x 3 seeds, neutral prompts only
    made = counts["ok"] + counts["refused"]
    assert counts["failed"] == 0
    rows = _beside(clone)
    assert rows == [("this run", "sim_api-bench")] + [
        ("authors' release", g) for g in RELEASE_GENERATORS
    ]
    board = json.loads((clone / "metrics/benchmark.json").read_text())["leaderboard"]
    beside = board["beside_release"]
    assert beside["benchmark"]["units"] == RELEASE_UNITS
    assert beside["benchmark"]["units_compared"] == 100
    ours = beside["rows"][0]
    assert ours["requested"] == 300 and 0 <= ours["bias_score"]["value"] <= 5
    assert ours["n_units"] == 100

    assert (clone / "site-pilot/index.html").is_file()  # --report: the run's own report
    assert (clone / "runs/pilot/metrics/benchmark.json").is_file()  # and its outputs

    # grow the pilot: a second run starts from the default profile by itself
    grown = journey.type(PILOT_200, timeout=3600)
    log = grown.stdout + grown.stderr
    assert set(stages_run(log)) <= BENCHMARK_PHASE, stages_run(log)
    counts, planned, reused = _rendered(log)
    assert (planned, reused) == (600, made)  # only the 100 added units' images are rendered
    assert (
        json.loads((clone / "metrics/benchmark.json").read_text())["leaderboard"]["beside_release"][
            "benchmark"
        ]["units_compared"]
        == 200
    )

    journey.record()
    site = clone / "site-pilot200"
    html = (site / "index.html").read_text(encoding="utf-8")
    assert 'id="leaderboard-beside"' in html
    binary = require_chromium()
    if binary is None:
        pytest.skip("chromium not installed (apt-get install chromium); CI sets it required")
    with Chromium(binary) as browser:
        browser.navigate(site / "index.html", wait_for="document.readyState == 'complete'")
        shown = browser.evaluate(
            "JSON.stringify(Array.from(document.querySelectorAll("
            "'#leaderboard-beside tbody tr')).map(r => Array.from(r.cells).slice(0, 2)"
            ".map(c => c.textContent.trim())))"
        )
    shown = json.loads(shown)
    generators = [g for _, g in shown]
    assert generators[0] == "sim_api-bench" and generators[1:] == RELEASE_GENERATORS, shown
    assert all("release" in source for source, _ in shown[1:]), shown
    assert "every row on this run's 200 of them (a pilot)" in html
    assert 'id="headline-none"' in html  # a Table 4 row: no blind question, said so
