"""The journeys' wall times (tests/artifacts/journeys.json) at the end of the run."""

from __future__ import annotations

import json

from tests.helpers.journeys import TIMES


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ANN001, ARG001
    if not TIMES.exists() or (config.getoption("markexpr") or "").strip() != "journey":
        return
    times = json.loads(TIMES.read_text())
    terminalreporter.section("journey wall times (tests/artifacts/journeys.json)")
    for name, entry in times.items():
        if not name.startswith("_"):
            terminalreporter.write_line(f"{name:24s} {entry['seconds']:8.1f} s")
    terminalreporter.write_line(f"{'total':24s} {times['_total_seconds']:8.1f} s")
