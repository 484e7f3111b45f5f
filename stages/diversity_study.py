"""Stage `diversity_study`: N images per neutral prompt for a sample of units (HoloFair), read by
the face judge; ID, CA_q, CA-mean and MGBI over gender and age (docs/audits.md)."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench._util.files import nan_to_none, write_json
from implicit_bench.audits.study.stage import ClipStageParams, DiversityStudyParams, run_study
from implicit_bench.params import load_params, section
from implicit_bench.protocol.tables import UNITS
from implicit_bench.render.stage import RenderParams
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.provenance import upstream_provenance


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--metrics", default="metrics/diversity_study.json", show_default=True)
def main(params_path: str, metrics: str) -> None:
    raw = load_params(params_path)
    study = section(
        raw,
        "diversity_study",
        DiversityStudyParams,
        params_path,
        inherit={"bootstrap": "bootstrap"},
    )
    Path(study.images_dir).mkdir(parents=True, exist_ok=True)  # the stage's output, even when off
    if not study.enabled:
        write_json(metrics, {"enabled": False})
        click.echo(f"diversity_study: disabled (diversity_study.enabled) -> {metrics}")
        return
    render = section(raw, "render", RenderParams, params_path, attach={"generators": "configs"})
    clip = section(raw, "clip", ClipStageParams, params_path)
    units = UNITS.read(study.units, require=("unit_id", "bias_type"))
    report = run_study(units, study, render, clip=clip)
    report.update(enabled=True, provenance=upstream_provenance(["metrics/render.json"]))
    report = nan_to_none(report)  # undefined scores (no face read) are null, never NaN
    write_json(metrics, report)
    s = report["scores"]
    click.echo(
        f"diversity_study: {len(report['units'])} prompts x {study.n_images} images, ID {s['ID']}, "
        f"CA_0.10 {s.get('CA_0.10')}, MGBI {s['MGBI']} "
        f"({s['images_no_face']} without a face) -> {metrics}"
    )


if __name__ == "__main__":
    main()
