"""Stage `sources`: vendored StereoSet + CrowS-Pairs -> data/interim/pairs.parquet."""

from __future__ import annotations

import click

from implicit_bench.clierrors import FriendlyCommand
from implicit_bench.io import write_table
from implicit_bench.params import load_params, section
from implicit_bench.runlog import write_metrics
from implicit_bench.sources.stage import SourcesParams, build_pairs, pair_metrics


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", default="data/interim/pairs.parquet", show_default=True)
@click.option("--rejects", default="data/interim/pairs_rejects.csv", show_default=True)
@click.option("--metrics", default="metrics/sources.json", show_default=True)
def main(params_path: str, out: str, rejects: str, metrics: str) -> None:
    params = section(load_params(params_path), "sources", SourcesParams, params_path)
    pairs, rejected = build_pairs(params)
    write_table(pairs, out)
    write_table(rejected, rejects)
    write_metrics(metrics, pair_metrics(pairs, rejected), "sources")
    click.echo(f"sources: {len(pairs)} pairs, {len(rejected)} rejected rows -> {out}")


if __name__ == "__main__":
    main()
