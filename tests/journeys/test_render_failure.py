"""Journey 2: every render fails. The user points ``--generator`` at a local model directory
that is not a usable diffusers pipeline (a download that stopped after ``model_index.json``:
the preflight sees a directory, the pipeline cannot load). The run must stop with a non-zero
exit and the first reason, and DVC must record nothing of the failed stage."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tests.helpers.journey_recipes import BROKEN_MODEL
from tests.helpers.journeys import Journey, fresh_clone, stages_run
from tests.helpers.release_fixtures import write_table4_release

pytestmark = pytest.mark.journey


def test_every_render_failing_stops_with_the_first_reason(tmp_path):
    clone = fresh_clone(tmp_path)
    write_table4_release(tmp_path / "IMPLICIT-Bench")
    (clone / "REL").symlink_to(tmp_path / "IMPLICIT-Bench", target_is_directory=True)
    model = clone / "my-model"
    model.mkdir()
    (model / "model_index.json").write_text(
        json.dumps({"_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.30.0"})
    )
    with (clone / ".git/info/exclude").open("a") as f:
        f.write("REL\nmy-model\n")
    committed = yaml.safe_load((clone / "dvc.lock").read_text())["stages"]["bench_render"]
    journey = Journey("render_failure", clone)
    done = journey.type(BROKEN_MODEL, check=False, timeout=3600)
    journey.record()
    log = done.stdout + done.stderr
    assert done.returncode != 0, log[-3000:]
    assert "bench_render" in stages_run(log)
    # the stage's one-line reason (the pipeline cannot load: every render fails), then DVC's
    reason = [ln for ln in log.splitlines() if ln.startswith("Error: ")]
    assert reason and "expected [" in reason[0], log[-3000:]
    assert "ERROR: failed to reproduce 'bench_render'" in log
    assert "evaluate" not in stages_run(log)
    # DVC recorded nothing of the failed stage: its lock entry is the committed one, no metrics
    # of this run, and no experiment named `broken`
    now = yaml.safe_load((clone / "dvc.lock").read_text())["stages"]["bench_render"]
    assert now == committed
    metrics = clone / "metrics/bench_render.json"
    assert not metrics.exists() or "my-model" not in metrics.read_text()
    refs = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname)", "refs/exps"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "/broken" not in refs, refs
