"""The untracked run log: wall-clock and cache-state figures of each stage run.

Tracked outputs (DVC outs and ``metrics:`` files) must be pure functions of their declared
inputs, so figures that depend on the clock or on what a cache already held (seconds, images
per second, items reused from a store, model calls made, cache hits) never go there. Each stage
appends them as one JSON line to ``logs/runs.jsonl`` (gitignored, not a DVC output; the
``IMPLICIT_BENCH_RUN_LOG`` environment variable names another file) and echoes a summary.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from implicit_bench._util.files import write_json

RUN_LOG = "logs/runs.jsonl"
# keys of a metrics payload that describe the run rather than its result
RUN_STATE_KEYS = frozenset(
    {
        "run",
        "seconds",
        "images_per_s",
        "cache_hits",
        "llm_calls",
        "embedding_calls",
        "embedded_now",
        "model_calls",
    }
)


def run_log_path() -> Path:
    return Path(os.environ.get("IMPLICIT_BENCH_RUN_LOG") or RUN_LOG)


def split_run_state(
    payload: Any, keys: frozenset[str] = RUN_STATE_KEYS
) -> tuple[Any, dict[str, Any]]:
    """``(payload without run-state keys, {dotted path: value} of the keys
    taken out)``, recursively."""
    taken: dict[str, Any] = {}

    def walk(node: Any, prefix: str) -> Any:
        if isinstance(node, dict):
            kept = {}
            for key, value in node.items():
                path = f"{prefix}{key}"
                if key in keys:
                    taken[path] = value
                else:
                    kept[key] = walk(value, path + ".")
            return kept
        if isinstance(node, list):
            return [walk(v, f"{prefix}{i}.") for i, v in enumerate(node)]
        return node

    return walk(payload, ""), taken


def log_run(stage: str, figures: dict[str, Any], path: str | Path | None = None) -> Path:
    """Append ``{"stage", "finished_at", **figures}`` as one line to the run log."""
    target = Path(path) if path is not None else run_log_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    line = {
        "stage": stage,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        **figures,
    }
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, default=str, ensure_ascii=False) + "\n")
    return target


def write_metrics(
    path: str | Path, payload: dict[str, Any], stage: str, **extra: Any
) -> dict[str, Any]:
    """Write ``payload`` without its run-state figures to ``path`` (tracked); log those figures
    (plus ``extra``) to the run log; return them."""
    tracked, taken = split_run_state(payload)
    write_json(path, tracked)
    figures = {**taken, **extra}
    log_run(stage, figures)
    return figures
