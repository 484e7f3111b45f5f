"""Stage `recovery`: every headline estimate beside the simulated world's planted truth
(``metrics/recovery.json``; docs/world.md, "Recovery"; ``recovery.stage.run_recovery``)."""

from __future__ import annotations

import click

from implicit_bench._util.files import write_json
from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.params import load_params
from implicit_bench.world.recovery.stage import run_recovery


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", default="metrics/recovery.json", show_default=True)
def main(params_path: str, out: str) -> None:
    payload, line = run_recovery(load_params(params_path), params_path)
    write_json(out, payload)
    click.echo(f"{line} -> {out}" if payload.get("simulated") else line)


if __name__ == "__main__":
    main()
