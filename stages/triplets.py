"""Stage `triplets`: KG units -> prompt triplets + the subset taken further (paper
Stage 2; docs/triplets.md)."""

from __future__ import annotations

import click

from implicit_bench._util.files import write_jsonl
from implicit_bench.construction.triplets.stage import (
    PAIR_COLUMNS_USED,
    TripletsParams,
    run_triplets,
    units_from_frame,
)
from implicit_bench.params import SubsetParams, catalogue, load_params, section
from implicit_bench.protocol.tables import (
    KG_UNITS,
    KG_UNITS_PATH,
    PAIRS,
    PAIRS_PATH,
    TRIPLETS,
    TRIPLETS_INVALID_PATH,
    TRIPLETS_PATH,
    UNITS,
    UNITS_PATH,
)
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--units", "units_path", default=KG_UNITS_PATH, show_default=True)
@click.option("--pairs", default=PAIRS_PATH, show_default=True)
@click.option("--out", default=TRIPLETS_PATH, show_default=True)
@click.option("--subset-out", default=UNITS_PATH, show_default=True)
@click.option("--invalid", default=TRIPLETS_INVALID_PATH, show_default=True)
@click.option("--metrics", default="metrics/triplets.json", show_default=True)
def main(
    params_path: str,
    units_path: str,
    pairs: str,
    out: str,
    subset_out: str,
    invalid: str,
    metrics: str,
) -> None:
    raw = load_params(params_path)
    params = section(raw, "triplets", TripletsParams, params_path)
    subset = section(raw, "subset", SubsetParams, params_path)
    llms = catalogue(raw, "llms", params_path)
    units = units_from_frame(KG_UNITS.read(units_path), units_path)
    pair_table = PAIRS.read(pairs, require=PAIR_COLUMNS_USED) if params.writer == "llm" else None
    table, chosen, bad, report = run_triplets(units, pair_table, params, subset, llms)
    TRIPLETS.write(table, out)
    UNITS.write(chosen, subset_out)
    write_jsonl(invalid, bad)
    write_metrics(metrics, report, "triplets")
    click.echo(
        f"triplets ({params.writer}): {report['triplets_total']} triplets "
        f"({report['check_violations']['triplets_with_violation']} flagged, {len(bad)} invalid); "
        f"{report['subset_units']} units -> {subset_out}"
    )


if __name__ == "__main__":
    main()
