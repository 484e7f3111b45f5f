"""``implicit-bench exps`` (docs/compare.md)."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.report.compare.headline import (
    EXPS_COLUMNS,
    cell,
    changed_params,
    params_at,
    summary_if_any,
)
from implicit_bench.report.compare.revs import WORKSPACE, experiments


@click.command("exps", cls=FriendlyCommand)
@click.option(
    "--repo",
    type=click.Path(file_okay=False, exists=True),
    default=".",
    show_default=True,
    help="Repository root.",
)
@click.option(
    "--baseline",
    default="HEAD",
    show_default=True,
    help="Revision the params changes are listed against.",
)
def exps_command(repo: str, baseline: str) -> None:
    """The headline table across the baseline, the workspace and every DVC experiment: one
    line each, the params it changed, the headline values with their intervals."""
    root = Path(repo)
    base_params = params_at(root, baseline)
    revs = [baseline, WORKSPACE, *sorted(experiments(root))]
    header = ["Experiment", "changed params", *EXPS_COLUMNS]
    lines = []
    for rev in revs:
        summary = summary_if_any(root, rev)
        if summary is None:
            continue
        changed = ", ".join(changed_params(base_params, params_at(root, rev))) or "-"
        lines.append([rev, changed, *(cell(summary, k) for k in EXPS_COLUMNS)])
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    click.echo("\n".join(fmt.format(*line).rstrip() for line in [header, *lines]))
