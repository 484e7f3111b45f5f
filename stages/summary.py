"""Stage `summary`: the headline metrics/summary.json (the one DVC metric) from
the detail metrics files."""

from __future__ import annotations

import click

from implicit_bench._util.files import write_json
from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.report.summary.stage import headline, load_detail_metrics


@click.command(cls=FriendlyCommand)
@click.option("--metrics-dir", default="metrics", show_default=True)
@click.option("--out", default="metrics/summary.json", show_default=True)
def main(metrics_dir: str, out: str) -> None:
    summary = headline(load_detail_metrics(metrics_dir))
    write_json(out, summary)
    click.echo(f"summary: {len(summary)} values -> {out}")


if __name__ == "__main__":
    main()
