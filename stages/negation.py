"""Stage `negation`: strict / lenient success and forbidden-rendered rate of negated prompts,
next to the affirmative anti-stereotype prompt (overall, by bias type, by default strength)."""

from __future__ import annotations

import click

from implicit_bench._util.files import write_table
from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.audits.stage import (
    UNIT_COLUMNS_USED,
    UPSTREAM_METRICS,
    NegationParams,
    negation_section,
    upstream_provenance,
)
from implicit_bench.params import load_params, section
from implicit_bench.protocol.tables import UNITS, UNITS_PATH, existing
from implicit_bench.protocol.tables.judgements import read_judgements
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--units", default=UNITS_PATH, show_default=True)
@click.option("--metrics", default="metrics/negation.json", show_default=True)
@click.option("--plot", default="plots/negation_by_strength.csv", show_default=True)
def main(params_path: str, units: str, metrics: str, plot: str) -> None:
    raw = load_params(params_path)
    params = section(
        raw,
        "negation",
        NegationParams,
        params_path,
        inherit={"bootstrap": "bootstrap", "primary_order": "primary_order"},
    )
    read = existing(params.judgements, "judgements")
    judgements = read_judgements(read)
    report, plot_rows = negation_section(
        judgements,
        UNITS.read(units, require=UNIT_COLUMNS_USED),
        params,
        raw,
        params_path,
        read,
        upstream_provenance(UPSTREAM_METRICS),
    )
    write_metrics(metrics, report, "negation")
    write_table(plot_rows, plot)
    click.echo(f"negation: {len(report['by_judge'])} judges -> {metrics}")


if __name__ == "__main__":
    main()
