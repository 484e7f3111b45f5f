"""Stage `sources`: vendored StereoSet + CrowS-Pairs -> data/interim/pairs.parquet."""

from __future__ import annotations

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.construction.sources.stage import SourcesParams, build_pairs, pair_metrics
from implicit_bench.params import load_params, section
from implicit_bench.protocol.tables import PAIR_REJECTS, PAIR_REJECTS_PATH, PAIRS, PAIRS_PATH
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", default=PAIRS_PATH, show_default=True)
@click.option("--rejects", default=PAIR_REJECTS_PATH, show_default=True)
@click.option("--metrics", default="metrics/sources.json", show_default=True)
def main(params_path: str, out: str, rejects: str, metrics: str) -> None:
    params = section(load_params(params_path), "sources", SourcesParams, params_path)
    pairs, rejected = build_pairs(params)
    PAIRS.write(pairs, out)
    PAIR_REJECTS.write(rejected, rejects)
    write_metrics(metrics, pair_metrics(pairs, rejected), "sources")
    click.echo(f"sources: {len(pairs)} pairs, {len(rejected)} rejected rows -> {out}")


if __name__ == "__main__":
    main()
