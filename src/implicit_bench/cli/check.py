"""``implicit-bench check``: the preflight of the current params (preflight.py), with the disk check
for the images the plan still renders (docs/experiments.md)."""

from __future__ import annotations

import click

from implicit_bench._util.redact import url
from implicit_bench.cli.options import FiniteFloat
from implicit_bench.params import load_params
from implicit_bench.protocol.judge_families import blind_family_check, blind_models_from_params
from implicit_bench.runtime.cache_location import cache_dir
from implicit_bench.runtime.preflight.backends import load_registries
from implicit_bench.runtime.preflight.checks import models_in_use, preflight
from implicit_bench.runtime.preflight.params_check import validate_params


@click.command("check")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option(
    "--profile", default=None, help="Check the params of this profile (nothing is written)."
)
@click.option(
    "--timeout",
    default=5.0,
    show_default=True,
    type=FiniteFloat(0.1, 60),
    help="Seconds an endpoint has to answer.",
)
@click.option("--no-disk", is_flag=True, help="Skip the disk-room check (it needs the plan).")
def check_command(params_path: str, profile: str | None, timeout: float, no_disk: bool) -> None:
    """Preflight: keys set, endpoints answer and serve the model, local models resolve, a GPU
    where cuda is asked, room for the images; one line per problem, exit
    1 (before any model call)."""
    if profile is not None:
        from implicit_bench.params.profiles import compose

        params = compose(profile, params_path)
    else:
        params = load_params(params_path)
    validate_params(params, params_path)  # every section and catalogue entry, one line
    cache_dir()  # $IMPLICIT_BENCH_CACHE_DIR or base.cache_dir: a writable directory
    if no_disk:
        images = None
    else:
        from implicit_bench.planning.plan import images_still_to_render  # lazily: pandas

        images = images_still_to_render(params)
    warnings: list[str] = []
    load_registries()  # every stage's models
    problems = preflight(params, ".", timeout, images, warnings)
    for line in warnings:
        click.echo(url(f"check: warning: {line}"), err=True)
    for line in problems:
        click.echo(url(f"check: {line}"), err=True)  # no URL prints its password
    families = blind_family_check(blind_models_from_params(params))
    if families["judges"] and not families["ok"]:  # E.4 step 4: a warning (docs/audits.md)
        click.echo(f"check: warning: {families['warning']}", err=True)
    n = len(models_in_use(params))
    if problems:
        raise SystemExit(1)
    click.echo(
        f"check: ok ({n} models in use: keys, endpoints, local models, devices"
        + ("" if no_disk else ", disk")
        + ")"
    )


__all__ = ["check_command"]
