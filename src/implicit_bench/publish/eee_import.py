"""Every Eval Ever records of this benchmark as ``implicit-bench report`` sources.

A source is one record file or a folder of them (an ``export eee`` output, a datastore
checkout): each record is validated against the vendored schema, must come from
implicit-bench (``eval_library.name``) and all records of a source must name one benchmark
SHA-256; the report then refuses sources of another benchmark (``report.runs.same_benchmark``).
Each record becomes one leaderboard row with its intervals as recorded
(``eee.estimate_of``). Where a record points to its instance file, the file is read (its
checksum checked; the whole schema on the first line of each kind, the fields the pairing reads
on every line) for the paired differences on shared (unit, seed) keys (``paired_rows``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.nested import dig
from implicit_bench.analysis.bootstrap import Bootstrap, bootstrap_p, holm, safe_div
from implicit_bench.errors import InputError
from implicit_bench.protocol.estimate import Estimate
from implicit_bench.publish import schema
from implicit_bench.publish.eee import LIBRARY, estimate_of
from implicit_bench.publish.metrics import METRICS, PAIRED
from implicit_bench.report.leaderboard import Run

INSTANCE_COLUMNS = ("config", "judge", "metric", "unit_id", "seed", "score", "valid")


@dataclass
class Source:
    """One report source: its leaderboard rows (``run``) and its instance rows, if any."""

    run: Run
    instances: pd.DataFrame | None = None


def is_eee(path: Path) -> bool:
    """A record file, or a folder of records that is not a run folder."""
    if path.is_file():
        return path.suffix == ".json"
    return not (path / "metrics" / "benchmark.json").exists() and any(record_files(path))


def record_files(path: Path) -> list[Path]:
    """A file as it is; a folder's records: under its ``data/`` (the datastore layout that
    ``export eee`` writes) when it has one, else every ``*.json`` below it."""
    if path.is_file():
        return [path]
    base = path / "data" if (path / "data").is_dir() else path
    return sorted(p for p in base.rglob("*.json") if p.is_file())


def _read(path: Path) -> dict[str, Any]:
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(path, None, None, f"not valid JSON: {exc}") from None
    schema.check(rec, path)
    name = dig(rec, "eval_library", "name")
    if name != LIBRARY:
        raise InputError(
            path,
            None,
            "eval_library.name",
            f"'{name}' is not an {LIBRARY} record of this benchmark",
        )
    return rec


def _row(rec: dict[str, Any]) -> dict[str, Any]:
    details = dig(rec, "source_metadata", "additional_details") or {}
    n = details.get("n_units")
    row: dict[str, Any] = {
        "config": rec["model_info"]["name"],
        "model_id": rec["model_info"]["id"],
        "n_units": int(n) if n not in (None, "") else None,
    }
    undefined = json.loads(details.get("undefined") or "{}")
    row.update({k: Estimate.from_json(v).to_json() for k, v in undefined.items() if k in METRICS})
    for result in rec["evaluation_results"]:
        key = result.get("evaluation_result_id")
        if key in METRICS:
            row[key] = estimate_of(result["score_details"])
            judge = dig(result, "metric_config", "llm_scoring", "additional_details", "judge")
            field = METRICS[key].judge_field
            if judge and field and not row.get(field):
                row[field] = judge
    return row


def _instances(path: Path, rec: dict[str, Any]) -> pd.DataFrame | None:
    detail = rec.get("detailed_evaluation_results")
    if not detail:
        return None
    file = path.parent / Path(detail["file_path"]).name
    if not file.exists():
        return None  # a record published without its samples: no pairing, nothing guessed
    text = file.read_bytes()
    if detail.get("checksum") and hashlib.sha256(text).hexdigest() != detail["checksum"]:
        raise InputError(file, None, None, "sha256 differs from the record's checksum")
    rows = []
    kinds: set[tuple[Any, ...]] = set()
    for i, line in enumerate(text.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            inst = json.loads(line)
        except ValueError as exc:
            raise InputError(file, i, None, f"not valid JSON: {exc}") from None
        kind = _kind(inst)
        if kind not in kinds:  # the whole schema on each kind of line; below, on every line,
            kinds.add(kind)  # the fields this reader uses
            schema.check(inst, file, schema.INSTANCE, i)
        rows.append(_used(inst, rec, file, i))
    return pd.DataFrame(rows, columns=list(INSTANCE_COLUMNS))


def _kind(inst: Any) -> tuple[Any, ...]:
    if not isinstance(inst, dict):
        return ("not an object",)
    meta = inst.get("metadata")
    return (
        tuple(sorted(inst)),
        inst.get("evaluation_result_id"),
        tuple(sorted(meta)) if isinstance(meta, dict) else type(meta).__name__,
    )


def _used(inst: dict[str, Any], rec: dict[str, Any], file: Path, line: int) -> tuple[Any, ...]:
    """The fields the pairing reads, checked on every line (one line naming the field)."""
    if inst.get("evaluation_id") != rec["evaluation_id"]:
        raise InputError(file, line, "evaluation_id", "differs from the record's")
    meta = inst.get("metadata") if isinstance(inst.get("metadata"), dict) else {}
    evaluation = inst.get("evaluation")
    score = evaluation.get("score") if isinstance(evaluation, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise InputError(file, line, "evaluation.score", f"not a number: {score!r}"[:120])
    seed = str(meta.get("seed", ""))
    if not seed.lstrip("-").isdigit():
        raise InputError(file, line, "metadata.seed", f"not an integer: {seed!r}"[:120])
    for key in ("unit_id", "judge", "valid"):
        if not isinstance(meta.get(key), str):
            raise InputError(file, line, f"metadata.{key}", "missing")
    return (
        rec["model_info"]["name"],
        meta["judge"],
        inst.get("evaluation_result_id"),
        meta["unit_id"],
        int(seed),
        float(score),
        meta["valid"] == "true",
    )


def load_source(path: Path, label: str) -> Source:
    """The records under ``path`` as one report source labelled ``label``."""
    files = record_files(path)
    records = [(f, _read(f)) for f in files if not f.name.endswith("_samples.json")]
    if not records:
        raise InputError(path, None, None, "no Every Eval Ever record (*.json) found")
    hashes = {
        (dig(r, "source_metadata", "additional_details", "benchmark_sha256") or None)
        for _, r in records
    }
    if len(hashes) > 1:
        raise InputError(
            path, None, None, "its records are on different benchmarks: give them apart"
        )
    sha = next(iter(hashes))
    simulated = any(
        dig(r, "source_metadata", "additional_details", "simulated") == "true" for _, r in records
    )
    rows = [_row(r) for _, r in records]
    frames = [f for f in (_instances(p, r) for p, r in records) if f is not None]
    board = {"rows": rows, "pairs": [], "benchmark_sha256": sha}
    return Source(
        Run(label, {"leaderboard": board}, simulated),
        pd.concat(frames, ignore_index=True) if frames else None,
    )


def _per_unit(frame: pd.DataFrame, units: list[str]) -> np.ndarray:
    sums = frame.groupby("unit_id")["score"].agg(["sum", "size"]).astype(float)
    return sums.reindex(units, fill_value=0.0).to_numpy(float)


def paired_rows(sources: list[tuple[str, pd.DataFrame]], boot: Bootstrap) -> dict[str, Any]:
    """Paired differences A - B between the generators of two different sources, per metric
    of ``PAIRED``, on the (unit, seed) keys both judged validly: per-unit sums of scores and
    counts, one paired cluster bootstrap over the shared units (``Bootstrap.paired``), p and
    Holm over the whole family; the report's pairs table reads the result."""
    out: list[dict[str, Any]] = []
    reps: list[np.ndarray] = []
    for i, (label_a, rows_a) in enumerate(sources):
        for label_b, rows_b in sources[i + 1 :]:
            for (cfg_a, cfg_b, metric), (fa, fb) in _matches(rows_a, rows_b).items():
                keys = ["unit_id", "seed"]
                shared = fa[keys].merge(fb[keys], on=keys)
                if shared.empty:
                    continue
                fa = fa.merge(shared, on=keys)
                fb = fb.merge(shared, on=keys)
                units = sorted(set(shared["unit_id"]))
                ma, mb = _per_unit(fa, units), _per_unit(fb, units)
                diff, r = boot.paired(
                    ma,
                    mb,
                    lambda s: safe_div(s[..., 0], s[..., 1]),
                    f"eee/pair/{label_a}:{cfg_a}~{label_b}:{cfg_b}/{metric}",
                )
                judges = (set(fa["judge"]), set(fb["judge"]))
                out.append(
                    {
                        "a": f"{cfg_a} ({label_a})",
                        "b": f"{cfg_b} ({label_b})",
                        "metric": metric
                        + ("" if judges[0] == judges[1] else " (different judges)"),
                        "n_units": len(units),
                        "n_keys": len(shared),
                        "difference": diff,
                    }
                )
                reps.append(r)
    pvalues = [
        bootstrap_p(r) if e["difference"]["ci"] is not None else None
        for e, r in zip(out, reps, strict=True)
    ]
    alpha = round(1 - boot.level, 10)
    for e, p, q in zip(out, pvalues, holm(pvalues), strict=True):
        ci = e["difference"]["ci"]
        e.update(p=p, p_holm=q, resolved=bool(q is not None and q < alpha and ci[0] != ci[1]))
    return {
        "rows": [],
        "pairs": out,
        "alpha": alpha,
        "min_p_holm": min(1.0, len(out) * 2 / (boot.n + 1)) if out else None,
    }


def _matches(a: pd.DataFrame, b: pd.DataFrame) -> dict[tuple[str, str, str], tuple[Any, Any]]:
    """(config A, config B, metric) -> the valid rows of each, for every metric both have."""
    out = {}
    a, b = a[a["valid"]], b[b["valid"]]
    for metric in PAIRED:
        ga = {c: f for c, f in a[a["metric"] == metric].groupby("config")}
        gb = {c: f for c, f in b[b["metric"] == metric].groupby("config")}
        for ca, fa in ga.items():
            for cb, fb in gb.items():
                out[(str(ca), str(cb), metric)] = (fa, fb)
    return out
