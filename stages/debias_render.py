"""Stage `debias_render@<config>`: one debiasing configuration's images of the neutral prompts."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench.debias.render.stage import (
    KG_COLUMNS,
    DebiasParams,
    plan_inputs,
    render_debias_config,
    subset_units,
)
from implicit_bench.errors import ConfigError
from implicit_bench.params import base_params, check_refs, load_params, section
from implicit_bench.protocol.tables import DEBIAS_IMAGES_DIR, LLM_PAIRS, RETRIEVAL, REWRITES, UNITS
from implicit_bench.render.stage import RenderParams
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.provenance import provenance
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=ModelStageCommand)
@click.option("--config", "name", required=True, help="a debias.configs entry")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--images", "images_dir", default=DEBIAS_IMAGES_DIR, show_default=True)
def main(name: str, params_path: str, images_dir: str) -> None:
    raw = load_params(params_path)
    params = section(raw, "debias", DebiasParams, params_path).checked()
    render = section(raw, "render", RenderParams, params_path, attach={"generators": "configs"})
    if name not in params.configs:
        raise ConfigError(
            f"{params_path}: '{name}' is not in debias.configs ({', '.join(params.configs)})"
        )
    check_refs(params.generator, render.configs, "debias.generator", "generators", params_path)
    spec = params.configs[name]
    kg = UNITS.read(params.units, require=KG_COLUMNS)
    subset = subset_units(kg, params.subset)
    frame, texts, skipped = plan_inputs(
        name,
        spec,
        subset,
        kg,
        REWRITES.read_if_present(),
        LLM_PAIRS.read_if_present(),
        RETRIEVAL.read_if_present(),
    )
    gen_config = render.configs[params.generator]
    store = Path(images_dir) / name
    summary = render_debias_config(
        name,
        spec,
        units=frame,
        texts=texts,
        seeds=params.seeds,
        cfg=gen_config,
        render_params=render,
        generator_name=params.generator,
        store_dir=store,
    )
    summary["units"] = int(len(subset))
    summary["units_not_rendered"] = dict(skipped)
    summary["provenance"] = provenance(
        [(f"generator:{params.generator}", getattr(gen_config, "model", None))],
        base_params(raw, params_path).profile,
    )
    run = summary["run"]
    write_metrics(store / "summary.json", summary, f"debias_render@{name}")
    click.echo(
        f"debias_render {name}: {summary['by_status']}, not rendered {dict(skipped)}; "
        f"{run['skipped_done']} of {run['planned']} planned images reused from the store -> {store}"
    )


if __name__ == "__main__":
    main()
