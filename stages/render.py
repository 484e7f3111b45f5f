"""Stage `render`: every prompt of every unit on every seed ->
data/images/<config>/ (ImageStore)."""

from __future__ import annotations

import click

from implicit_bench.params import base_params, load_params, section
from implicit_bench.protocol.tables import IMAGES_DIR, UNITS, UNITS_PATH
from implicit_bench.render.stage import RenderParams, render_all, render_metrics, unit_columns
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--units", "units_path", default=UNITS_PATH, show_default=True)
@click.option("--images", "images_dir", default=IMAGES_DIR, show_default=True)
@click.option("--metrics", default="metrics/render.json", show_default=True)
def main(params_path: str, units_path: str, images_dir: str, metrics: str) -> None:
    raw = load_params(params_path)
    params = section(raw, "render", RenderParams, params_path, attach={"generators": "configs"})
    units = UNITS.read(units_path, require=unit_columns(params.variants))
    results = render_all(params, units, images_dir)
    write_metrics(
        metrics, render_metrics(params, results, base_params(raw, params_path).profile), "render"
    )
    for name, res in results.items():
        run = res["run"]
        click.echo(
            f"render {name}: {res['by_status']} of {run['planned']} planned items "
            f"({run['skipped_done']} reused from the store, "
            f"{sum(run['written'].values())} rendered now) "
            f"-> {images_dir}/{name}"
        )


if __name__ == "__main__":
    main()
