"""Collect what the pipeline has written so far; anything missing is recorded, never fatal."""

from __future__ import annotations

import glob
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench._util.files import read_json, read_table
from implicit_bench._util.yamlsafe import load_yaml_file
from implicit_bench.errors import InputError
from implicit_bench.protocol.benchmark_file import BenchmarkFile
from implicit_bench.protocol.human_eval_file import check_human_eval
from implicit_bench.protocol.schema import VARIANTS
from implicit_bench.protocol.tables import (
    SELECTED_UNITS,
    UNITS,
)
from implicit_bench.protocol.tables.judgements import read_judgements
from implicit_bench.render.images import ImageStore, read_index
from implicit_bench.report.confine import Scope, check_all
from implicit_bench.report.params import ReportParams
from implicit_bench.runtime.provenance import RANDOM_INIT_WARNING, is_random_init

# Order of the metrics files on the summary page (others follow alphabetically).
METRICS_ORDER = (
    "benchmark",
    "selection",
    "lean",
    "debias",
    "retrieval",
    "human_eval",
    "clip",
    "judge_audit",
    "negation",
    "diversity",
    "render",
    "judge",
    "triplets",
    "kg",
    "sources",
)

#: the metrics files the summary page reads field by field: their structure is checked on load
#: (benchmark.json's contract, ``protocol.benchmark_file``, gives ``ReportInputs.benchmark``)
METRICS_CHECKS = {"human_eval": check_human_eval}


@dataclass
class ReportInputs:
    units: pd.DataFrame | None = None
    selected: set[str] | None = None
    judgements: pd.DataFrame | None = None
    stores: dict[str, ImageStore] = field(default_factory=dict)
    image_index: pd.DataFrame | None = None
    base_configs: list[str] = field(default_factory=list)
    debias_configs: list[str] = field(default_factory=list)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    benchmark: BenchmarkFile | None = None  # metrics/benchmark.json, typed
    plots: dict[str, pd.DataFrame] = field(default_factory=dict)
    plot_specs: dict[str, dict[str, Any]] = field(default_factory=dict)
    available: dict[str, str] = field(default_factory=dict)  # input -> "ok ..." | "not available"
    random_sources: list[str] = field(default_factory=list)  # what came from random models


def load_inputs(
    params: ReportParams, root: str | Path = ".", scope: Scope | None = None
) -> ReportInputs:
    """Everything the report shows. ``scope``: the folder ``implicit-bench report DIR`` was
    given; every file read must resolve inside it (``report.confine``)."""
    root = Path(root)
    inputs = ReportInputs()
    _load_units(inputs, params, root, scope)
    _load_judgements(inputs, params, root, scope)
    _load_stores(inputs, params, root, scope)
    _load_metrics(inputs, params, root, scope)
    _load_plots(inputs, params, root, scope)
    _detect_random(inputs)
    return inputs


def _load_units(
    inputs: ReportInputs, params: ReportParams, root: Path, scope: Scope | None = None
) -> None:
    path = root / params.units
    if not path.exists():
        inputs.available["units"] = f"not available ({params.units})"
        return
    check_all(scope, [path], "report.units")
    units = UNITS.read(path)
    inputs.units = units
    inputs.available["units"] = f"ok: {len(units)} units ({params.units})"
    sel = root / params.selected_units
    if sel.exists():
        check_all(scope, [sel], "report.selected_units")
        inputs.selected = set(SELECTED_UNITS.read(sel)["unit_id"])
        inputs.available["selection"] = f"ok: {len(inputs.selected)} selected units"
    else:
        inputs.available["selection"] = f"not available ({params.selected_units})"


