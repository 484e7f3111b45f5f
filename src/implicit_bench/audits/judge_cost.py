"""NegT2IBench Tables 2 and 8's evaluator cost columns from the judges' own timings.

The judge stages (``judge``, ``bench_judge``) log each dispatched judge's timings
(``backends/judges/stage.judge_timing``) and ``audit negation-judge`` its per-element judge's
(``audits/negation_judge.JudgeCost``) to the untracked run log (``runtime/runlog``,
``logs/runs.jsonl``): they depend on the clock, so they never enter ``metrics/``. This module
reads them back, per judge the latest run that asked it anything: seconds per image, seconds
per question, questions per image, load seconds and peak GPU memory (GiB; null where torch
never used CUDA in the process, e.g. an HTTP judge).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from implicit_bench._util.nested import dig

COLUMNS = ("s_per_image", "s_per_question", "questions_per_image", "load_s", "gpu_gib")
JUDGE_STAGES = ("judge", "bench_judge")
HOOK_STAGE = "audit negation-judge"


def read_run_log(path: str | Path) -> list[dict[str, Any]]:
    """The run log's entries (lines that are not JSON objects skipped: the log is appended to by
    processes that may have died mid-line)."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def judge_costs(entries: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per judge, the cost columns of the latest logged run that asked it anything (log
    order), with the stage and time it came from."""
    out: dict[str, dict[str, Any]] = {}
    for entry in entries:
        stage = entry.get("stage")
        found: dict[str, dict[str, Any]] = {}
        if stage in JUDGE_STAGES:
            timings = dig(entry, "judge_timings")
            for judge, t in timings.items() if isinstance(timings, dict) else ():
                if isinstance(t, dict) and t.get("requests"):
                    found[str(judge)] = t
        elif stage == HOOK_STAGE and dig(entry, "cost", "images_timed"):
            found[str(entry.get("judge"))] = {
                **entry["cost"],
                "requests": entry.get("questions"),
                "images": entry["cost"]["images_timed"],
            }
        for judge, t in found.items():
            out[judge] = {
                "stage": stage,
                "finished_at": entry.get("finished_at"),
                "requests": t.get("requests"),
                "images": t.get("images"),
                **{c: t.get(c) for c in COLUMNS},
            }
    return out


def cost_table(costs: dict[str, dict[str, Any]]) -> str:
    """A plain-text table of ``judge_costs`` (Tables 2 and 8's columns)."""
    head = ["judge", "stage", "images", "requests", "s/img", "s/Q", "Q/img", "load s", "GPU GiB"]
    rows = [head]
    for judge, c in sorted(costs.items()):
        rows.append(
            [
                judge,
                str(c["stage"]),
                _num(c["images"], 0),
                _num(c["requests"], 0),
                _num(c["s_per_image"], 3),
                _num(c["s_per_question"], 3),
                _num(c["questions_per_image"], 2),
                _num(c["load_s"], 1),
                _num(c["gpu_gib"], 1),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows)


def _num(value: Any, digits: int) -> str:
    if value is None:
        return "-"
    return f"{float(value):.{digits}f}"


__all__ = ["COLUMNS", "cost_table", "judge_costs", "read_run_log"]
