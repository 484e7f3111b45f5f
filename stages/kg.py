"""Stage `kg`: sentence pairs -> bias knowledge-graph units (paper Stage 1; docs/kg.md)."""

from __future__ import annotations

import click

from implicit_bench._util.files import write_jsonl
from implicit_bench.construction.kg.stage import KGParams, read_pairs, run_kg
from implicit_bench.params import catalogue, load_params, section
from implicit_bench.protocol.tables import KG_INVALID_PATH, KG_UNITS, KG_UNITS_PATH, PAIRS_PATH
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--pairs", default=PAIRS_PATH, show_default=True)
@click.option("--out", default=KG_UNITS_PATH, show_default=True)
@click.option("--invalid", default=KG_INVALID_PATH, show_default=True)
@click.option("--metrics", default="metrics/kg.json", show_default=True)
def main(params_path: str, pairs: str, out: str, invalid: str, metrics: str) -> None:
    raw = load_params(params_path)
    params = section(raw, "kg", KGParams, params_path)
    units, records, report = run_kg(read_pairs(pairs), params, catalogue(raw, "llms", params_path))
    KG_UNITS.write(units, out)
    write_jsonl(invalid, records)
    write_metrics(metrics, report, "kg")
    click.echo(
        f"kg ({params.extractor}): {report['units_total']} units "
        f"from {report['pairs_total']} pairs; "
        f"{report['pairs_without_units']} pairs without a unit, "
        f"{report['invalid_records']} invalid answers -> {out}"
    )


if __name__ == "__main__":
    main()
