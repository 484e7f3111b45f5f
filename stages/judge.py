"""Stage `judge`: ask the VLM judges about every image (docs/judging.md)."""

from __future__ import annotations

import click

from implicit_bench.backends.judges.stage import JudgeStageParams, run_judge_stage
from implicit_bench.params import base_params, load_params, section
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.runlog import log_run


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
def main(params_path: str) -> None:
    raw = load_params(params_path)
    params = section(raw, "judge", JudgeStageParams, params_path, attach={"judges": "judges"})
    profile = base_params(raw, params_path).profile
    result = run_judge_stage(params, profile=profile)
    m = result.metrics
    # each judge's own timings (s/img, s/Q, load s, GPU GiB): the run log only, never metrics/
    log_run(
        "judge",
        {
            "model_calls": result.model_calls,
            "cache_hits": result.cache_hits,
            "judge_timings": result.timings,
        },
    )
    click.echo(
        f"judge: {m['rows']} judgements ({m['invalid']} invalid), "
        f"{result.model_calls} model calls, {result.cache_hits} answers from the cache "
        f"-> {params.out}, {params.metrics}"
    )


if __name__ == "__main__":
    main()
