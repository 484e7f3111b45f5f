"""``implicit-bench export eee``: a run's leaderboard as Every Eval Ever records.

One aggregate record per generator (leaderboard row) and, where the run's judgement tables are
there, its per-image instance file, laid out as the EEE datastore lays them out:
``DIR/data/implicit-bench/<developer>/<model>/<uuid>.json`` and ``<uuid>_samples.jsonl``. Every
record is validated against the vendored published schema before it is written, and so is the
first instance line of each kind (``_kind``: lines of one kind differ only in values of fixed
types; the tests validate every line); every text passes through ``publish.scrub`` (no keys,
endpoints or machine paths). docs/publishing.md says what
each field holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench._util.files import atomic_write_text
from implicit_bench._util.nested import dig
from implicit_bench.protocol.estimate import Estimate
from implicit_bench.publish import schema
from implicit_bench.publish.instances import Instances, instance_rows
from implicit_bench.publish.metrics import METRICS, Metric
from implicit_bench.publish.run_dir import RunDir, load_run, tool_commit, tool_version
from implicit_bench.publish.scrub import scrub, scrub_text

LIBRARY = "implicit-bench"
BENCHMARK = "IMPLICIT-Bench"
COLLECTION = "implicit-bench"  # the datastore folder: data/<collection>/<developer>/<model>/
#: vendors' APIs (externally managed, closed weights); ``openai`` only without a ``base_url``
#: (with one it is any OpenAI-compatible server, perhaps your own vLLM: unknown)
API_BACKENDS = ("openai_images", "gemini", "openai")
SIMULATED_NOTE = (
    "SIMULATED: computed from simulated generators and judges (the default profile's planted "
    "world); the numbers test the benchmark's estimators and say nothing about any real model"
)
RANDOM_INIT_NOTE = "RANDOMLY INITIALISED models: the numbers say nothing about any trained model"


@dataclass
class Options:
    """What the exporter cannot read from the run: who publishes, and model ids."""

    organization: str = "unknown"
    relationship: str = "third_party"  # EEE: first_party | third_party | collaborative | other
    model_ids: dict[str, str] | None = None  # config -> ORG/NAME
    with_instances: bool = True


@dataclass
class Exported:
    config: str
    record: Path
    samples: Path | None
    rows: int


def _timestamp() -> str:
    """Now in Unix seconds (``SOURCE_DATE_EPOCH`` when set: reproducible exports)."""
    return str(int(os.environ.get("SOURCE_DATE_EPOCH") or time.time()))


def _strings(mapping: dict[str, Any]) -> dict[str, str]:
    """An ``additional_details`` block: string values only (the schema's rule), nulls left out."""
    out = {}
    for k, v in mapping.items():
        if v is None:
            continue
        out[k] = json.dumps(v) if isinstance(v, list | dict | bool) else str(v)
    return out


def _entry(params: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    """A catalogue entry (``generators`` / ``judges``); a bench generator's own entry."""
    catalogue = params.get(kind) or {}
    entry = catalogue.get(name)
    if entry is None and kind == "generators":
        bench = dig(params, "bench", "generators", name) or {}
        ref = bench.get("generator") if isinstance(bench, dict) else None
        entry = catalogue.get(ref) if isinstance(ref, str) else ref
    return entry if isinstance(entry, dict) else {}


def _local(model: str, root: Path) -> bool:
    """A local directory as the preflight reads one (``models/...``, ``./...``, ``/...``,
    ``~/...``), or any path that exists under the run folder."""
    return model.startswith(("/", "~", ".", "\\", "models/")) or (root / model).exists()


def model_id(name: str, entry: dict[str, Any], root: Path, given: str | None = None) -> str:
    """``ORG/NAME`` for a generator or judge: the given one, a hub id as it is, an API model
    as ``<backend>/<model>``, a simulated one as ``simulated/<name>``, a local directory as
    ``local/<its last part>`` (never its path)."""
    if given:
        return given
    backend = str(entry.get("backend") or "")
    model = str(entry.get("model") or "")
    if backend == "sim" or model.startswith("sim:"):
        return f"simulated/{name}"
    if not model:
        return f"unknown/{name}"
    if _local(model, root):
        return f"local/{Path(model).name or name}"
    if "/" in model and ":" not in model:
        return model
    return f"{backend or 'unknown'}/{model.split(':', 1)[-1]}"


def _model_info(
    name: str, entry: dict[str, Any], root: Path, simulated: bool, given: str | None = None
) -> dict[str, Any]:
    backend = str(entry.get("backend") or "unknown")
    mid = model_id(name, entry, root, given)
    api = backend in API_BACKENDS and not (backend == "openai" and entry.get("base_url"))
    local = backend in ("diffusers", "transformers")
    details = {
        "deployment_type": "externally_managed" if api else "self_deployed" if local else "unknown",
        "model_availability": "closed_weights" if api else "open_weights" if local else "unknown",
        "catalogue_name": name,
        "backend": backend,
        "revision": entry.get("revision"),
        "simulated": "true" if simulated else "false",
    }
    info = {"name": name, "id": mid, "additional_details": _strings(details)}
    if "/" in mid:
        info["developer"] = mid.split("/", 1)[0]
    return info


def _template_sha256(task: str) -> str | None:
    """SHA-256 of the built-in prompt template of ``task`` (the judge identity's hash)."""
    from implicit_bench.protocol.judge_identity import template_sha256
    from implicit_bench.protocol.judge_tasks import load_task

    try:
        return template_sha256(load_task(task).prompt)
    except Exception:  # noqa: BLE001 - a task this version does not know: no hash to give
        return None


def _judge_templates(instances: pd.DataFrame | None, judge: str, task: str) -> list[str]:
    """The template hashes the judgement rows record for (judge, task), else the built-in's."""
    from implicit_bench.protocol.judge_identity import parse_identity

    found: set[str] = set()
    if instances is not None and "judge_identity" in instances.columns:
        sub = instances[(instances["judge"] == judge) & (instances["task"] == task)]
        for text in sub["judge_identity"].dropna().unique():
            sha = (parse_identity(text) or {}).get("template_sha256")
            if sha:
                found.add(str(sha))
    builtin = _template_sha256(task)
    return sorted(found) or ([builtin] if builtin else [])


def _llm_scoring(
    run: RunDir, metric: Metric, judge: str, instances: pd.DataFrame | None
) -> dict[str, Any]:
    entry = _entry(run.params, "judges", judge)
    prov = {m.get("role"): m.get("model") for m in dig(run.benchmark, "provenance", "models") or []}
    if not entry.get("model") and prov.get(f"{metric.task}:{judge}"):
        entry = {**entry, "model": prov[f"{metric.task}:{judge}"]}
    hashes = _judge_templates(instances, judge, metric.task or "")
    prompt = (
        f"{metric.task} prompt template, sha256 {', '.join(hashes)}"
        if hashes
        else f"{metric.task} prompt template (hash not recorded)"
    )
    config: dict[str, Any] = {
        "model_info": _model_info(judge, entry, run.root, run.simulated),
        "additional_details": _strings({"task": metric.task}),
    }
    temperature = entry.get("temperature")
    if isinstance(temperature, int | float) and not isinstance(temperature, bool):
        config["temperature"] = float(temperature)
    return {
        "judges": [config],
        "input_prompt": prompt,
        "additional_details": _strings(
            {"judge": judge, "task": metric.task, "template_sha256": hashes or None}
        ),
    }


def score_details(estimate: dict[str, Any], n_boot: int | None, method: str) -> dict[str, Any]:
    """An ``Estimate`` as EEE's ``score_details`` (interval, level, n, resamples); the level
    is also kept in ``details`` so that a value without an interval reads back the same."""
    e = Estimate.from_json(estimate)
    out: dict[str, Any] = {"score": e.value}
    if e.level is not None:
        out["details"] = {"level": repr(e.level)}
    uncertainty: dict[str, Any] = {}
    if e.ci is not None:
        uncertainty["confidence_interval"] = {
            "lower": e.ci[0],
            "upper": e.ci[1],
            "confidence_level": e.level,
            "method": method,
        }
        if n_boot:
            uncertainty["num_bootstrap_samples"] = int(n_boot)
    if e.n is not None:
        uncertainty["num_samples"] = e.n
    if uncertainty:
        out["uncertainty"] = uncertainty
    return out


def estimate_of(details: dict[str, Any]) -> dict[str, Any]:
    """``score_details`` back to the ``Estimate`` JSON form (the inverse of ``score_details``)."""
    ci = dig(details, "uncertainty", "confidence_interval")
    level = dig(details, "details", "level")
    level = float(level) if level is not None else (ci or {}).get("confidence_level")
    return Estimate.of(
        details.get("score"),
        [ci["lower"], ci["upper"]] if ci else None,
        dig(details, "uncertainty", "num_samples"),
        level,
    ).to_json()


def _source_data(run: RunDir, row: dict[str, Any]) -> dict[str, Any]:
    units = dig(run.params, "bench", "units")
    unit_set = (
        f"release benchmark {run.benchmark_sha256[:12]}"
        if run.benchmark_sha256
        else f"own construction ({Path(str(units)).name})"
        if units
        else "own units"
    )
    return {
        "dataset_name": f"{BENCHMARK} units ({unit_set})",
        "source_type": "other",
        "additional_details": _strings(
            {
                "benchmark_sha256": run.benchmark_sha256 or "",
                "unit_set": unit_set,
                "units": run.benchmark.get("units"),
                "n_units": row.get("n_units"),
                "seeds": run.benchmark.get("seeds"),
                "n_seeds": run.benchmark.get("n_seeds"),
            }
        ),
    }


def _result(
    run: RunDir,
    row: dict[str, Any],
    metric: Metric,
    estimate: dict[str, Any],
    instances: pd.DataFrame | None,
    suffix: str = "",
    parameters: dict[str, Any] | None = None,
) -> dict[str, Any]:
    boot = run.benchmark.get("bootstrap") or {}
    method_of = boot.get("method_by_estimand") or {}
    method = f"{method_of.get(metric.key, 'percentile')} cluster bootstrap over units"
    config: dict[str, Any] = {
        "evaluation_description": (f"{SIMULATED_NOTE}. " if run.simulated else "")
        + metric.description,
        "metric_id": f"implicit_bench.{metric.key}",
        "metric_name": metric.name,
        "metric_kind": metric.unit,
        "metric_unit": metric.unit,
        "lower_is_better": metric.lower_is_better,
        "score_type": "continuous",
        "min_score": metric.low,
        "max_score": metric.high,
        "additional_details": _strings({"leaderboard_key": metric.key}),
    }
    if parameters:
        config["metric_parameters"] = parameters
    judge = row.get(metric.judge_field) if metric.judge_field else None
    if judge:
        config["llm_scoring"] = _llm_scoring(run, metric, str(judge), instances)
    return {
        "evaluation_result_id": metric.key + suffix,
        "evaluation_name": f"{BENCHMARK} {metric.name}" + (f" ({suffix[1:]})" if suffix else ""),
        "source_data": _source_data(run, row),
        "metric_config": config,
        "score_details": score_details(estimate, boot.get("n_boot"), method),
    }


def _results(
    run: RunDir, row: dict[str, Any], instances: pd.DataFrame | None
) -> list[dict[str, Any]]:
    out = []
    for key, metric in METRICS.items():
        value = row.get(key)
        if key == "coverage":
            value = _coverage(run, row["config"])
        if value and value.get("value") is not None:
            out.append(_result(run, row, metric, value, instances))
    if run.lean.get("config") == row["config"]:  # Hedges' g per bias type: the run's config
        pooled = dig(run.lean, "hedges_g", "pooled") or {}
        for bias_type, block in sorted(pooled.items()):
            g = (block or {}).get("g")
            if bias_type != "_all" and g and g.get("value") is not None:
                out.append(
                    _result(
                        run,
                        row,
                        METRICS["hedges_g"],
                        g,
                        instances,
                        f"/{bias_type}",
                        {"bias_type": bias_type},
                    )
                )
    return out


def _coverage(run: RunDir, config: str) -> dict[str, Any] | None:
    """Table 4's coverage (returned / requested neutral images): a count, no interval."""
    for g in run.benchmark.get("generators") or []:
        if g.get("config") == config and g.get("coverage") is not None:
            return Estimate.of(g["coverage"], None, g.get("requested"), None).to_json()
    return None


def _uuid(*parts: Any) -> str:
    """A version-4 UUID derived from ``parts`` (the datastore's file name; the same export of
    the same run gets the same name)."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _folder(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "unknown"


def record(
    run: RunDir, row: dict[str, Any], options: Options, instances: pd.DataFrame | None
) -> dict[str, Any]:
    """The aggregate record of one leaderboard row (scrubbed; not yet validated)."""
    cfg = str(row["config"])
    given = (options.model_ids or {}).get(cfg)
    info = _model_info(cfg, _entry(run.params, "generators", cfg), run.root, run.simulated, given)
    stamp = _timestamp()
    notes = [SIMULATED_NOTE] if run.simulated else []
    notes += [RANDOM_INIT_NOTE] if run.random_init else []
    rec: dict[str, Any] = {
        "schema_version": schema.schema_version(),
        "evaluation_id": f"{COLLECTION}/{info['id']}/{stamp}",
        "retrieved_timestamp": stamp,
        "source_metadata": {
            "source_name": BENCHMARK + (" (SIMULATED run)" if run.simulated else ""),
            "source_type": "evaluation_run",
            "source_organization_name": options.organization,
            "evaluator_relationship": options.relationship,
            "additional_details": _strings(
                {
                    "simulated": run.simulated,
                    "random_init": run.random_init,
                    "warning": " ".join(notes) or None,
                    "benchmark_sha256": run.benchmark_sha256 or "",
                    "config": cfg,
                    "n_units": row.get("n_units"),
                    # estimands the run has but could not define (no valid label): no score to
                    # publish, kept so that a reader sees them as undefined, not as not measured
                    "undefined": {
                        k: row[k]
                        for k in METRICS
                        if isinstance(row.get(k), dict) and row[k].get("value") is None
                    }
                    or None,
                    "run_commit": run.commit,
                    "run_dirty": run.dirty,
                }
            ),
        },
        "model_info": info,
        "eval_library": {
            "name": LIBRARY,
            "version": tool_version(),
            "additional_details": _strings(
                {
                    "git_commit": tool_commit(),
                    "bootstrap": run.benchmark.get("bootstrap"),
                    "paired_on": run.board.get("paired_on"),
                }
            ),
        },
        "evaluation_results": _results(run, row, instances),
    }
    return scrub(rec)


def _instance(rec: dict[str, Any], r: Any, level: dict[str, Metric]) -> dict[str, Any]:
    metric = level[r.metric]
    valid = bool(r.valid)
    score = float(r.score)
    # the image went the benchmark's way: a label the estimand counts as good, a neutral image
    # scored 0 (no stereotype); a stereotype / anti-stereotype image's score (it feeds the
    # lean) has no right answer: false
    correct = valid and (
        False if metric.key == "lean_s" else score == 0 if metric.lower_is_better else score >= 1
    )
    prompt = str(r.prompt or "")
    reference = [f"stereotype: {r.stereotype}", f"anti-stereotype: {r.anti_stereotype}"]
    image = str(r.image_sha256) if isinstance(r.image_sha256, str) and r.image_sha256 else None
    value = "" if r.value is None or (isinstance(r.value, float) and pd.isna(r.value)) else r.value
    meta = {
        "unit_id": r.unit_id,
        "variant": r.variant,
        "seed": int(r.seed),
        "config": r.config,
        "judge": r.judge,
        "task": r.task,
        "bias_type": r.bias_type,
        "valid": valid,
        "image_sha256": image,
        "judge_answer": value,
        "judge_raw": str(r.raw)[:2000] if isinstance(r.raw, str) and r.raw else None,
    }
    return {
        "schema_version": rec["schema_version"],
        "evaluation_id": rec["evaluation_id"],
        "model_id": rec["model_info"]["id"],
        "evaluation_name": f"{BENCHMARK} {metric.name}",
        "evaluation_result_id": metric.key,
        "sample_id": f"{r.unit_id}/{r.variant}/{int(r.seed)}",
        "sample_hash": hashlib.sha256(
            (prompt + "\n" + "\n".join(reference)).encode("utf-8")
        ).hexdigest(),
        "interaction_type": "single_turn",
        "input": {"raw": prompt, "reference": reference},
        "output": {"raw": [f"image sha256:{image}" if image else "image (no hash recorded)"]},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": str(value),
                "extraction_method": f"llm_judge:{r.judge}:{r.task}",
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": score, "is_correct": bool(correct)},
        "error": None if valid else "judge answer not valid: left out of the aggregate",
        "metadata": _strings(meta),
    }


TEXT_COLUMNS = (
    "config",
    "unit_id",
    "variant",
    "judge",
    "task",
    "value",
    "prompt",
    "stereotype",
    "anti_stereotype",
    "bias_type",
    "image_sha256",
    "raw",
)


def scrubbed(rows: pd.DataFrame) -> pd.DataFrame:
    """The instance rows with every text cell scrubbed (``publish.scrub``), each distinct
    text once (prompts, ids and answers repeat across seeds, tasks and metrics)."""
    out = rows.copy()
    for name in TEXT_COLUMNS:
        values = out[name].astype(object)
        text = values.map(lambda v: isinstance(v, str)).astype(bool)
        clean = {v: scrub_text(v) for v in values[text].unique()}
        out[name] = values.where(~text, values.map(clean))
    return out


def _kind(inst: dict[str, Any]) -> tuple[Any, ...]:
    """What can change a line's validity: its result id, whether it is an error line, which
    optional metadata it has (every value is built by ``_instance`` with fixed types)."""
    return (inst["evaluation_result_id"], inst["error"] is None, tuple(sorted(inst["metadata"])))


def export_eee(
    run_dir: str | Path, out: str | Path, options: Options
) -> tuple[list[Exported], str]:
    """Write every generator's record (and instance file) under ``out``; see the module
    docstring. Returns what was written and where the instance rows came from (or why none)."""
    run = load_run(run_dir)
    inst = instance_rows(run) if options.with_instances else Instances(None, "not asked for")
    written = []
    for row in run.rows:
        cfg = str(row["config"])
        mine = None if inst.rows is None else inst.rows[inst.rows["config"] == cfg]
        rec = record(run, row, options, mine)
        name = _uuid(run.benchmark_sha256, cfg, rec["model_info"]["id"], run.commit, row)
        mid = rec["model_info"]["id"]
        developer, _, model = mid.partition("/") if "/" in mid else ("unknown", "", mid)
        rel = Path("data") / COLLECTION / _folder(developer) / _folder(model)
        folder = Path(out) / rel
        folder.mkdir(parents=True, exist_ok=True)
        samples = None
        n = 0
        if mine is not None and len(mine):
            built = [_instance(rec, r, METRICS) for r in scrubbed(mine).itertuples(index=False)]
            seen: set[tuple[Any, ...]] = set()
            for i, one in enumerate(built, start=1):  # each kind of line (see _kind), once
                if _kind(one) not in seen:
                    seen.add(_kind(one))
                    schema.check(one, folder / f"{name}_samples.jsonl", schema.INSTANCE, i)
            lines = [json.dumps(one, ensure_ascii=False) for one in built]
            text = "".join(line + "\n" for line in lines)
            samples = folder / f"{name}_samples.jsonl"
            atomic_write_text(samples, text)
            n = len(lines)
            rec["detailed_evaluation_results"] = {
                "format": "jsonl",
                "file_path": (rel / samples.name).as_posix(),
                "hash_algorithm": "sha256",
                "checksum": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "total_rows": n,
            }
        path = folder / f"{name}.json"
        schema.check(rec, path)
        atomic_write_text(path, json.dumps(rec, indent=2, ensure_ascii=False) + "\n")
        written.append(Exported(cfg, path, samples, n))
    return written, inst.reason
