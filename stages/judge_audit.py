"""Stage `judge_audit`: position bias, order flips and agreement gates of the blind judges."""

from __future__ import annotations

import click

from implicit_bench._util.files import write_table
from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.audits.stage import (
    UPSTREAM_METRICS,
    JudgeAuditParams,
    judge_audit_section,
    upstream_provenance,
)
from implicit_bench.params import load_params, section
from implicit_bench.protocol.tables import existing
from implicit_bench.protocol.tables.judgements import read_judgements
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--metrics", default="metrics/judge_audit.json", show_default=True)
@click.option("--plot", default="plots/position_bias.csv", show_default=True)
def main(params_path: str, metrics: str, plot: str) -> None:
    raw = load_params(params_path)
    params = section(
        raw,
        "judge_audit",
        JudgeAuditParams,
        params_path,
        inherit={"bootstrap": "bootstrap", "primary_order": "primary_order"},
    )
    read = existing(params.judgements, "judgements")
    judgements = read_judgements(read)
    report, plot_rows = judge_audit_section(
        judgements, params, raw, params_path, read, upstream_provenance(UPSTREAM_METRICS)
    )
    write_metrics(metrics, report, "judge_audit")
    write_table(plot_rows, plot)
    click.echo(f"judge_audit: {len(report['judges'])} judges -> {metrics}")


if __name__ == "__main__":
    main()
