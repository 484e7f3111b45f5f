"""``implicit-bench results`` (docs/compare.md)."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench._util.friendly_errors import FriendlyCommand


@click.command("results", cls=FriendlyCommand)
@click.option(
    "--repo",
    type=click.Path(file_okay=False, exists=True),
    default=".",
    show_default=True,
    help="Repository root.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Output file (default: logs/results_<commit>.json under the repository, gitignored).",
)
def results_command(repo: str, out: str | None) -> None:
    """Write the run's results file: headline and leaderboard, params, package and model
    versions, git commit, the run log's timings and model calls, and where the per-sample
    records (judgements with raw answers, image indexes) are."""
    from implicit_bench._util.files import write_json
    from implicit_bench.report.compare.results import default_path, results

    doc = results(repo)
    path = Path(out) if out else Path(repo) / default_path(doc)
    write_json(path, doc)
    flag = " (SIMULATED)" if doc["simulated"] else ""
    click.echo(
        f"results: {path}{flag}: {len(doc['samples'])} per-sample files, "
        f"{len(doc['run_log']['stages'])} stages in the run log"
    )
