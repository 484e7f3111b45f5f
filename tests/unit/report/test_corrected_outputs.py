"""benchmark.json's ``corrected`` block (a real run's calibration table) in metrics/summary.json
and the report's summary page, with the hand-worked values of tests/e2e/test_calibration_real.py:
M = [[0.8, 0.2, 0], [0, 1, 0], [0, 0, 1]]; judged neutral s 6/11, stereotype s 9/12, anti a 7/12
and s 4/12, so corrected default rate (6/11)/0.8 = 15/22, success of stereotype prompts
(9/12)/0.8 = 0.9375, success of anti-stereotype prompts 7/12 - 0.2 (4/12)/0.8 = 1/2, gap
0.4375, a->s (4/12)/0.8 = 5/12."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from implicit_bench._util.files import read_json, write_json
from implicit_bench.protocol.benchmark_file import BenchmarkFile
from implicit_bench.protocol.summary_file import SummaryFile
from implicit_bench.report.corrected import corrected_section
from implicit_bench.report.params import ReportParams
from implicit_bench.report.stage import build_report
from implicit_bench.report.summary.stage import (
    BENCHMARK_SOURCE,
    CORRECTED_GROUP,
    headline,
    load_detail_metrics,
)
from tests.helpers.calibration_fixtures import (
    LABELLED,
    calibration_inputs,
    calibration_table,
    run_evaluate,
)
from tests.helpers.chromium import Chromium, require_chromium
from tests.helpers.paths import REPO_ROOT
from tests.helpers.synthetic_project import build_synthetic_project


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The evaluate stage on the hand-made run, with the calibration table
    ("on") and without ("off")."""
    out = {}
    for name, labelled in (("on", LABELLED), ("off", None)):
        d = tmp_path_factory.mktemp(name)
        calibration_inputs(d)
        if labelled:
            calibration_table(labelled).to_csv(d / "calibration.csv", index=False)
        proc = run_evaluate(d)
        assert proc.returncode == 0, proc.stderr
        out[name] = d
    return out


def _summary(d) -> dict:
    env_python = [
        sys.executable,
        str(REPO_ROOT / "stages" / "summary.py"),
        "--metrics-dir",
        "metrics",
        "--out",
        "metrics/summary.json",
    ]
    proc = subprocess.run(
        env_python,
        cwd=d,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO_ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    SummaryFile.read(d / "metrics/summary.json")  # the written file keeps its contract
    return read_json(d / "metrics/summary.json")


def test_summary_shows_the_benchmark_corrected_block(runs):
    s = _summary(runs["on"])
    assert s["corrected_source"] == BENCHMARK_SOURCE
    assert s["default_rate_pct"] == 54.55  # judged 6/11
    assert s["default_rate_corrected_pct"] == 68.18  # 15/22
    assert s["success_stereotype_corrected_pct"] == 93.75
    assert s["success_anti_corrected_pct"] == 50.0
    assert s["gap_corrected_pct"] == 43.75
    assert s["gap_corrected_pct_lo"] <= 43.75 <= s["gap_corrected_pct_hi"]
    assert (s["corrected_calibration_items"], s["corrected_warning"]) == (9, None)
    assert s["corrected_condition_number"] == pytest.approx(1.3702, abs=1e-4)  # 2-norm cond of M


def test_benchmark_block_takes_precedence_over_recovery(runs):
    metrics = load_detail_metrics(runs["on"] / "metrics")
    est = {"value": 0.1, "ci": [0.05, 0.15], "n": 4, "level": 0.95}
    metrics["recovery"] = {
        "estimands": [
            {"group": CORRECTED_GROUP, "estimand": "default_rate (corrected)", "estimate": est}
        ]
    }
    s = headline(metrics)
    assert s["default_rate_corrected_pct"] == 68.18 and s["corrected_source"] == BENCHMARK_SOURCE
    del metrics["benchmark"][
        "corrected"
    ]  # no calibration table: recovery's (simulated) figures, no new key
    s = headline(metrics)
    assert s["default_rate_corrected_pct"] == 10.0 and "corrected_source" not in s


def test_summary_without_calibration_table_is_unchanged(runs):
    s = _summary(runs["off"])
    assert list(s) == list(headline({})) and not any(
        k.startswith("corrected_") for k in s
    )  # same keys, same order
    assert s["default_rate_corrected_pct"] is None and s["default_rate_pct"] == 54.55


def test_unusable_matrix_gives_warning_and_nulls_in_summary(runs):
    metrics = load_detail_metrics(runs["on"] / "metrics")
    block = metrics["benchmark"]["corrected"]
    block["warning"] = (
        "no calibration image shows a: the misclassification matrix is not identified"
    )
    block["all"] = {
        k: {"value": None, "ci": None, "n": 4, "level": 0.95}
        for k in block["all"]
        if k != "warning"
    }
    s = headline(metrics)
    assert s["corrected_warning"] == block["warning"] and s["gap_corrected_pct"] is None


def test_report_section_hand_checked(runs):
    html = corrected_section(BenchmarkFile.read(runs["on"] / "metrics/benchmark.json"))
    assert (
        'id="corrected"' in html
        and "calibration.csv" in html
        and 'id="corrected-warning"' not in html
    )
    assert (
        '<span id="calibration-items">9</span>' in html
        and "human 9" in html
        and "judge invalid 1" in html
    )
    assert (
        corrected_section(BenchmarkFile.read(runs["off"] / "metrics/benchmark.json")) == ""
    )  # page unchanged
    assert corrected_section(None) == ""


@pytest.fixture(scope="module")
def site(runs, tmp_path_factory):
    binary = require_chromium()
    if binary is None:
        pytest.skip(
            "chromium not installed (apt-get install chromium); CI sets IB_REQUIRE_CHROMIUM=1"
        )
    root = tmp_path_factory.mktemp("site")
    build_synthetic_project(root, n_units=6, image_size=16)
    build_report(ReportParams(units_per_page=10, chunk_size=8), root)
    before = (root / "report/index.html").read_bytes()
    bench = read_json(root / "metrics/benchmark.json")
    real = read_json(runs["on"] / "metrics/benchmark.json")
    write_json(
        root / "metrics/benchmark.json",
        {**bench, "judges": real["judges"], "corrected": real["corrected"]},
    )
    shutil.rmtree(root / "report")
    build_report(ReportParams(units_per_page=10, chunk_size=8), root)
    with Chromium(binary, height=1000) as browser:
        yield root, before, browser


def test_report_shows_corrected_beside_judged_in_chromium(site):
    root, before, browser = site
    assert b'id="corrected"' not in before  # no block: no section
    browser.navigate(root / "report/index.html", wait_for="document.readyState === 'complete'")
    cells = browser.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#corrected tr[data-rate]')).map("
        "r => [r.dataset.rate, Array.from(r.querySelectorAll('td .v')).map(v => v.textContent)]))"
    )
    assert cells["default_rate"] == ["54.5%", "68.2%"]  # 6/11 judged, 15/22 corrected
    assert cells["success_anti"] == ["58.3%", "50.0%"]  # 7/12, 1/2
    assert cells["a_to_s"] == ["33.3%", "41.7%"]  # 4/12, 5/12
    assert browser.evaluate("document.getElementById('calibration-items').textContent") == "9"
    assert "benchmark.json" in browser.evaluate(
        "document.getElementById('corrected-source').textContent"
    )
    assert (
        browser.evaluate("document.getElementById('corrected').getBoundingClientRect().height") > 0
    )
    assert browser.evaluate("document.getElementById('corrected-warning') === null") is True
