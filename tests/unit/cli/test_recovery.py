"""``implicit-bench recovery power|alpha``: every count is >= 1 and every number finite, each a
one-line usage error naming the option before anything is simulated or written (docs/errors.md)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from implicit_bench.cli.main import main


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--gap", "nan"),
        ("--gap", "inf"),
        ("--gap", "2"),
        ("--units", "0"),
        ("--seeds", "0"),
        ("--seeds", "1001"),
        ("--boot", "0"),
        ("--worlds", "0"),
        ("--calibration", "0"),
    ],
)
def test_recovery_power_refuses_a_zero_count_or_a_non_finite_gap_naming_the_option(
    tmp_path, option, value
):
    out = tmp_path / "power.json"
    result = CliRunner().invoke(main, ["recovery", "power", "--out", str(out), option, value])
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 2 and len(errors) == 1 and f"'{option}'" in errors[0], result.output
    assert "Traceback" not in result.output and not out.exists()


def test_recovery_alpha_refuses_nan(tmp_path):
    out = tmp_path / "alpha.json"
    result = CliRunner().invoke(main, ["recovery", "alpha", "--out", str(out), "--alpha", "nan"])
    assert result.exit_code == 2 and "'--alpha'" in result.output and not out.exists()


def test_simulate_is_the_hidden_old_name_of_recovery(tmp_path):
    listing = CliRunner().invoke(main, ["--help"]).output.splitlines()
    names = {line.split()[0] for line in listing if line.startswith("  ") and line.strip()}
    assert "recovery" in names and "simulate" not in names
    out = tmp_path / "p.json"
    result = CliRunner().invoke(main, ["simulate", "power", "--out", str(out), "--units", "0"])
    assert result.exit_code != 0 and "units" in result.output  # the same command, same checks
