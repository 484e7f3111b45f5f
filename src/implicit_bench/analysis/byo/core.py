"""The ``analyze`` tool's work: every analysis metric from tables produced elsewhere.

No model is loaded: :func:`run_analyze` reads a UNITS table and one or more JUDGEMENTS tables
(CSV or Parquet; formats in docs/byo-judgements.md) and writes the same metrics JSON, tables and
plot data as the ``select`` and ``evaluate`` stages, then runs the registered extensions. The
command (options, printing) is ``implicit_bench.cli.analyze``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from implicit_bench._util.dirswap import check_owned, staged_dir
from implicit_bench._util.files import write_json
from implicit_bench._util.timings import phase
from implicit_bench.analysis.bootstrap import one_blas_thread
from implicit_bench.analysis.byo.extensions import start_extensions
from implicit_bench.analysis.load import load_tables
from implicit_bench.analysis.params import EvaluateParams, SelectParams
from implicit_bench.analysis.stage import (
    evaluate,
    judge_provenance,
    run_select,
    write_evaluation,
)
from implicit_bench.errors import ConfigError
from implicit_bench.params import block, section
from implicit_bench.protocol.tables import SELECTED_UNITS


def run_analyze(
    units: str,
    judgements: list[str],
    out: str,
    params: dict[str, Any] | None = None,
    refusals: tuple[str, ...] = (),
    selection: str = "none",
    pairs: str | None = None,
    anytime: tuple[Any, ...] | None = None,
) -> dict[str, Any]:
    """Load, validate, select (reported; applied unless ``selection == "none"``), evaluate,
    write, run extensions. Returns a short summary. ``anytime`` = (order file, looks[,
    covariates source, target half-width]): also write ``anytime.json`` (``analysis.looks``;
    covariates ``release``, a path or ``none``: ``analysis.covariates``)."""
    with one_blas_thread():
        return _run_analyze(
            units,
            judgements,
            out,
            params,
            refusals=refusals,
            selection=selection,
            pairs=pairs,
            anytime=anytime,
        )


def _run_analyze(
    units: str,
    judgements: list[str],
    out: str,
    params: dict[str, Any] | None,
    *,
    refusals: tuple[str, ...],
    selection: str,
    pairs: str | None,
    anytime: tuple[Any, ...] | None = None,
) -> dict[str, Any]:
    params = dict(params or {})
    sel_raw = {
        **block(params, "select", "analyze params"),
        "units": units,
        "judgements": list(judgements),
        "pairs": pairs,
    }
    ev_raw = {
        **block(params, "evaluate", "analyze params"),
        "units": units,
        "judgements": list(judgements),
        "selected_units": None,
        "image_index_glob": None,
    }
    sel_raw.setdefault(
        "extracted", None
    )  # Table 9's KG units only when the params name them (never the cwd's data/)
    if selection != "none":
        sel_raw["rule"] = selection
    if sel_raw.get("config") is None and ev_raw.get("config") is not None:
        sel_raw["config"] = ev_raw["config"]
    top = {
        "bootstrap": block(params, "bootstrap", "analyze params"),
        "primary_order": params.get("primary_order"),
    }  # top-level settings; a section's own keys win
    sel_params = section(
        {**top, "select": sel_raw},
        "select",
        SelectParams,
        "analyze",
        inherit={"bootstrap": "bootstrap", "primary_order": "primary_order"},
    )
    ev_params = section(
        {**top, "evaluate": ev_raw},
        "evaluate",
        EvaluateParams,
        "analyze",
        inherit={"bootstrap": "bootstrap", "primary_order": "primary_order"},
    )
    with phase("load"):
        tables = load_tables(
            units,
            judgements,
            refusals,
            ev_params.on_bad_row,
            ev_params.on_duplicate,
            ev_params.primary_order,
        )
    target = Path(out)
    check_owned(target, ANALYZE_FILES, "analyze")
    with staged_dir(target) as out_dir:  # swapped in whole at the end: a kill leaves the old run
        extensions = start_extensions(
            tables, out_dir, params
        )  # on the second CPU, while the analysis runs
        try:
            summary = _analysis(tables, out_dir, sel_params, ev_params, selection, anytime)
        except BaseException:
            extensions.cancel()
            raise
        with phase("extensions_wait"):
            summary["extensions"] = extensions.result()
    return summary


ANYTIME_FILE = "anytime.json"
# what analyze (and its extensions) write under --out; a folder holding other files is refused
ANALYZE_FILES = (
    r"(?:metrics|tables|plots)/.+",
    re.escape(Path(SELECTED_UNITS.path).name),
    re.escape(ANYTIME_FILE),
    r"(?:.*/)?\.[^/]+\.tmp",
)


def _analysis(
    tables: Any,
    out_dir: Path,
    sel_params: SelectParams,
    ev_params: EvaluateParams,
    selection: str,
    anytime: tuple[Any, ...] | None = None,
) -> dict[str, Any]:
    """Select (reported; applied unless ``selection == "none"``), evaluate and write (and the
    anytime-valid intervals of ``anytime`` = (order file, looks))."""
    analysed = tables.units
    selection_metrics = None
    summary: dict[str, Any] = {
        "units": len(tables.units),
        "rejected_rows": len(tables.rejects),
        "duplicate_keys": len(tables.duplicates),
    }
    if (tables.judgements["task"] == "rubric").any():
        try:
            with phase("select"):
                result = run_select(tables, sel_params)
        except ConfigError as exc:
            if selection != "none":
                raise
            summary["selection"] = f"not reported: {exc}"
        else:
            result.metrics["applied"] = selection != "none"
            selection_metrics = result.metrics
            write_json(out_dir / "metrics" / "selection.json", result.metrics)
            if selection != "none":
                analysed = tables.units[
                    tables.units["unit_id"].isin(set(result.selected["unit_id"]))
                ]
                analysed = analysed.merge(result.selected[["unit_id", "selected_by"]], on="unit_id")
                SELECTED_UNITS.write(result.selected, out_dir / Path(SELECTED_UNITS.path).name)
            summary["selection"] = {
                "rule": result.metrics["rule"],
                "applied": selection != "none",
                "kept": result.metrics["units_kept"],
            }
    elif selection != "none":
        raise ConfigError("analyze --selection needs rubric judgements")
    looks = None
    if anytime is not None:  # checked before the evaluation: a bad order costs nothing
        from implicit_bench.analysis.byo.covariates import load_covariates
        from implicit_bench.analysis.looks import parse_looks, read_order

        order = read_order(anytime[0], set(analysed["unit_id"].astype(str)))
        looks = parse_looks(anytime[1], len(order))
        source = anytime[2] if len(anytime) > 2 else "none"
        covariates = load_covariates(source, getattr(ev_params, "beside_release", None))
        target = anytime[3] if len(anytime) > 3 else None
    with phase("evaluate"):
        ev = evaluate(tables, analysed, ev_params)
        if getattr(ev_params, "beside_release", None):  # the release reader only when asked
            from implicit_bench.release.beside import add_beside

            add_beside(ev, tables, ev_params)  # evaluate.beside_release (docs/import.md)
    with phase("write"):
        write_evaluation(out_dir, ev, tables, selection_metrics, judge_provenance(tables))
    if looks is not None:
        from implicit_bench.analysis.context import EvalContext
        from implicit_bench.analysis.looks import anytime_report

        with phase("anytime"):
            ctx = EvalContext.build(tables, analysed, ev_params)
            report = anytime_report(
                ctx, order, looks, Path(anytime[0]).name, covariates=covariates, target=target
            )
            write_json(out_dir / ANYTIME_FILE, report)
        summary["anytime_looks"] = looks
    summary["analysed_units"] = len(analysed)
    summary["default_rate"] = (ev.benchmark["default_rate"] or {}).get("value")
    return summary
