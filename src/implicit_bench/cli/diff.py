"""``implicit-bench diff`` (docs/compare.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.report.compare.diff import diff_summaries, flat_estimates, format_diff
from implicit_bench.report.compare.headline import SUMMARY, level_at, summary_at
from implicit_bench.report.compare.revs import WORKSPACE, read_json


@click.command("diff", cls=FriendlyCommand)
@click.argument("rev_a", default="HEAD")
@click.argument("rev_b", default=WORKSPACE)
@click.option(
    "--repo",
    type=click.Path(file_okay=False, exists=True),
    default=".",
    show_default=True,
    help="Repository root.",
)
@click.option(
    "--all", "everything", is_flag=True, help="Also list headline values that did not change."
)
@click.option(
    "--detail",
    "details",
    multiple=True,
    metavar="FILE",
    help="Also every interval estimate of a detail metrics file, "
    "e.g. metrics/debias.json (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON rows instead of the table.")
def diff_command(
    rev_a: str, rev_b: str, repo: str, everything: bool, details: tuple[str, ...], as_json: bool
) -> None:
    """Change of each headline metric (metrics/summary.json) from REV_A (default HEAD) to REV_B
    (default: the workspace), both intervals and a verdict: beyond noise / within noise.

    A revision is anything git understands or a DVC experiment's name (dvc exp list).
    --detail adds the changed interval estimates of a detail file (metrics/debias.json: dS of
    every debiasing configuration)."""
    root = Path(repo)
    a, b = summary_at(root, rev_a), summary_at(root, rev_b)
    level = level_at(root, rev_a)
    rows = diff_summaries(a, b, level, everything)
    for detail in details:
        name = Path(detail).name
        da = flat_estimates(read_json(root, rev_a, detail) or {}, f"{name}:")
        db = flat_estimates(read_json(root, rev_b, detail) or {}, f"{name}:")
        rows += [
            r for r in diff_summaries(da, db, level) if everything or r["verdict"] != "unchanged"
        ]
    if as_json:
        click.echo(json.dumps({"a": rev_a, "b": rev_b, "level": level, "rows": rows}, indent=1))
        return
    notes = [
        f"{SUMMARY}: {rev_a} -> {rev_b}; intervals at {level:g}; "
        "verdict: |change| > z x sqrt(se_a^2 + se_b^2), "
        "se from each interval (independent runs, conservative for shared units)"
    ]
    if a.get("simulated") or b.get("simulated"):
        notes.append("SIMULATED: at least one side comes from the simulated world (docs/world.md)")
    click.echo(format_diff(rows, rev_a, rev_b, notes))
