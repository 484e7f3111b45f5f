"""Stage `select`: rubric judgements ->
data/processed/selected_units.parquet, metrics/selection.json.

The script is not stages/select.py: that name would shadow the standard library's `select`
module for every script in stages/ (Python puts the script's folder first on sys.path).
"""

from __future__ import annotations

import click
import pandas as pd

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.analysis.stage import SelectParams, load_tables, run_select
from implicit_bench.params import load_params, section
from implicit_bench.protocol.tables import SELECTED_UNITS, SELECTED_UNITS_PATH
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", default=SELECTED_UNITS_PATH, show_default=True)
@click.option("--metrics", default="metrics/selection.json", show_default=True)
def main(params_path: str, out: str, metrics: str) -> None:
    raw = load_params(params_path)
    release = (raw.get("benchmark") or {}).get("path")
    if release:  # a benchmark run on the authors' release: no construction, nothing to select
        SELECTED_UNITS.write(pd.DataFrame(columns=list(SELECTED_UNITS.required)), out)
        write_metrics(
            metrics,
            {
                "applied": False,
                "skipped": "a benchmark run on the authors' release (benchmark.path): "
                "construction and selection skipped, the release's units are the unit set",
                "units_kept": 0,
            },
            "select",
        )
        click.echo(f"select: skipped (benchmark run on {release}) -> {out}")
        return
    params = section(
        raw,
        "select",
        SelectParams,
        params_path,
        inherit={"bootstrap": "bootstrap", "primary_order": "primary_order"},
    )
    tables = load_tables(
        params.units,
        params.judgements,
        (),
        params.on_bad_row,
        params.on_duplicate,
        params.primary_order,
    )
    result = run_select(tables, params)
    result.metrics["applied"] = True
    SELECTED_UNITS.write(result.selected, out)
    write_metrics(metrics, result.metrics, "select")
    click.echo(
        f"select: kept {result.metrics['units_kept']} of "
        f"{result.metrics['units_candidates']} units ({params.rule}) -> {out}"
    )


if __name__ == "__main__":
    main()
