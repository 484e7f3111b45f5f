"""Stage `clip`: CLIP image lean per (unit, seed), variant similarities, CLIP blind judge.

Writes data/judgements/clip.parquet (JUDGEMENTS rows: clip_lean and blind, judge ``clip``)
and metrics/clip.json. See docs/audits.md.
"""

from __future__ import annotations

import click

from implicit_bench.clierrors import FriendlyCommand
from implicit_bench.clip.stage import ClipParams, run_clip
from implicit_bench.io import nan_to_none, read_table, write_table
from implicit_bench.params import load_params, section
from implicit_bench.provenance import merge_provenance, provenance, upstream_provenance
from implicit_bench.runlog import write_metrics


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--units", default="data/interim/units.parquet", show_default=True)
@click.option("--out", default="data/judgements/clip.parquet", show_default=True)
@click.option("--metrics", default="metrics/clip.json", show_default=True)
def main(params_path: str, units: str, out: str, metrics: str) -> None:
    raw = load_params(params_path)
    params = section(raw, "clip", ClipParams, params_path)
    rows, report = run_clip(params, read_table(units))
    write_table(rows, out)
    prov = merge_provenance(provenance([("clip", params.model.model)], raw.get("base", {}).get("profile")),
                            upstream_provenance(["metrics/render.json"]))
    write_metrics(metrics, nan_to_none({**report, "provenance": prov}), "clip")
    click.echo(f"clip: {report['images']} images ({report['embedded_now']} embedded now) -> {out}")


if __name__ == "__main__":
    main()
