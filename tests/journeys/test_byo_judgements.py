"""Journeys 3 and 4: bring-your-own judgements through `implicit-bench analyze` (the worked
example of docs/byo-judgements.md, typed as written) and two labs' results merged with
`implicit-bench report A B` (README, "Evaluate your model")."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.journey_recipes import BYO, csv_block
from tests.helpers.journeys import Journey, fresh_clone
from tests.helpers.paths import REPO_ROOT

pytestmark = pytest.mark.journey

DOC = REPO_ROOT / "docs/byo-judgements.md"


def _worked_example(folder: Path) -> None:
    """units.csv and judgements.csv exactly as docs/byo-judgements.md prints them."""
    text = DOC.read_text(encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "units.csv").write_text(csv_block(text, "`units.csv`:"), encoding="utf-8")
    (folder / "judgements.csv").write_text(
        csv_block(text, "`judgements.csv` (one judge"), encoding="utf-8"
    )


def _value(metrics: dict, key: str) -> float:
    return round(100 * metrics[key]["value"], 1)


def test_byo_judgements(tmp_path):
    clone = fresh_clone(tmp_path)
    journey = Journey("byo_judgements", clone)
    work = tmp_path / "mine"
    _worked_example(work)
    done = journey.type(BYO, cwd=work)
    journey.record()
    assert "'default_rate': 0.8" in done.stdout
    bench = json.loads((work / "out/metrics/benchmark.json").read_text())
    # the doc's numbers, worked out by hand there
    assert _value(bench, "default_rate") == 80.0
    assert _value(bench, "success_stereotype") == 83.3
    assert _value(bench, "success_anti") == 66.7
    assert _value(bench, "gap") == 16.7
    assert _value(bench, "a_to_s") == 33.3
    assert bench["default_rate"]["n"] == 2
    for rel in (
        "metrics/lean.json",
        "tables/benchmark_summary.md",
        "tables/table21_label_shares.md",
        "tables/table22_success_by_default_strength.md",
    ):
        assert (work / "out" / rel).exists(), rel
    assert not (work / "out/metrics/selection.json").exists()  # no rubric rows


def test_two_labs_merged(tmp_path):
    """Lab A runs the worked example; lab B the same units with its own model, whose neutral
    images lean to the stereotype less; `report A B` puts both on one Leaderboard."""
    clone = fresh_clone(tmp_path)
    journey = Journey("two_labs_report", clone)
    lab_a, lab_b = tmp_path / "lab-a", tmp_path / "lab-b"
    _worked_example(lab_a)
    _worked_example(lab_b)
    j = pd.read_csv(lab_b / "judgements.csv", dtype=str, keep_default_na=False)
    j["config"] = "their-model"
    neutral_s = (j["variant"] == "neutral") & (j["value"] == "s")
    j.loc[neutral_s[neutral_s].index[:2], "value"] = "a"  # m1 42 and 1042 -> a
    j.to_csv(lab_b / "judgements.csv", index=False)
    journey.type(BYO, cwd=lab_a)
    journey.type(BYO, cwd=lab_b)
    done = journey.type("implicit-bench report lab-a/out lab-b/out --out site", cwd=tmp_path)
    journey.record()
    assert "report: lab-a/out, lab-b/out -> site/index.html" in done.stdout, done.stdout
    html = (tmp_path / "site/index.html").read_text(encoding="utf-8")
    assert 'id="leaderboard"' in html
    assert '<th data-sort="my-model">my-model</th>' in html
    assert '<th data-sort="their-model">their-model</th>' in html
    assert '<td data-sort="lab-a/out">lab-a/out</td>' in html
    assert '<td data-sort="lab-b/out">lab-b/out</td>' in html
    b = json.loads((lab_b / "out/metrics/benchmark.json").read_text())
    assert _value(b, "default_rate") == 40.0  # m1 1 + r1 1 of 5 valid
    dr = b["leaderboard"]["rows"][0]["default_rate"]
    assert f'<span class="v">{100 * dr["value"]:.1f}</span>' in html
