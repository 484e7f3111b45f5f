"""Stage `report`: the static HTML report (summary + unit browser) under report/."""

from __future__ import annotations

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.params import load_params, section
from implicit_bench.report.stage import ReportParams, build_report
from implicit_bench.runtime.runlog import log_run


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", default=None, help="output directory (default: params report.out)")
def main(params_path: str, out: str | None) -> None:
    params = section(load_params(params_path), "report", ReportParams, params_path)
    if out is not None:
        params = params.model_copy(update={"out": out})
    summary = build_report(params)
    log_run("report", {"seconds": summary.get("seconds")})
    flag = " (RANDOM-INIT inputs flagged)" if summary["random_init"] else ""
    click.echo(
        f"report: {summary['n_units']} units, {summary['n_thumbnails']} thumbnails, "
        f"{summary['n_chunks']} data chunks -> {params.out}/index.html{flag}"
    )


if __name__ == "__main__":
    main()
