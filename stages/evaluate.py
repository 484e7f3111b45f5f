"""Stage `evaluate`: blind / rubric / CLIP judgements of the selected units
-> metrics, tables, plots."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench._util.files import read_json
from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.analysis.stage import (
    evaluate,
    evaluate_inputs,
    judge_provenance,
    one_blas_thread,
    write_evaluation,
)
from implicit_bench.errors import InputError
from implicit_bench.params import load_params
from implicit_bench.protocol.tables import SELECTED_UNITS
from implicit_bench.release.stage import add_beside


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option(
    "--selection-metrics",
    default=None,
    help="Selection metrics (default: evaluate.inputs.selection_metrics; read with a selection).",
)
@click.option("--out", default=".", show_default=True, help="Root of metrics/, tables/, plots/.")
def main(params_path: str, selection_metrics: str | None, out: str) -> None:
    params, tables = evaluate_inputs(load_params(params_path), params_path)
    analysed = tables.units
    if params.selected_units:
        selected = SELECTED_UNITS.read(params.selected_units)
        unknown = sorted(set(selected["unit_id"]) - set(tables.units["unit_id"]))
        if unknown:
            raise InputError(
                params.selected_units,
                None,
                "unit_id",
                f"{len(unknown)} selected units not in {params.units}: {unknown[:5]}",
            )
        extra = ["unit_id", "selected_by"] if "selected_by" in selected.columns else ["unit_id"]
        analysed = tables.units.merge(selected[extra], on="unit_id")
    # Tables 3, 9, 10 describe a selection: read only where a selection is analysed
    selection_metrics = selection_metrics or params.inputs.selection_metrics
    sel = (
        read_json(selection_metrics)
        if params.selected_units and Path(selection_metrics).exists()
        else None
    )
    with (
        one_blas_thread()
    ):  # small matrix products: threads cost more than they save (docs/analysis.md)
        ev = evaluate(tables, analysed, params)
        add_beside(ev, tables, params)  # evaluate.beside_release: the release's generators
    write_evaluation(out, ev, tables, sel, judge_provenance(tables))
    dr = (ev.benchmark["default_rate"] or {}).get("value")
    click.echo(
        f"evaluate: {len(analysed)} units, config {ev.benchmark['config']}, default rate {dr}"
    )
    corrected = ev.benchmark.get("corrected")
    if corrected:
        warning = corrected["warning"]
        click.echo(
            "evaluate: corrected for judge error "
            f"({corrected['calibration']['items']} calibration images)"
            + (
                f"; WARNING: {warning}"
                if warning
                else f", default rate {corrected['all']['default_rate']['value']}"
            )
        )


if __name__ == "__main__":
    main()
