"""Stage `bench_render`: the benchmark phase's generators on the fixed unit set ->
data/bench_images/<name>/ (docs/experiments.md, "Two phases")."""

from __future__ import annotations

import click

from implicit_bench.bench.stage import run_bench_render
from implicit_bench.params import base_params, load_params
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--metrics", default="metrics/bench_render.json", show_default=True)
def main(params_path: str, metrics: str) -> None:
    raw = load_params(params_path)
    results = run_bench_render(raw)
    bench = raw.get("bench") or {}
    write_metrics(
        metrics,
        {
            "units": bench.get("units"),
            "seed_index": bench.get("seed_index") or {},
            "configs": results,
            "profile": base_params(raw, params_path).profile,
        },
        "bench_render",
    )
    for name, res in results.items():
        run = res["run"]
        click.echo(
            f"bench_render {name}: {res['by_status']} of {run['planned']} planned items "
            f"({run['skipped_done']} reused from the store)"
        )
    if not results:
        click.echo("bench_render: no bench.generators: nothing to render")


if __name__ == "__main__":
    main()
