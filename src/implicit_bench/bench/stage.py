"""Entry module of the benchmark phase's stages: ``bench_render`` and ``bench_judge``.

``bench_render`` renders every ``bench.generators`` entry (its variants and seeds) over its unit
set into ``data/bench_images/<name>/``; ``bench_judge`` asks ``bench.tasks`` about those stores
and about the construction stores' images of the fixed unit set (``data/images/<config>``,
other units skipped) and writes ``data/judgements/bench.parquet``. Neither reads a candidate
unit outside the unit set, so a new generator is evaluated without re-running construction
(docs/experiments.md, "Two phases").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from implicit_bench._util.files import write_json
from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.backends.judges.stage import JudgeRunResult, run_judge_stage
from implicit_bench.bench.params import BenchParams
from implicit_bench.params import check_refs, section
from implicit_bench.protocol.tables import (
    BENCH_IMAGES_DIR,
    BENCH_JUDGEMENTS_PATH,
    UNITS,
)
from implicit_bench.render.images import published_stores, unpublish
from implicit_bench.render.params import RenderParams
from implicit_bench.render.stage import STORES_MANIFEST, render_config, unit_columns

BENCH_JUDGE_METRICS = "metrics/bench_judge.json"


def bench_render_params(raw: dict[str, Any], name: str) -> RenderParams:
    """The render params of one bench generator: its generators entry, variants and seeds;
    the construction render's executor settings."""
    bench = section(raw, "bench", BenchParams)
    render = section(raw, "render", RenderParams, attach={"generators": "configs"})
    entry, gen = bench.generators[name], bench.generator_of(name)
    check_refs(gen, render.configs, f"bench.generators.{name}.generator", "generators")
    return render.model_copy(
        update={
            "configs": {name: render.configs[gen]},
            "run": [name],
            "seeds": list(entry.seeds),
            "variants": list(entry.variants),
            "executors": {name: render.executor_for(gen)},
        }
    )


def run_bench_render(
    raw: dict[str, Any], root: str | Path = ".", images_dir: str = BENCH_IMAGES_DIR
) -> dict[str, dict[str, Any]]:
    """Render every bench generator over its unit set; stores of entries gone are unpublished."""
    root = Path(root)
    bench = section(raw, "bench", BenchParams)
    plans = {name: bench_render_params(raw, name) for name in bench.selected()}  # all checked
    out = root / images_dir
    out.mkdir(parents=True, exist_ok=True)  # the stage's DVC output, also with no generator
    for store_dir in published_stores(out):
        if store_dir.name not in plans:
            unpublish(store_dir)
    results = {}
    for name, params in plans.items():
        entry = bench.generators[name]
        extra = ("bias_type",) if entry.units != "selected" else ()  # a subset's rule reads it
        table = UNITS.read(root / bench.units, require=(*unit_columns(params.variants), *extra))
        units = bench.unit_set(table, entry.units)
        results[name] = render_config(name, params.configs[name], units, out / name, params)
    # the folder's manifest: which stores it holds (none on a profile without bench generators,
    # where DVC would otherwise warn of an empty output at every later stage)
    write_json(out / STORES_MANIFEST, {"stores": sorted(plans)})
    return results


def bench_judge_params(raw: dict[str, Any]) -> JudgeStageParams:
    """The judge stage's params for the benchmark phase: ``bench.tasks`` over the bench stores
    and the construction stores they name, the fixed unit set's images only."""
    bench = section(raw, "bench", BenchParams)
    judge = section(raw, "judge", JudgeStageParams, attach={"judges": "judges"})
    tasks: dict[str, Any] = {}
    for task, select in bench.tasks.items():
        chosen = select.model_dump() if select is not None else {}
        if chosen.get("configs") is None:
            chosen["configs"] = bench.selected()  # null: every bench generator rendered
        tasks[task] = chosen
    configs = list(dict.fromkeys(c for t in tasks.values() for c in t["configs"]))
    used = {
        j
        for t in tasks.values()
        for j in [
            *(t["judges"] if t.get("judges") is not None else judge.judges),
            *(j for names in t.get("judges_by_config", {}).values() for j in names),
        ]
    }
    check_refs(sorted(used), judge.judges, "bench.tasks.*.judges", "judges")
    return JudgeStageParams.model_validate(
        {
            **judge.model_dump(),
            "judges": {j: judge.judges[j] for j in judge.judges if j in used},
            "tasks": tasks,
            "configs": configs,
            "blind_orders": bench.blind_orders,
            "both_orders_units": bench.both_orders_units,
            "units": bench.units,
            "images_dir": judge.images_dir,  # a fixed unit set: data/bench_images (overlay)
            "config_dirs": {c: BENCH_IMAGES_DIR for c in configs if c in bench.selected()},
            "only_listed_units": True,
            "out": BENCH_JUDGEMENTS_PATH,
            "metrics": BENCH_JUDGE_METRICS,
        }
    )


def run_bench_judge(
    raw: dict[str, Any], root: str | Path = ".", profile: str | None = None
) -> JudgeRunResult:
    """Ask the benchmark phase's tasks; an empty ``bench.tasks`` writes an empty table."""
    return run_judge_stage(bench_judge_params(raw), root, profile=profile)


def run_b6(
    raw: dict[str, Any], root: str | Path = ".", profile: str | None = None
) -> dict[str, Any]:
    """Stage ``b6`` (Appendix B.6): the third judge on the subset rule (``bench.b6``, imported
    here only when the stage runs, so the other benchmark stages do not depend on it)."""
    from implicit_bench.bench.b6 import run_b6 as run

    return run(raw, root, profile)


__all__ = [
    "BENCH_JUDGE_METRICS",
    "BenchParams",
    "bench_judge_params",
    "bench_render_params",
    "run_b6",
    "run_bench_judge",
    "run_bench_render",
]
