"""Stage `world`: plant the simulated world's truth for the planned units (docs/world.md).

Writes ``data/world/truth.parquet`` (one row per unit and simulated generator) and
``data/world/world.json`` (the planted model behaviours the ``sim`` backends read).
"""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench._util.files import write_json
from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.params import load_params, section
from implicit_bench.protocol.tables import UNITS, WORLD_TRUTH
from implicit_bench.world.stage import TRUTH_FILE, WORLD_FILE, WorldParams, plant, world_json


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--units", "units_path", default=None, help="UNITS table (default: world.units).")
def main(params_path: str, units_path: str | None) -> None:
    params = section(load_params(params_path), "world", WorldParams, params_path)
    units = UNITS.read(units_path or params.units)
    truth = plant(units, params)
    out = Path(params.out_dir)
    WORLD_TRUTH.write(truth, out / TRUTH_FILE)
    write_json(out / WORLD_FILE, world_json(params))
    click.echo(
        f"world (SIMULATED): {units['unit_id'].nunique()} units x "
        f"{len(params.generators)} generators "
        f"-> {out / TRUTH_FILE}"
    )


if __name__ == "__main__":
    main()
