"""The ``select`` and ``evaluate`` computations and ``analyze`` (both, plus extensions).

Output layout (the same under the repository root for the DVC stages and under ``--out`` for
``implicit-bench analyze``): ``metrics/selection.json``, ``metrics/benchmark.json``,
``metrics/lean.json``, ``tables/*.csv|md``, ``plots/*.csv``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench._util.files import write_json
from implicit_bench._util.heap import keep_freed_memory  # noqa: F401 - re-exported for the stage scripts
from implicit_bench.analysis import paper_tables
from implicit_bench.analysis.bootstrap import (  # noqa: F401 - one_blas_thread re-exported for the stage scripts
    Bootstrap,
    one_blas_thread,
)
from implicit_bench.analysis.context import EvalContext
from implicit_bench.analysis.direct_arm import direct_arm_block, scored_rubric_rows
from implicit_bench.analysis.load import Tables, image_index_paths, load_tables  # noqa: F401 - re-exported for the stage scripts
from implicit_bench.analysis.metrics import run_metrics
from implicit_bench.analysis.params import EvaluateParams, SelectParams
from implicit_bench.analysis.selection import SelectionResult, select_units
from implicit_bench.errors import InputError
from implicit_bench.params import section
from implicit_bench.protocol.tables import KG_UNITS, PAIRS
from implicit_bench.runtime.provenance import provenance


def judge_provenance(tables: Tables) -> dict[str, Any]:
    """Provenance of the judges behind the judgements (``model`` column when present)."""
    j = tables.judgements
    if "model" not in j.columns or j["model"].isna().all():
        return provenance([])
    models = (
        j[["judge", "task", "model"]]
        .dropna()
        .drop_duplicates()
        .sort_values(["task", "judge", "model"])
    )
    return provenance([(f"{r.task}:{r.judge}", r.model) for r in models.itertuples()])


def run_select(tables: Tables, params: SelectParams) -> SelectionResult:
    pairs = None
    if params.pairs and Path(params.pairs).exists():
        pairs = PAIRS.read(params.pairs, require=("bias_type",))
    extracted = None
    if params.extracted and Path(params.extracted).exists():
        extracted = KG_UNITS.read(params.extracted, require=("unit_id", "bias_type"))
    result = select_units(tables, params, pairs, extracted)
    # App. C.1: the direct arm's contrast rate beside the unit-based arm's (opt-in variants)
    direct = direct_arm_block(
        scored_rubric_rows(params.judgements), Bootstrap.from_params(params.bootstrap)
    )
    if direct is not None:
        result.metrics["direct_arm"] = direct
    result.metrics["raw_upstream_from"] = params.pairs if pairs is not None else None
    result.metrics["post_extraction_from"] = params.extracted if extracted is not None else None
    result.metrics["inputs"] = tables.summary()
    result.metrics["provenance"] = judge_provenance(tables)
    result.metrics = paper_tables.clean(result.metrics)
    return result


def evaluate_inputs(params: dict[str, Any], where: str) -> tuple[EvaluateParams, Tables]:
    """The ``evaluate`` section of ``params`` and the tables it names (units, every judgements
    table, the image index), validated: what the evaluate stage reads, and every look of a
    sequential run."""
    ev = section(
        params,
        "evaluate",
        EvaluateParams,
        where,
        inherit={"bootstrap": "bootstrap", "primary_order": "primary_order"},
    )
    try:
        tables = load_tables(
            ev.units,
            ev.judgements,
            image_index_paths(ev.image_index_glob),
            ev.on_bad_row,
            ev.on_duplicate,
            ev.primary_order,
        )
    except InputError as exc:
        raise _with_upstream(exc) from None
    return ev, tables


def _with_upstream(exc: InputError) -> InputError:
    """An empty input table names the stage that wrote it (dvc.yaml) and where its counts are,
    so the user looks where the rows were lost, not at evaluate."""
    from implicit_bench.runtime.dvc import producing_stage

    stage = producing_stage(str(exc.path)) if "no data rows" in str(exc) else None
    if stage is None:
        return exc
    return InputError(
        exc.path,
        exc.row,
        exc.field,
        f"{exc.reason}: stage {stage} wrote no rows (its counts and first errors: "
        f"metrics/{stage}.json and logs/runs.jsonl)",
    )


@dataclass
class Evaluation:
    benchmark: dict[str, Any]
    lean: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    plots: dict[str, pd.DataFrame] = field(default_factory=dict)


def evaluate(tables: Tables, analysed: pd.DataFrame, params: EvaluateParams) -> Evaluation:
    """Every registered metric (``analysis.metrics.METRICS``; ``evaluate.metrics`` selects) on
    the ``analysed`` units: benchmark.json and lean.json, their tables and plots."""
    ctx = EvalContext.build(tables, analysed, params)
    ctx.benchmark.update(
        {
            "config": ctx.config,
            "primary_judge": ctx.primary_judge,
            "blind_judges": ctx.blind_judges,
            "units": len(ctx.unit_ids),
            "seeds": ctx.seeds,
            "n_seeds": ctx.k,
        }
    )
    run_metrics(ctx, params.metrics)
    ctx.benchmark["diagnostic_types"] = ctx.diagnostic
    ctx.benchmark["bootstrap"] = ctx.boot.block()
    ctx.lean["bootstrap"] = ctx.boot.block()
    return Evaluation(ctx.benchmark, ctx.lean, ctx.tables_out, ctx.plots)


def write_evaluation(
    out_dir: str | Path,
    ev: Evaluation,
    tables: Tables,
    selection_metrics: dict[str, Any] | None,
    prov: dict[str, Any],
) -> None:
    """metrics/benchmark.json, metrics/lean.json, tables/ and plots/ under ``out_dir``."""
    out = Path(out_dir)
    ev.benchmark["inputs"] = tables.summary()
    ev.benchmark["provenance"] = prov
    ev.lean["provenance"] = prov
    write_json(out / "metrics" / "benchmark.json", paper_tables.clean(ev.benchmark))
    write_json(out / "metrics" / "lean.json", paper_tables.clean(ev.lean))
    all_tables = dict(ev.tables)
    if selection_metrics is not None and "retention" in selection_metrics:
        # (a benchmark run on the authors' release skips selection: no retention to tabulate)
        all_tables.update(paper_tables.selection_tables(selection_metrics))
    paper_tables.write_tables(out, all_tables, prov=prov)
    paper_tables.write_tables(
        out, {"rejected_rows": tables.rejects, "duplicate_keys": tables.duplicates}, markdown=False
    )
    paper_tables.write_plots(out, ev.plots)
