"""Stage `diversity`: normalised entropy of blind labels (per bias type, per scene), ID, CA_q,
CA-mean, MGBI; gender and age distributions of neutral images from the face judge."""

from __future__ import annotations

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.audits.stage import (
    UNIT_COLUMNS_USED,
    DiversityParams,
    diversity_metrics,
    face_diversity,
    upstream_provenance,
)
from implicit_bench.params import load_params, section
from implicit_bench.protocol.tables import UNITS, UNITS_PATH, existing
from implicit_bench.protocol.tables.judgements import read_judgements
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--units", default=UNITS_PATH, show_default=True)
@click.option("--metrics", default="metrics/diversity.json", show_default=True)
def main(params_path: str, units: str, metrics: str) -> None:
    params = section(
        load_params(params_path),
        "diversity",
        DiversityParams,
        params_path,
        inherit={"bootstrap": "bootstrap", "primary_order": "primary_order"},
    )
    unit_table = UNITS.read(units, require=UNIT_COLUMNS_USED)
    read = existing(params.judgements, "judgements")
    judgements = read_judgements(read)
    faces = face_diversity(unit_table, params.faces) if params.faces.enabled else None
    report = {
        **diversity_metrics(judgements, unit_table, params, read, faces),
        "provenance": upstream_provenance(
            ["metrics/judge.json", "metrics/clip.json", "metrics/render.json"]
        ),
    }
    write_metrics(metrics, report, "diversity")
    click.echo(f"diversity: -> {metrics}")


if __name__ == "__main__":
    main()