def _load_judgements(
    inputs: ReportInputs, params: ReportParams, root: Path, scope: Scope | None = None
) -> None:
    files = sorted({f for pattern in params.judgements for f in glob.glob(str(root / pattern))})
    if not files:
        inputs.available["judgements"] = f"not available ({', '.join(params.judgements)})"
        return
    check_all(scope, map(Path, files), "report.judgements")
    frames = []
    for f in files:
        frame = read_judgements(f)
        frame["_file"] = Path(f).name
        frames.append(frame)
    judgements = pd.concat(frames, ignore_index=True)
    judgements["unit_id"] = judgements["unit_id"].astype(str)
    judgements["seed"] = judgements["seed"].astype("int64")
    if "valid" not in judgements.columns:
        judgements["valid"] = judgements["value"].notna()
    judgements["valid"] = judgements["valid"].fillna(False).astype(bool)
    judgements["primary"] = primary_blind_rows(judgements)
    inputs.judgements = judgements
    inputs.available["judgements"] = f"ok: {len(judgements)} rows from {len(files)} file(s)"


def primary_blind_rows(judgements: pd.DataFrame) -> pd.Series:
    """True for the rows that carry an image's label (docs/judging.md, docs/analysis.md).

    A blind image asked under both option orders has two rows per judge; its label is the
    answer under the primary order, the judge stage's hash order (``schema.blind_order``;
    order 1 for the three cyclic orders). An image asked once keeps its only answer. Rows
    of other tasks are all primary.
    """
    from implicit_bench.protocol.schema import primary_order

    primary = pd.Series(True, index=judgements.index)
    if "order" not in judgements.columns:
        return primary
    blind = judgements[judgements["task"] == "blind"]
    if blind.empty:
        return primary
    key = ["config", "unit_id", "variant", "seed", "judge"]
    asked = blind.groupby(key)["task"].transform("size")
    several = blind[asked > 1]
    # two orders: the hash order; three cyclic orders: order 1 (schema.primary_order)
    hash_order = [
        primary_order(u, s, v, o)
        for u, s, v, o in zip(
            several["unit_id"], several["seed"], several["variant"], several["order"], strict=True
        )
    ]
    primary.loc[several.index] = (
        several["order"].astype(str).to_numpy() == pd.Series(hash_order, dtype=str).to_numpy()
    )
    return primary


def _load_stores(
    inputs: ReportInputs, params: ReportParams, root: Path, scope: Scope | None = None
) -> None:
    indexes = []
    for image_root in params.image_roots:
        base = root / image_root
        if not base.is_dir():
            continue
        check_all(scope, [base], "report.image_roots")
        for store_dir in sorted(p for p in base.iterdir() if p.is_dir()):
            if not (store_dir / "index.parquet").exists():
                continue  # not published: not in the current plan
            if scope is not None:  # index, journal and shards: none a link out
                scope.check_tree(store_dir, "report.image_roots")
            store = ImageStore(store_dir)
            index = read_index(store_dir)  # the plan's items only, not every stored item
            if index.empty:
                continue
            index = index.copy()
            index["store"] = store_dir.name
            for config in index["config"].unique():
                inputs.stores[str(config)] = store
            indexes.append(index)
    if not indexes:
        inputs.available["images"] = f"not available ({', '.join(params.image_roots)})"
        return
    index = pd.concat(indexes, ignore_index=True)
    index["unit_id"] = index["unit_id"].astype(str)
    inputs.image_index = index
    configs = sorted(index["config"].astype(str).unique())
    if params.base_configs:
        inputs.base_configs = [c for c in params.base_configs if c in configs]
    else:
        explicit = index[index["variant"].isin(VARIANTS[1:])]["config"].astype(str).unique()
        inputs.base_configs = sorted(explicit)
    inputs.debias_configs = [c for c in configs if c not in inputs.base_configs]
    ok = int((index["status"] == "ok").sum())
    inputs.available["images"] = (
        f"ok: {ok} images in {len(configs)} configuration(s) "
        f"(benchmark: {', '.join(inputs.base_configs) or 'none'}; "
        f"debiasing: {', '.join(inputs.debias_configs) or 'none'})"
    )


