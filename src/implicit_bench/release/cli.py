"""``implicit-bench import SRC --out DIR``: the authors' release as analysis tables."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench.errors import InputError


@click.command("import")
@click.argument("src", type=click.Path(exists=True))
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory for the tables.")
def import_command(src: str, out: str) -> None:
    """Read a checkout (or .zip download) of ydai94/IMPLICIT-Bench and write units.csv,
    judgements_*.csv, images.csv, retrieval.csv, analyze.yaml and manifest.json (docs/import.md)."""
    from implicit_bench.release.importer import commands, import_release, write_imported

    try:
        imported = import_release(src)
    except InputError as exc:
        raise click.ClickException(str(exc)) from None
    paths = write_imported(imported, out)
    m = imported.manifest
    click.echo(
        f"import: {m['units']} units, judgements {m['judgements']}, {m['rubric_fractional']} fractional rubric values "
        f"(means of repeated judgements), {len(m['skipped_files'])} file(s) skipped -> {out}"
    )
    for name, command in commands(Path(out), paths).items():
        click.echo(f"  {name}: {command}")
