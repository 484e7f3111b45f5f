"""``implicit-bench diff`` / ``exps``: changes with intervals and verdicts, by
hand, in a git repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from implicit_bench.cli.main import main as cli_main
from implicit_bench.report.compare.diff import diff_summaries, verdict


def test_verdict_by_hand():
    # se = 20 / (2 x 1.96) = 5.10 per side; sqrt(2) x 5.10 = 7.22; 20 / 7.22 = 2.77 > 1.96
    v, z = verdict(50.0, (40, 60), 70.0, (60, 80))
    assert v == "beyond noise" and z == pytest.approx(20 / (2**0.5 * 20 / (2 * 1.959964)), rel=1e-4)
    assert verdict(50.0, (40, 60), 55.0, (45, 65))[0] == "within noise"  # 5 / 7.22 = 0.69
    assert verdict(50.0, (40, 60), 50.0, (41, 61))[0] == "unchanged"
    assert verdict(50.0, (None, None), 51.0, (41, 61))[0] == "no interval"
    assert verdict(None, (None, None), 51.0, (41, 61))[0] == "undefined"


def test_degenerate_intervals_get_no_verdict():
    """lo == hi on either side: every resample gave one value, no standard error; the change
    50 [50, 50] -> 50.5 [50.5, 50.5] was called "beyond noise" (z = inf)."""
    assert verdict(50.0, (50, 50), 50.5, (50.5, 50.5)) == ("degenerate interval", None)
    assert verdict(50.0, (50, 50), 60.0, (55, 65)) == ("degenerate interval", None)
    assert verdict(50.0, (40, 60), 70.0, (70, 70)) == ("degenerate interval", None)
    assert verdict(50.0, (50, 50), 50.0, (50, 50))[0] == "unchanged"
    a = {"x": 50.0, "x_lo": 50.0, "x_hi": 50.0}
    b = {"x": 50.5, "x_lo": 50.5, "x_hi": 50.5}
    (row,) = diff_summaries(a, b)
    assert row["verdict"] == "degenerate interval" and row["z"] is None and row["change"] == 0.5


def test_diff_rows_list_interval_metrics_and_changed_values():
    a = {
        "gap_pct": 30.0,
        "gap_pct_lo": 25.0,
        "gap_pct_hi": 35.0,
        "images": 120,
        "n_seeds": 3,
        "simulated": True,
    }
    b = {
        "gap_pct": 10.0,
        "gap_pct_lo": 5.0,
        "gap_pct_hi": 15.0,
        "images": 80,
        "n_seeds": 3,
        "simulated": True,
    }
    rows = {r["metric"]: r for r in diff_summaries(a, b)}
    assert set(rows) == {
        "gap_pct",
        "images",
    }  # unchanged plain values are left out, bounds folded in
    assert (
        rows["gap_pct"]["a_ci"] == [25.0, 35.0]
        and rows["gap_pct"]["change"] == -20.0
        and rows["gap_pct"]["verdict"] == "beyond noise"
    )
    assert rows["images"]["verdict"] == "no interval" and rows["images"]["change"] == -40
    assert "n_seeds" in {r["metric"] for r in diff_summaries(a, b, everything=True)}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _commit(root: Path, summary: dict, params: str, message: str) -> None:
    (root / "metrics").mkdir(exist_ok=True)
    (root / "metrics/summary.json").write_text(json.dumps(summary))
    (root / "params.yaml").write_text(params)
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)


def test_diff_and_exps_commands_on_revisions_and_an_experiment_ref(tmp_path):
    _git(tmp_path, "init", "-q")
    base = {
        "default_rate_pct": 50.0,
        "default_rate_pct_lo": 40.0,
        "default_rate_pct_hi": 60.0,
        "gap_pct": 30.0,
        "gap_pct_lo": 20.0,
        "gap_pct_hi": 40.0,
        "simulated": True,
    }
    _commit(tmp_path, base, "debias:\n  alpha: 0.5\n", "baseline")
    exp = {
        **base,
        "default_rate_pct": 70.0,
        "default_rate_pct_lo": 60.0,
        "default_rate_pct_hi": 80.0,
        "gap_pct": 33.0,
    }
    _commit(tmp_path, exp, "debias:\n  alpha: 1\n", "alpha 1")
    # a DVC experiment is a ref under refs/exps/<2>/<38>/<name>
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True
    ).stdout.strip()
    _git(tmp_path, "update-ref", f"refs/exps/{sha[:2]}/{sha[2:]}/alpha-one", sha)
    _git(tmp_path, "reset", "-q", "--hard", "HEAD~1")
    res = CliRunner().invoke(cli_main, ["diff", "HEAD", "alpha-one", "--repo", str(tmp_path)])
    assert res.exit_code == 0, res.output
    lines = {line.split()[0]: line for line in res.output.splitlines() if line.strip()}
    assert "50 [40, 60]" in lines["default_rate_pct"] and "70 [60, 80]" in lines["default_rate_pct"]
    assert lines["default_rate_pct"].endswith("beyond noise") and "+20" in lines["default_rate_pct"]
    assert lines["gap_pct"].endswith("within noise") and "SIMULATED" in res.output
    res = CliRunner().invoke(cli_main, ["exps", "--repo", str(tmp_path)])
    assert res.exit_code == 0, res.output
    row = next(line for line in res.output.splitlines() if line.startswith("alpha-one"))
    assert "debias.alpha=1" in row and "70 [60, 80]" in row
    bad = CliRunner().invoke(cli_main, ["diff", "HEAD", "nope", "--repo", str(tmp_path)])
    assert bad.exit_code != 0 and "nope: not a git revision nor a DVC experiment" in bad.output


def test_detail_file_estimates_are_diffed(tmp_path):
    _git(tmp_path, "init", "-q")
    base = {"gap_pct": 30.0, "gap_pct_lo": 20.0, "gap_pct_hi": 40.0}
    for alpha, ds, ci in ((2.0, 12.5, [9.0, 16.0]), (1.0, 9.0, [5.5, 13.0])):
        (tmp_path / "metrics").mkdir(exist_ok=True)
        (tmp_path / "metrics/debias.json").write_text(
            json.dumps(
                {
                    "alpha": alpha,
                    "configs": {
                        "sv_own": {
                            "bias": 2.0,
                            "dS": {"value": ds, "ci": ci, "n": 60, "level": 0.95},
                        },
                        "rewrite": {"dS": {"value": 4.0, "ci": [1.0, 7.0], "n": 60, "level": 0.95}},
                    },
                }
            )
        )
        _commit(tmp_path, base, f"debias:\n  alpha: {alpha}\n", f"alpha {alpha}")
    res = CliRunner().invoke(
        cli_main,
        ["diff", "HEAD~1", "HEAD", "--repo", str(tmp_path), "--detail", "metrics/debias.json"],
    )
    assert res.exit_code == 0, res.output
    line = next(
        row for row in res.output.splitlines() if row.startswith("debias.json:configs.sv_own.dS")
    )
    # se = (7 / 3.92, 7.5 / 3.92): sqrt = 2.62; |9 - 12.5| = 3.5 < 1.96 x 2.62 = 5.13
    assert (
        "12.5 [9, 16]" in line
        and "9 [5.5, 13]" in line
        and "-3.5" in line
        and line.endswith("within noise")
    )
    assert "configs.rewrite.dS" not in res.output  # unchanged estimates are left out


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not json{", "not JSON"),
        ("[1, 2]", "not a JSON object (list)"),
        (b"\xff\xfe", "not UTF-8 text"),
    ],
)
def test_diff_with_a_broken_summary_is_one_line_naming_the_file(tmp_path, content, reason):
    _git(tmp_path, "init", "-q")
    _commit(tmp_path, {"gap_pct": 1.0}, "a: 1\n", "base")
    file = tmp_path / "metrics/summary.json"
    file.write_bytes(content if isinstance(content, bytes) else content.encode())
    res = CliRunner().invoke(cli_main, ["diff", "--repo", str(tmp_path)])
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, res.output
    assert f"metrics/summary.json in the workspace: {reason}" in res.output
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "broken")
    res = CliRunner().invoke(cli_main, ["diff", "HEAD", "HEAD~1", "--repo", str(tmp_path)])
    assert res.exit_code == 1 and "metrics/summary.json at HEAD: not" in res.output, res.output
