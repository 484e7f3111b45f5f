"""The run log read back: the last line a stage wrote (``implicit_bench.runtime.runlog``
writes it; only the tests read single lines back)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implicit_bench.runtime.runlog import run_log_path


def last_run(stage: str, path: str | Path | None = None) -> dict[str, Any] | None:
    """The last run-log line of ``stage`` (None when it never ran)."""
    target = Path(path) if path is not None else run_log_path()
    if not target.exists():
        return None
    found = None
    for line in target.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("stage") == stage:
            found = entry
    return found
