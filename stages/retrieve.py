"""Stage `retrieve`: top-1 KG unit for every neutral prompt, full KG and own unit removed."""

from __future__ import annotations

import click

from implicit_bench.debias.stage import KG_COLUMNS, DebiasParams, run_retrieval
from implicit_bench.params import load_params, section
from implicit_bench.protocol.tables import RETRIEVAL, RETRIEVAL_PATH, UNITS
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", default=RETRIEVAL_PATH, show_default=True)
@click.option("--metrics", default="metrics/retrieval.json", show_default=True)
def main(params_path: str, out: str, metrics: str) -> None:
    params = section(load_params(params_path), "debias", DebiasParams, params_path)
    kg = UNITS.read(params.units, require=KG_COLUMNS)
    result, summary = run_retrieval(kg, params)
    RETRIEVAL.write(result, out)
    write_metrics(metrics, summary, "retrieve")
    click.echo(
        f"retrieve: {summary['n_queries']} prompts over {summary['n_units_kg']} units, top-1 "
        f"{summary['top1_accuracy']:.3f}; own removed: same head "
        f"{summary['removed_same_head']:.3f}, "
        f"same pair {summary['removed_same_pair']:.3f} -> {out}"
    )


if __name__ == "__main__":
    main()
