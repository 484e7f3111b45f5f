"""Stage `models`: build the tiny random models a profile lists (`models.build`) under
models/tiny/<kind> (the default profile's, or the tiny profile's paper architectures)."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.backends.tiny.stage import build
from implicit_bench.params import StrictModel, load_params, section


class ModelsParams(StrictModel):
    build: list[str] = []
    seed: int = 0
    out_dir: str = "models/tiny"


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
def main(params_path: str) -> None:
    params = section(load_params(params_path), "models", ModelsParams, params_path)
    Path(params.out_dir).mkdir(
        parents=True, exist_ok=True
    )  # the DVC out, even with nothing to build
    for kind in params.build:
        out = build(kind, f"{params.out_dir}/{kind}", params.seed)
        click.echo(f"models: built tiny random {kind} -> {out}")


if __name__ == "__main__":
    main()
