"""``implicit-bench export hf-eval-results``: a run's headline as Hugging Face model-card eval
results (``.eval_results/*.yaml`` in the model repository: one entry per task with the dataset
id, task id, value, date, and a source or notes naming the run; docs/publishing.md)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import yaml

from implicit_bench._util.files import atomic_write_text
from implicit_bench.errors import ConfigError
from implicit_bench.protocol.estimate import Estimate
from implicit_bench.publish.eee import BENCHMARK, SIMULATED_NOTE
from implicit_bench.publish.metrics import METRICS
from implicit_bench.publish.run_dir import RunDir, load_run
from implicit_bench.publish.scrub import scrub

#: the model-card tasks: leaderboard key -> scale of the shown value (percent or 0-5 points)
TASKS = {"bias_score": 1.0, "alignment": 100.0, "default_rate": 100.0}
FILE = "implicit-bench.yaml"


def pick_config(run: RunDir, config: str | None) -> dict[str, Any]:
    """The leaderboard row of ``config``; by default the run's own configuration, or the only
    generator; several and none named: a one-line error listing them."""
    rows = {r["config"]: r for r in run.rows}
    name = config or (run.benchmark.get("config") if len(rows) > 1 else next(iter(rows)))
    if name not in rows:
        raise ConfigError(
            f"generator {name!r} is not in the run's leaderboard ({', '.join(sorted(rows))}): "
            "name one with --config"
        )
    return rows[name]


def _date() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    now = dt.datetime.fromtimestamp(int(epoch), dt.UTC) if epoch else dt.datetime.now(dt.UTC)
    return now.strftime("%Y-%m-%d")


def entries(
    run: RunDir,
    row: dict[str, Any],
    dataset_id: str,
    source_url: str | None = None,
) -> list[dict[str, Any]]:
    """One entry per task of ``TASKS`` the row has a value for."""
    out = []
    run_name = f"{BENCHMARK} run" + (f" {run.commit[:12]}" if run.commit else "")
    for key, scale in TASKS.items():
        if not row.get(key):
            continue
        e = Estimate.from_json(row[key])
        if e.value is None:
            continue
        metric = METRICS[key]
        judge = row.get(metric.judge_field) if metric.judge_field else None
        unit = "points of 0-5" if scale == 1.0 else "%"
        ci = (
            f", {e.level:.0%} CI [{e.ci[0] * scale:.2f}, {e.ci[1] * scale:.2f}]"
            if e.ci is not None and e.level is not None
            else ""
        )
        notes = (
            f"{metric.name} ({unit}, {'lower' if metric.lower_is_better else 'higher'} is "
            f"better){ci}, {e.n} units, judge {judge}; generator {row['config']}, {run_name}, "
            f"benchmark sha256 {run.benchmark_sha256 or 'own units'}"
        )
        if run.simulated:
            notes = f"{SIMULATED_NOTE}. {notes}"
        entry: dict[str, Any] = {
            "dataset": {"id": dataset_id, "task_id": key},
            "value": round(e.value * scale, 4),
            "date": _date(),
        }
        if source_url:
            entry["source"] = {"url": source_url, "name": run_name}
        entry["notes"] = notes
        out.append(entry)
    return scrub(out)


def export_hf(
    run_dir: str | Path,
    out: str | Path,
    model_id: str,
    dataset_id: str | None = None,
    config: str | None = None,
    source_url: str | None = None,
) -> tuple[Path, list[dict[str, Any]]]:
    """Write ``out/.eval_results/implicit-bench.yaml``; returns the path and the entries."""
    if model_id.count("/") != 1 or not all(model_id.split("/")):
        raise ConfigError(f"--model-id must be ORG/NAME, got {model_id!r}")
    run = load_run(run_dir)
    row = pick_config(run, config)
    dataset = dataset_id or f"{model_id.split('/')[0]}/implicit-bench"
    found = entries(run, row, dataset, source_url)
    path = Path(out) / ".eval_results" / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    head = f"# {BENCHMARK} results of {model_id} (generator {row['config']})\n"
    atomic_write_text(path, head + yaml.safe_dump(found, sort_keys=False, allow_unicode=True))
    return path, found
