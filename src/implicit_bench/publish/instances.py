"""Per-image rows behind a run's leaderboard: one row per judged image and metric (unit,
variant, seed, prompt, judge answer, image hash), on the analysed units and seeds.

The rows are read from the tables the metrics name (``benchmark.json: inputs.files``) through
the analysis's own validated loader (``analysis.load.load_tables``), so an answer the analysis
left out (invalid, a duplicate key, another option order) is marked invalid here too. When a
table is missing (a fresh clone without ``dvc pull``) or the analysed unit set cannot be
matched, there are no rows and the reason says why: the aggregate record is published alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from implicit_bench._util.nested import dig
from implicit_bench.protocol.tables import SELECTED_UNITS_PATH
from implicit_bench.publish.metrics import INSTANCE_METRICS
from implicit_bench.publish.run_dir import RunDir, input_files

COLUMNS = (
    "config",
    "unit_id",
    "variant",
    "seed",
    "judge",
    "task",
    "metric",
    "value",
    "score",
    "valid",
    "prompt",
    "stereotype",
    "anti_stereotype",
    "bias_type",
    "image_sha256",
    "raw",
    "judge_identity",
)


@dataclass
class Instances:
    rows: pd.DataFrame | None
    reason: str  # why there are no rows, or where they came from


def _analysed(run: RunDir, units: pd.DataFrame, base: Path) -> pd.DataFrame | None:
    """The analysed units: the selection when the run made one, else every unit; None when
    neither matches the unit count the metrics report. The selection is looked for where the
    units table was found (``base``: the run folder, or the folder the run named it from)."""
    want = run.benchmark.get("units")
    for path in (base / SELECTED_UNITS_PATH, run.root / "selected_units.parquet"):
        if path.exists():
            ids = set(pd.read_parquet(path, columns=["unit_id"])["unit_id"].astype(str))
            kept = units[units["unit_id"].astype(str).isin(ids)]
            if want is None or len(kept) == want:
                return kept
    return units if want is None or len(units) == want else None


EXTRAS = ("image_sha256", "raw", "judge_identity")


def _header(file: str) -> set[str]:
    """The column names of a judgement table (Parquet: from its schema, without reading it)."""
    from implicit_bench._util.files import read_table

    try:
        import pyarrow.parquet as pq

        return set(pq.ParquetFile(file).schema_arrow.names)
    except Exception:  # noqa: BLE001 - not Parquet: read it as its extension says
        return set(read_table(file).columns)


def _with_extras(rows: pd.DataFrame) -> pd.DataFrame:
    """The optional columns the analysis's loader does not keep (image hash, raw answer,
    judge identity), joined back from each file by its 1-based data row."""
    from implicit_bench._util.files import read_table

    parts = []
    for file, sub in rows.groupby("file", sort=False):
        present = [c for c in EXTRAS if c in _header(file)]
        table = read_table(file, dtype=dict.fromkeys(present, str))  # a hash stays text
        sub = sub.copy()
        for name in EXTRAS:
            values = table[name] if name in table.columns else pd.Series(None, index=table.index)
            sub[name] = values.to_numpy(object)[sub["row"].to_numpy(int) - 1]
        parts.append(sub)
    return pd.concat(parts, ignore_index=True)


def instance_rows(run: RunDir) -> Instances:
    """The per-image rows of every leaderboard generator (see the module docstring)."""
    from implicit_bench.analysis.load import load_tables

    units_files = input_files(run, "units")
    judgement_files = input_files(run, "judgements")
    image_files = [p for p in input_files(run, "images") if p.exists()]
    missing = [p for p in (*units_files, *judgement_files) if not p.exists()]
    if not units_files or not judgement_files or missing:
        shown = missing[0].name if missing else "benchmark.json: inputs.files"
        return Instances(None, f"no instance file: {shown} not found (dvc pull, or dvc repro)")
    order = run.params.get("primary_order") or dig(run.params, "evaluate", "primary_order")
    tables = load_tables(
        units_files[0], judgement_files, image_files, "reject", "drop", order or "hash"
    )
    base = run.root if units_files[0].is_relative_to(run.root) else Path()
    units = _analysed(run, tables.units, base)
    if units is None:
        return Instances(None, "no instance file: the analysed unit set could not be matched")
    j = tables.judgements
    j = j[j["unit_id"].astype(str).isin(set(units["unit_id"].astype(str)))]
    seeds = run.benchmark.get("seeds")
    if seeds:
        j = j[j["seed"].isin(seeds)]
    frames = []
    for row in run.rows:
        cfg = row["config"]
        for (task, variant), (metric, hit) in INSTANCE_METRICS.items():
            field = {"blind": "judge", "rubric": "bias_judge", "alignment": "alignment_judge"}
            judge = row.get(field[task])
            if not judge:
                continue
            sub = j[
                (j["config"] == cfg)
                & (j["judge"] == judge)
                & (j["task"] == task)
                & (j["variant"] == variant)
            ]
            if not len(sub):
                continue
            valid = sub["valid"].astype(bool).to_numpy()
            if hit is not None:
                score = (sub["value"].astype(str) == hit).to_numpy(float)
            else:
                score = pd.to_numeric(sub["score"], errors="coerce").to_numpy(float)
            frames.append(sub.assign(metric=metric, score=np.where(valid, score, 0.0), valid=valid))
    if not frames:
        return Instances(None, "no instance file: no judgement of a leaderboard judge")
    rows = _with_extras(pd.concat(frames, ignore_index=True))
    prompts = units.set_index(units["unit_id"].astype(str))
    keys = rows["unit_id"].astype(str)
    column = "prompt_" + rows["variant"].astype(str)
    rows["prompt"] = [
        str(prompts.at[k, c]) if c in prompts.columns else ""
        for k, c in zip(keys, column, strict=True)
    ]
    for name in ("stereotype", "anti_stereotype", "bias_type"):
        rows[name] = keys.map(prompts[name].astype(str)) if name in prompts.columns else ""
    files = ", ".join(Path(p).name for p in judgement_files)
    return Instances(
        rows[list(COLUMNS)].sort_values(["config", "metric", "unit_id", "variant", "seed"]),
        f"{len(rows)} rows from {files}",
    )
