"""Stage `debias_judge@<config>`: rubric and alignment judgements of one configuration's images,
through the judge machinery (alignment always against the unit's original neutral prompt)."""

from __future__ import annotations

import click

from implicit_bench.backends.judges.stage import JudgeStageParams, run_judge_stage
from implicit_bench.debias.stage import DebiasParams, judge_stage_params
from implicit_bench.params import base_params, load_params, section
from implicit_bench.protocol.tables import DEBIAS_IMAGES_DIR, DEBIAS_JUDGEMENTS_DIR
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.runlog import log_run


@click.command(cls=ModelStageCommand)
@click.option("--config", "name", required=True, help="a debias.configs entry")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--images", "images_dir", default=DEBIAS_IMAGES_DIR, show_default=True)
@click.option("--out-dir", "out_dir", default=DEBIAS_JUDGEMENTS_DIR, show_default=True)
def main(name: str, params_path: str, images_dir: str, out_dir: str) -> None:
    raw = load_params(params_path)
    params = section(raw, "debias", DebiasParams, params_path).checked()
    judge = section(raw, "judge", JudgeStageParams, params_path, attach={"judges": "judges"})
    stage_params = judge_stage_params(name, params, judge, images_dir, out_dir)
    result = run_judge_stage(stage_params, profile=base_params(raw, params_path).profile)
    m = result.metrics
    log_run(
        f"debias_judge@{name}", {"model_calls": result.model_calls, "cache_hits": result.cache_hits}
    )
    click.echo(
        f"debias_judge {name}: {m['rows']} judgements ({m['invalid']} invalid), "
        f"{result.model_calls} model calls -> {stage_params.out}"
    )


if __name__ == "__main__":
    main()
