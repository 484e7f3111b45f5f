"""Stage `b6`: Appendix B.6, a third judge re-scores a subset of the benchmark ->
data/b6/, metrics/b6.json and metrics/b6.md (Tables 15 and 17; docs/experiments.md, "B.6")."""

from __future__ import annotations

import click

from implicit_bench.bench.stage import run_b6
from implicit_bench.params import base_params, load_params
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.runlog import log_run


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
def main(params_path: str) -> None:
    raw = load_params(params_path)
    payload = run_b6(raw, profile=base_params(raw, params_path).profile)
    log_run("b6", {"model_calls": payload["model_calls"], "cache_hits": payload["cache_hits"]})
    click.echo(
        f"b6: {payload['n_subset_units']} subset units, {payload['n_baseline_units']} baseline "
        f"units, {payload['images_rescored']} images re-scored, {payload['model_calls']} model "
        f"calls"
    )


if __name__ == "__main__":
    main()
