"""Journeys 5 and 6: the Quick start (`make repro`) in a fresh clone, then the README's
Experiments block (a `dvc exp run -S` seed sweep with `dvc metrics diff`) and a sequential run
(docs/experiments.md, "Sequential runs") in that same clone.

The Quick start is CI's fresh-clone reproduction check (what .ci/repro_check does): after
`make repro` the clone's dvc.lock, metrics/, tables/ and plots/ are the committed ones and DVC
printed no warning. The experiments extend the built clone instead of building a second one.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.helpers.journey_recipes import (
    BASELINE,
    METRICS_DIFF,
    PLAN_PAPER,
    QUICK_START,
    SEQUENTIAL,
    THREE_SEEDS,
    TWO_SEEDS,
)
from tests.helpers.journeys import Journey, fresh_clone, link_venv, stages_run

pytestmark = pytest.mark.journey
TRACKED = ("dvc.lock", "metrics", "tables", "plots")


def _row(diff: str, metric: str) -> list[str]:
    """The values after ``metric`` in `dvc metrics diff`'s table (Path, Metric, HEAD, workspace,
    Change)."""
    for line in diff.splitlines():
        words = line.split()
        if metric in words:
            return words[words.index(metric) + 1 :]
    raise AssertionError(f"{metric} not in dvc metrics diff:\n{diff}")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A fresh clone after `make repro` (.venv: the environment in use, nothing installed)."""
    clone = fresh_clone(tmp_path_factory.mktemp("quick-start"))
    link_venv(clone)
    # the symlink is not a directory, so .gitignore's `.venv/` does not hide it from `git add -A`
    with (clone / ".git/info/exclude").open("a") as f:
        f.write(".venv\n")
    journey = Journey("quick_start", clone)
    done = journey.type(QUICK_START, timeout=3600)
    journey.record()
    return clone, done


def test_quick_start(built):
    clone, done = built
    out = done.stdout + done.stderr
    assert "pip install" not in out  # the environment in use: no set-up ran
    ran = stages_run(out)
    # every stage whose outputs DVC caches runs (a clone has none of them); a stage whose outputs
    # are all in git (evaluate, summary) is up to date when its inputs reproduce byte for byte
    assert {"sources", "kg", "triplets", "render", "judge"} <= set(ran), ran
    changed = subprocess.run(
        ["git", "status", "--porcelain", "--", *TRACKED],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert changed == "", f"a fresh `make repro` differs from the committed outputs:\n{changed}"
    assert "warning" not in out.lower(), [ln for ln in out.splitlines() if "warning" in ln.lower()]
    summary = json.loads((clone / "metrics/summary.json").read_text())
    assert summary["n_seeds"] == 3 and summary["images"] > 0


def test_seed_experiments(built):
    clone, _ = built
    journey = Journey("seed_experiments", clone)
    before = json.loads((clone / "metrics/summary.json").read_text())
    base = journey.type(BASELINE, check=False)
    # after a clean `make repro` there is nothing to commit: git says so and exits 1
    assert base.returncode == 0 or "nothing to commit" in base.stdout, base.stdout + base.stderr
    assert stages_run(base.stdout + base.stderr) == []  # dvc repro: every stage up to date
    journey.type(TWO_SEEDS, timeout=3600)
    after = json.loads((clone / "metrics/summary.json").read_text())
    assert after["n_seeds"] == 2
    assert after["images"] < before["images"]
    diff = journey.type(METRICS_DIFF).stdout
    assert _row(diff, "n_seeds")[:3] == ["3", "2", "-1"], diff
    assert _row(diff, "images")[:2] == [str(before["images"]), str(after["images"])], diff
    back = journey.type(THREE_SEEDS, timeout=3600)
    log = back.stdout + back.stderr
    back_to = json.loads((clone / "metrics/summary.json").read_text())
    assert back_to == before  # the committed baseline's headline again
    # "renders nothing, asks no judge": a render or judge stage that runs (DVC may restore it
    # from its run cache instead) takes every image from the store, every answer from the cache
    ran = stages_run(log)
    if "render" in ran:
        rendered = re.findall(r"render \S+: .*?, (\d+) rendered now\)", log)
        assert rendered and set(rendered) == {"0"}, log[-3000:]
    if "judge" in ran:
        calls = re.findall(r"^judge: .*?, (\d+) model calls,", log, re.M)
        assert calls and set(calls) == {"0"}, log[-3000:]
    plan = journey.type(PLAN_PAPER).stdout
    journey.record()
    assert "total model calls" in plan


def test_sequential_run(built):
    """`run --sequential` for real: each round a `dvc exp run` of the first N units of the
    random order, the anytime-valid intervals after it, a stop when every target holds."""
    clone, _ = built
    journey = Journey("sequential_run", clone)
    done = journey.type(SEQUENTIAL, timeout=3600)
    journey.record()
    out = done.stdout + done.stderr
    assert "round: dvc exp run -S subset.max_units=60 evaluate" in out, out[-3000:]
    record = json.loads((clone / "logs/sequential-seq.json").read_text())
    assert record["anytime_valid"] is True and record["settings"]["rounds"] == [60, 120, 240]
    # as docs/experiments.md says: round 1 leaves the bias score wider than 0.3, round 2 stops
    assert [r["units"] for r in record["rounds"]] == [60, 120]
    assert record["stopped"] == {"round": 2, "why": "every target holds"}
    first, last = (r["targets"] for r in record["rounds"])
    assert not first["bias_score/sim_local"]["holds"]
    assert all(t["holds"] for t in last.values()) and "alignment/sim_local" in last
    assert "stopped after round 2 of 3 (every target holds)" in out
