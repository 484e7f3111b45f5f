"""``plan --target-width W``: the smallest stratified design reaching W, and what it costs.

The variance components come from judgements already made (``--variances-from DIR``: an
``implicit-bench import`` output of the authors' release, or any folder with a units table and
judgement tables; by default the workspace's own judgements, a pilot of the run's first units)
and the design from ``analysis.design``. Its price is the full plan's render and judge hours
and money scaled by the design's share of the images (docs/experiments.md, "A design to a
target width").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.analysis.design import Components, components, design, image_values
from implicit_bench.analysis.params import EvaluateParams
from implicit_bench.errors import ConfigError
from implicit_bench.params import section
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.tables import JUDGEMENTS_PATH, UNITS_PATH

TABLE_SUFFIXES = (".csv", ".parquet")
# read as the analysis reads by default (EvaluateParams): bad rows rejected, duplicates dropped
LOAD_SETTINGS = ("on_bad_row", "on_duplicate", "primary_order")


def source_tables(source: str | None, root: Path) -> tuple[Any, str]:
    """Validated units and judgements of ``source`` (a folder) or of the workspace."""
    from implicit_bench.analysis.load import load_tables

    if source is None:
        units, judgements = root / UNITS_PATH, [root / JUDGEMENTS_PATH]
        if not units.exists() or not judgements[0].exists():
            raise ConfigError(
                f"--target-width: no pilot judgements in this workspace ({UNITS_PATH}, "
                f"{JUDGEMENTS_PATH}): judge a first round of units, or pass --variances-from "
                "DIR (e.g. an `implicit-bench import` of the authors' release)"
            )
        where = "this workspace's judgements (pilot)"
    else:
        folder = Path(source)
        tables = sorted(p for p in folder.iterdir() if p.suffix in TABLE_SUFFIXES)
        unit_files = [p for p in tables if p.stem == "units"]
        judgements = [p for p in tables if p.stem.startswith("judgements")]
        if not unit_files or not judgements:
            raise ConfigError(
                f"--variances-from {folder}: needs units.csv|parquet and judgements*.csv|parquet"
            )
        units = unit_files[0]
        where = str(folder)
    from implicit_bench.analysis.params import EvaluateParams

    defaults = {k: EvaluateParams.model_fields[k].default for k in LOAD_SETTINGS}
    tables = load_tables(str(units), [str(p) for p in judgements], (), *defaults.values())
    return tables, where


def default_estimands(judgements: pd.DataFrame) -> list[str]:
    """The headline rates (when blind labels exist) and Table 4's two scores."""
    tasks = set(judgements["task"].astype(str))
    names = list(metric_schema.headline()) if "blind" in tasks else []
    return names + [
        m for m, t in (("bias_score", "rubric"), ("alignment", "alignment")) if t in tasks
    ]


def estimand_components(
    tables: Any, names: list[str]
) -> tuple[dict[str, Components], dict[str, str]]:
    """Components per estimand; a Table 4 score without a configuration takes, per bias type,
    the largest components among the source's configurations (a new model's stand-in)."""
    j = tables.judgements
    types = tables.units.set_index("unit_id")["bias_type"]
    blind = j[j["task"] == "blind"]
    judge = config = None
    if len(blind):
        ordered = blind[blind["order"].notna()] if "order" in blind else blind
        judge = sorted((ordered if len(ordered) else blind)["judge"].astype(str).unique())[0]
        config = sorted(blind.loc[blind["judge"] == judge, "config"].astype(str).unique())[0]
    comps: dict[str, Components] = {}
    notes: dict[str, str] = {}
    for name in names:
        if name in ("bias_score", "alignment"):
            task = "rubric" if name == "bias_score" else "alignment"
            rows = j[(j["task"] == task) & (j["variant"] == "neutral")]
            configs = sorted(rows["config"].astype(str).unique())
            if not configs:
                raise ConfigError(f"--estimand {name}: the source has no neutral {task} rows")
            each = [
                components(image_values(j, f"{name}/{c}", None, None), types, name) for c in configs
            ]
            strata = sorted({h for c in each for h in c.between})
            widest = max(each, key=lambda c: sum(c.between.values()) + sum(c.within.values()))
            comps[name] = Components(
                {h: max(c.between.get(h, 0.0) for c in each) for h in strata},
                {h: max(c.within.get(h, 0.0) for c in each) for h in strata},
                {h: widest.means.get(h, 0.0) for h in strata},
                each[0].variants,
            )
            notes[name] = f"largest per bias type of {', '.join(configs)}"
        else:
            comps[name] = components(image_values(j, name, judge, config), types, name)
            notes[name] = (
                f"judge {judge}, config {config}" if name in metric_schema.headline() else ""
            )
    return comps, notes


