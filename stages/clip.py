"""Stage `clip`: CLIP image lean per (unit, seed), variant similarities, CLIP blind judge.

Writes data/judgements/clip.parquet (JUDGEMENTS rows: clip_lean and blind, judge ``clip``)
and metrics/clip.json. See docs/audits.md.
"""

from __future__ import annotations

import click

from implicit_bench._util.files import nan_to_none
from implicit_bench.backends.clip.stage import UNIT_COLUMNS_USED, ClipStageParams, run_clip
from implicit_bench.params import base_params, load_params, section
from implicit_bench.protocol.tables import CLIP_JUDGEMENTS_PATH, UNITS, UNITS_PATH
from implicit_bench.protocol.tables.judgements import write_judgements
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.provenance import merge_provenance, provenance, upstream_provenance
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--units", default=UNITS_PATH, show_default=True)
@click.option("--out", default=CLIP_JUDGEMENTS_PATH, show_default=True)
@click.option("--metrics", default="metrics/clip.json", show_default=True)
def main(params_path: str, units: str, out: str, metrics: str) -> None:
    raw = load_params(params_path)
    params = section(raw, "clip", ClipStageParams, params_path)
    rows, report = run_clip(params, UNITS.read(units, require=UNIT_COLUMNS_USED))
    write_judgements(rows, out)
    prov = merge_provenance(
        provenance([("clip", params.model.model)], base_params(raw, params_path).profile),
        upstream_provenance(["metrics/render.json"]),
    )
    write_metrics(metrics, nan_to_none({**report, "provenance": prov}), "clip")
    click.echo(f"clip: {report['images']} images ({report['embedded_now']} embedded now) -> {out}")


if __name__ == "__main__":
    main()
