"""``implicit-bench report DIR [DIR...]``: the HTML report of any run, with a multi-run leaderboard.

A DIR is an ``implicit-bench analyze`` output directory (``metrics/``, ``tables/``, ``plots/``;
bring-your-own judgements, an imported release) or a repository root after ``dvc repro`` (its
``params.yaml`` ``report`` section is used). The first DIR is the run the report is about; the
others' generators join its Leaderboard section, labelled with their source (``--label``, else
the directory name; SIMULATED where their metrics say so).
"""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.report.confine import Scope
from implicit_bench.report.runs import params_for, run_of, same_benchmark


@click.command("report", cls=FriendlyCommand)
@click.argument(
    "dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Output directory of the site.",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="Source label of each DIR, in order (default: the directory name).",
)
@click.option(
    "--units",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="UNITS table for the unit browser (analyze outputs).",
)
@click.option(
    "--judgements",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="JUDGEMENTS table(s) shown in the unit browser.",
)
def report_command(
    dirs: tuple[Path, ...],
    out: Path,
    labels: tuple[str, ...],
    units: str | None,
    judgements: tuple[str, ...],
) -> None:
    """Render the HTML report of DIR (an analyze output or a repository root); further DIRs
    join its Leaderboard, side by side, labelled with their source."""
    from implicit_bench.report.stage import build_report

    if len(labels) > len(dirs):
        raise click.BadParameter(
            f"{len(labels)} labels for {len(dirs)} directories", param_hint="--label"
        )
    names = [*labels, *(d.resolve().name for d in dirs[len(labels) :])]
    others = [run_of(d, name) for d, name in zip(dirs[1:], names[1:], strict=True)]
    first = run_of(dirs[0], names[0])  # the first DIR must hold a benchmark too
    same_benchmark([first, *others])
    params, root = params_for(dirs[0], out, units, judgements)
    # nothing outside DIR is read (its params.yaml's paths, links out), save the files named
    scope = Scope.of(dirs[0], [*(units and [units] or []), *judgements])
    summary = build_report(params, root, others=others, label=names[0], scope=scope)
    sources = ", ".join(names)
    click.echo(f"report: {sources} -> {out}/index.html ({summary['n_units']} units in the browser)")
