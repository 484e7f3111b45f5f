"""Stage `triplets`: KG units -> prompt triplets + the subset taken further (paper Stage 2; docs/triplets.md)."""

from __future__ import annotations

import click

from implicit_bench.clierrors import FriendlyCommand
from implicit_bench.io import read_table, write_jsonl, write_table
from implicit_bench.params import SubsetParams, catalogue, load_params, section
from implicit_bench.runlog import write_metrics
from implicit_bench.triplets.stage import TripletsParams, run_triplets, units_from_frame


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--units", "units_path", default="data/interim/kg_units.parquet", show_default=True)
@click.option("--pairs", default="data/interim/pairs.parquet", show_default=True)
@click.option("--out", default="data/interim/triplets.parquet", show_default=True)
@click.option("--subset-out", default="data/interim/units.parquet", show_default=True)
@click.option("--invalid", default="data/interim/triplets_invalid.jsonl", show_default=True)
@click.option("--metrics", default="metrics/triplets.json", show_default=True)
def main(params_path: str, units_path: str, pairs: str, out: str, subset_out: str, invalid: str, metrics: str) -> None:
    raw = load_params(params_path)
    params = section(raw, "triplets", TripletsParams, params_path)
    subset = section(raw, "subset", SubsetParams, params_path)
    llms = catalogue(raw, "llms", params_path)
    units = units_from_frame(read_table(units_path), units_path)
    pair_table = read_table(pairs) if params.writer == "llm" else None
    table, chosen, bad, report = run_triplets(units, pair_table, params, subset, llms)
    write_table(table, out)
    write_table(chosen, subset_out)
    write_jsonl(invalid, bad)
    write_metrics(metrics, report, "triplets")
    click.echo(
        f"triplets ({params.writer}): {report['triplets_total']} triplets "
        f"({report['check_violations']['triplets_with_violation']} flagged, {len(bad)} invalid); "
        f"{report['subset_units']} units -> {subset_out}"
    )


if __name__ == "__main__":
    main()
