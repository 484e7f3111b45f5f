"""``implicit-bench report DIR [DIR...]``: the report of an analyze output, its Leaderboard
section (paired differences, resolved mark, source and SIMULATED labels), sorted in Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from implicit_bench.cli.main import main as cli_main  # noqa: E402
from implicit_bench.report.leaderboard import Run, leaderboard_section  # noqa: E402
from tests.helpers.chromium import Chromium, require_chromium  # noqa: E402
from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units  # noqa: E402


@pytest.fixture(scope="module")
def two_generators(tmp_path_factory) -> Path:
    """An analyze output of two generators; genB's neutral images lean to the stereotype more."""
    root = tmp_path_factory.mktemp("byo")
    u = synthetic_units(40)
    base = synthetic_judgements(u, tasks=("blind", "rubric"), judges=("judge-a",), seed=3)
    j = pd.concat([base.assign(config="genA"), base.assign(config="genB")], ignore_index=True)
    flip = j.index[
        (j["config"] == "genB")
        & (j["task"] == "blind")
        & (j["variant"] == "neutral")
        & (j["value"] != "s")
    ]
    j.loc[flip[::2], "value"] = "s"
    u.to_csv(root / "u.csv", index=False)
    j.to_csv(root / "j.csv", index=False)
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(root / "u.csv"),
            "--judgements",
            str(root / "j.csv"),
            "--out",
            str(root / "run"),
            "--config",
            "genA",
            "--bootstrap-n",
            "1000",
        ],
    )
    assert res.exit_code == 0, res.output
    return root


def test_report_of_an_analyze_output_with_a_second_run(two_generators, tmp_path):
    root = two_generators
    site = tmp_path / "site"
    res = CliRunner().invoke(
        cli_main,
        [
            "report",
            str(root / "run"),
            str(root / "run"),
            "--label",
            "mine",
            "--label",
            "again",
            "--units",
            str(root / "u.csv"),
            "--out",
            str(site),
        ],
    )
    assert res.exit_code == 0, res.output
    html = (site / "index.html").read_text(encoding="utf-8")
    board = json.loads((root / "run/metrics/benchmark.json").read_text())["leaderboard"]
    assert (
        'id="leaderboard"' in html and html.count('<th data-sort="genA">genA</th>') == 2
    )  # one row per source
    assert '<td data-sort="again">again</td>' in html and '<td data-sort="mine">mine</td>' in html
    resolved = [p for p in board["pairs"] if p["resolved"]]
    assert [p["metric"] for p in resolved] == ["default_rate"]
    assert html.count('class="resolved">resolved</td>') == 2  # the pairs table of each source
    dr = board["rows"][0]["default_rate"]
    assert (
        f'<span class="v">{100 * dr["value"]:.1f}</span> '
        f'<span class="ci">[{100 * dr["ci"][0]:.1f}, {100 * dr["ci"][1]:.1f}]' in html
    )
    assert (site / "assets/sort.js").exists() and '<script src="assets/sort.js">' in html
    assert "40 units in the browser" in res.output


def test_report_rejects_a_directory_without_a_benchmark(tmp_path):
    res = CliRunner().invoke(cli_main, ["report", str(tmp_path), "--out", str(tmp_path / "site")])
    assert (
        res.exit_code != 0 and "metrics/benchmark.json" in res.output and "not found" in res.output
    )


def test_simulated_and_release_rows_are_labelled():
    row = {
        "config": "sim_api",
        "n_units": 3,
        "default_rate": {"value": 0.5, "ci": [0.4, 0.6], "n": 3, "level": 0.95},
    }
    release = {
        "config": "sd3",
        "n_units": 2,
        "default_rate": None,
        "bias_score": {"value": 3.0, "ci": None, "n": 2, "level": 0.95},
    }
    html = leaderboard_section(
        [
            Run("this run", {"leaderboard": {"rows": [row], "pairs": []}}, simulated=True),
            Run("IMPLICIT-Bench release", {"leaderboard": {"rows": [release], "pairs": []}}),
        ]
    )
    assert 'this run <span class="sim">SIMULATED</span>' in html
    assert ">IMPLICIT-Bench release</td><th" in html and "release <span" not in html
    assert (
        '<td data-sort="3"><span class="v">3.00</span></td>' in html
    )  # bias score: 0-5 points, no interval
    assert "not available" in leaderboard_section([Run("x", {})])


@pytest.mark.slow
def test_leaderboard_sorts_in_chromium(two_generators, tmp_path):
    binary = require_chromium()
    if binary is None:
        pytest.skip(
            "chromium not installed (apt-get install chromium); CI sets IB_REQUIRE_CHROMIUM=1"
        )
    root = two_generators
    site = tmp_path / "site"
    assert (
        CliRunner().invoke(cli_main, ["report", str(root / "run"), "--out", str(site)]).exit_code
        == 0
    )
    order = (
        "Array.from(document.querySelectorAll('#leaderboard tbody "
        "tr')).map(r => r.cells[1].textContent)"
    )
    with Chromium(binary) as browser:
        browser.navigate(site / "index.html")
        browser.wait_for("document.querySelector('#leaderboard th.sort') !== null")
        assert browser.evaluate(order) == ["genA", "genB"]
        header = (
            "Array.from(document.querySelectorAll('#leaderboard thead th'))"
            ".find(th => th.textContent.startsWith('default rate'))"
        )
        browser.evaluate(f"{header}.click()")  # ascending: genA's lower default rate first
        assert browser.evaluate(order) == ["genA", "genB"]
        browser.evaluate(f"{header}.click()")  # descending
        assert browser.evaluate(order) == ["genB", "genA"]
        assert browser.evaluate(f"{header}.getAttribute('data-dir')") == "desc"
        assert not [m for m in browser.console if m.startswith("EXCEPTION")], browser.console
