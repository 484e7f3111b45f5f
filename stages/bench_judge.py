"""Stage `bench_judge`: the benchmark phase's judges on the fixed unit set ->
data/judgements/bench.parquet (docs/experiments.md, "Two phases")."""

from __future__ import annotations

import click

from implicit_bench.bench.stage import run_bench_judge
from implicit_bench.params import base_params, load_params
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.runlog import log_run


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
def main(params_path: str) -> None:
    raw = load_params(params_path)
    result = run_bench_judge(raw, profile=base_params(raw, params_path).profile)
    log_run(  # each judge's own timings: the run log only (audit judge-cost reads them)
        "bench_judge",
        {
            "model_calls": result.model_calls,
            "cache_hits": result.cache_hits,
            "judge_timings": result.timings,
        },
    )
    click.echo(
        f"bench_judge: {result.metrics['rows']} judgements, {result.model_calls} model calls, "
        f"{result.cache_hits} answers from the cache"
    )


if __name__ == "__main__":
    main()