def target_design(
    params: dict[str, Any],
    plans: list[Any],
    info: dict[str, Any],
    target: float,
    names: tuple[str, ...],
    source: str | None,
    root: Path,
) -> dict[str, Any]:
    """The design, its images and its price beside the full plan's."""
    tables, where = source_tables(source, root)
    chosen = list(names) or default_estimands(tables.judgements)
    comps, notes = estimand_components(tables, chosen)
    n_units = int(info["units"])
    shares = tables.units["bias_type"].value_counts(normalize=True)
    sizes = {str(h): max(1, round(n_units * float(w))) for h, w in shares.items()}
    # the interval level the evaluate stage uses (its own bootstrap block over the top-level one)
    evaluate = section(params, "evaluate", EvaluateParams, inherit={"bootstrap": "bootstrap"})
    level = evaluate.bootstrap.level
    max_seeds = max(1, len(info.get("seeds") or []) or 3)
    best = design(comps, sizes, target, max_seeds, level)
    full_images = sum(sizes.values()) * max_seeds * 3  # every variant, as the full plan renders
    scale = best.images_per_generator / full_images  # the design renders only what it needs
    cost = {"full": _cost(plans, 1.0), "design": _cost(plans, scale)}
    return {
        "target_half_width": target,
        "level": level,
        "variances_from": where,
        "estimands": {n: {"half_width": best.half_widths[n], "source": notes[n]} for n in chosen},
        "units": best.units,
        "seeds": best.seeds,
        "units_per_bias_type": best.per_type,
        "images_per_generator_needed": best.images_per_generator,
        "images_per_generator_full": best.full_images_per_generator,
        "candidates": best.candidates,
        "cost": cost,
    }


def _cost(plans: list[Any], scale: float) -> dict[str, float]:
    """Render and judge calls, GPU-hours and money of ``plans`` times ``scale``."""
    scaled = [p for p in plans if p.stage.startswith(("render", "judge"))]
    return {
        "model_calls": round(sum(p.model_calls for p in scaled) * scale),
        "gpu_hours": round(sum(p.hours or 0 for p in scaled if p.gpu) * scale, 2),
        "api_hours": round(sum(p.hours or 0 for p in scaled if not p.gpu) * scale, 2),
        "usd": round(sum(p.usd or 0 for p in scaled) * scale, 2),
    }


def format_design(d: dict[str, Any]) -> str:
    lines = [
        "",
        f"design to half-width {d['target_half_width']} (level {d['level']}; variances from "
        f"{d['variances_from']}):",
    ]
    for name, e in d["estimands"].items():
        source = f"  ({e['source']})" if e["source"] else ""
        lines.append(f"  {name:<22} half-width {e['half_width']:.4f}{source}")
    per_type = ", ".join(f"{h} {n}" for h, n in d["units_per_bias_type"].items())
    lines.append(f"  units: {d['units']:,} ({per_type}); seeds: {d['seeds']}")
    lines.append(
        f"  images per generator for these estimands: {d['images_per_generator_needed']:,} of "
        f"{d['images_per_generator_full']:,}"
    )
    for c in d["candidates"]:
        if c["reached"]:
            lines.append(
                f"    {c['seeds']} seed(s): {c['units']:,} units, "
                f"{c['images_per_generator']:,} images"
            )
        else:
            lines.append(f"    {c['seeds']} seed(s): not reached with every unit")
    full, ours = d["cost"]["full"], d["cost"]["design"]
    lines.append(
        f"  render + judge: {ours['model_calls']:,} model calls, {ours['gpu_hours']:,.2f} GPU-h, "
        f"{ours['api_hours']:,.2f} API h, ${ours['usd']:,.2f}; full benchmark: "
        f"{full['model_calls']:,} calls, {full['gpu_hours']:,.2f} GPU-h, "
        f"{full['api_hours']:,.2f} API h, ${full['usd']:,.2f}"
    )
    return "\n".join(lines)