def _metrics_rank(name: str) -> tuple[int, str]:
    return (METRICS_ORDER.index(name) if name in METRICS_ORDER else len(METRICS_ORDER), name)


def _load_metrics(
    inputs: ReportInputs, params: ReportParams, root: Path, scope: Scope | None = None
) -> None:
    base = root / params.metrics_dir
    # summary.json is derived from the files shown here by a stage that runs after or beside
    # the report (docs/metrics.md): leaving it out keeps the report a function of its declared deps
    files = (
        sorted(
            (p for p in base.glob("*.json") if p.name != "summary.json"),
            key=lambda p: _metrics_rank(p.stem),
        )
        if base.is_dir()
        else []
    )
    check_all(scope, files, "report.metrics_dir")
    for path in files:
        try:
            inputs.metrics[path.stem] = read_json(path)
        except ValueError as exc:
            raise InputError(path, None, None, f"not valid JSON: {exc}") from None
        if path.stem == "benchmark":
            inputs.benchmark = BenchmarkFile.from_json(inputs.metrics["benchmark"], path)
        check = METRICS_CHECKS.get(path.stem)
        if check is not None:
            check(inputs.metrics[path.stem], path)
    inputs.available["metrics"] = (
        f"ok: {', '.join(p.name for p in files)}"
        if files
        else f"not available ({params.metrics_dir}/)"
    )


def _load_plots(
    inputs: ReportInputs, params: ReportParams, root: Path, scope: Scope | None = None
) -> None:
    base = root / params.plots_dir
    files = sorted(base.glob("*.csv")) if base.is_dir() else []
    check_all(scope, files, "report.plots_dir")
    for path in files:
        inputs.plots[path.name] = read_table(path)
    if (root / params.dvc_file).exists():
        check_all(scope, [root / params.dvc_file], "report.dvc_file")
    inputs.plot_specs = plot_specs(root / params.dvc_file)
    inputs.available["plots"] = (
        f"ok: {len(inputs.plots)} CSV file(s)"
        if inputs.plots
        else f"not available ({params.plots_dir}/*.csv)"
    )


def plot_specs(dvc_file: Path) -> dict[str, dict[str, Any]]:
    """``{csv file name: {x, y, template, title}}`` from the top-level ``plots`` of dvc.yaml."""
    if not dvc_file.exists():
        return {}
    data = load_yaml_file(dvc_file) or {}
    specs: dict[str, dict[str, Any]] = {}
    for entry in data.get("plots") or []:
        if isinstance(entry, str):
            specs[Path(entry).name] = {}
            continue
        for name, spec in (entry or {}).items():
            spec = dict(spec or {})
            y = spec.get("y")
            if isinstance(y, dict):  # plot id -> {file: field(s)}
                for file, fields in y.items():
                    specs[Path(file).name] = {"title": name, **spec, "y": fields}
            else:
                specs[Path(name).name] = spec
    return specs


def _detect_random(inputs: ReportInputs) -> None:
    """Everything that says it came from randomly initialised models."""
    found: list[str] = []
    for name, payload in inputs.metrics.items():
        if _has_random_flag(payload):
            found.append(f"metrics/{name}.json")
    for label, frame, column in (
        ("judgements", inputs.judgements, "model"),
        ("images", inputs.image_index, "generator"),
    ):
        if frame is not None and column in frame.columns:
            refs = [r for r in frame[column].dropna().astype(str).unique() if is_random_init(r)]
            if refs:
                found.append(f"{label} ({', '.join(sorted(refs))})")
    inputs.random_sources = found


def _has_random_flag(payload: Any, depth: int = 0) -> bool:
    if depth > 3 or not isinstance(payload, dict):
        return False
    if payload.get("random_init") is True:
        return True
    return any(
        _has_random_flag(v, depth + 1)
        for k, v in payload.items()
        if isinstance(v, dict) and k != "by_bias_type"
    )


RANDOM_WARNING = RANDOM_INIT_WARNING
