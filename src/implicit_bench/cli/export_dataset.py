"""``implicit-bench export-dataset``: the units and prompt triplets as a Hugging Face dataset
folder (docs/export-dataset.md)."""

from __future__ import annotations

import click

from implicit_bench.protocol.tables import (
    KG_UNITS,
    KG_UNITS_PATH,
    TRIPLETS,
    TRIPLETS_PATH,
    UNITS_PATH,
)
from implicit_bench.release.export import export_dataset


@click.command("export-dataset")
@click.option(
    "--triplets",
    default=TRIPLETS_PATH,
    show_default=True,
    help=f"prompt triplets ({UNITS_PATH}: only the analysed subset)",
)
@click.option("--kg-units", default=KG_UNITS_PATH, show_default=True)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", required=True, help="folder to write (Parquet + README.md dataset card)")
def export_dataset_command(triplets: str, kg_units: str, params_path: str, out: str) -> None:
    """Write the units and prompt triplets as a Hugging Face dataset folder (Parquet + card)."""
    from implicit_bench.params import load_params

    counts = export_dataset(
        KG_UNITS.read(kg_units),
        TRIPLETS.read(triplets),
        out,
        load_params(params_path),
        sources=(kg_units, triplets),
    )
    click.echo(
        f"export-dataset: {counts['triplets']} triplets, {counts['units']} units -> {out} "
        f"(datasets.load_dataset({out!r}, 'triplets'); `huggingface-cli upload` to publish)"
    )
