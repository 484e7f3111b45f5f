"""``implicit-bench plan``: size a run before booking a GPU (docs/experiments.md); the plan
itself is ``implicit_bench.planning.plan``."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.cli.options import parse_assume
from implicit_bench.planning.plan import build_plan, format_plan, plan_params, recost, totals


@click.command("plan", cls=FriendlyCommand)  # a ConfigError: one line, as click's own
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option(
    "--profile",
    default=None,
    help="Merge profiles/NAME.yaml over --params first (nothing is written).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.option(
    "--benchmark",
    "benchmark_path",
    type=click.Path(exists=True),
    default=None,
    help="A checkout or .zip of the authors' release: its units are the unit set "
    "(sets the `benchmark` key; docs/import.md).",
)
@click.option(
    "--assume",
    default=None,
    help="Unit counts before construction ran, e.g. candidates=4705,selected=1831 "
    "(the tables on disk are then not read for those counts); B.6's subset sizes: "
    "b6_subset=297,b6_baseline=388,b6_unreturned=46.",
)
@click.option(
    "--calibrate",
    "calibrate_n",
    type=click.IntRange(1),
    default=None,
    help="Measure seconds per item: run N items of each generator and "
    "judge (real model calls), extrapolate.",
)
@click.option(
    "--target-width",
    type=float,
    default=None,
    help="Half-width W: also print the smallest stratified design whose intervals reach it.",
)
@click.option(
    "--estimand",
    "estimands",
    multiple=True,
    help="With --target-width (repeatable): default_rate, success_stereotype, success_anti, "
    "gap, bias_score[/CONFIG], alignment[/CONFIG]; default: all those the source has.",
)
@click.option(
    "--variances-from",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="With --target-width: a folder of units + judgements tables (e.g. `implicit-bench "
    "import` of the release); default: this workspace's judgements (a pilot).",
)
def plan_command(
    params_path: str,
    profile: str | None,
    as_json: bool,
    benchmark_path: str | None,
    assume: str | None,
    calibrate_n: int | None,
    target_width: float | None,
    estimands: tuple[str, ...],
    variances_from: str | None,
) -> None:
    """Per stage: the items to compute, the items already cached, the model calls implied."""
    params = plan_params(params_path, profile, benchmark_path)
    plans, info = build_plan(params, assume=parse_assume(assume) or None)
    if calibrate_n:
        measured = recost(params, plans, calibrate_n)
        info["measured_seconds_per_item"] = {k: round(v, 4) for k, v in measured.items()}
        if not as_json:
            click.echo(
                f"measured seconds per item (--calibrate {calibrate_n}): "
                + ", ".join(f"{k} {v:.3f}" for k, v in measured.items())
            )
    if (estimands or variances_from) and target_width is None:
        raise click.UsageError("--estimand and --variances-from go with --target-width")
    design = None
    if target_width is not None:
        from implicit_bench.planning.target_width import target_design

        design = target_design(
            params, plans, info, target_width, estimands, variances_from, Path(".")
        )
    if as_json:
        payload = {**info, "stages": [asdict(p) for p in plans], "totals": totals(plans)}
        if design is not None:
            payload["design"] = design
        click.echo(json.dumps(payload, indent=2))
    else:
        click.echo(format_plan(plans, info))
        if design is not None:
            from implicit_bench.planning.target_width import format_design

            click.echo(format_design(design))
