"""``implicit-bench report DIR [DIR...]``: the HTML report of any run, with a multi-run leaderboard.

A DIR is an ``implicit-bench analyze`` output directory (``metrics/``, ``tables/``, ``plots/``;
bring-your-own judgements, an imported release) or a repository root after ``dvc repro`` (its
``params.yaml`` ``report`` section is used). The first DIR is the run the report is about; the
others' generators join its Leaderboard section, labelled with their source (``--label``, else
the directory name; SIMULATED where their metrics say so). A further DIR may also be Every Eval
Ever records of this benchmark (an ``implicit-bench export eee`` folder or one record file:
``publish.eee_import``); where two sources carry instance files (a run folder's judgement
tables count), their generators are also paired on shared (unit, seed) keys
(docs/publishing.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.report.confine import Scope
from implicit_bench.report.runs import labels_of, params_for, run_of, same_benchmark


@click.command("report", cls=FriendlyCommand)
@click.argument("dirs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
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
    help="Source label of each DIR, in order (default: the directory name, with its parents "
    "when two DIRs share one).",
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
    from implicit_bench.publish.eee_import import is_eee, load_source

    names = labels_of(dirs, labels)
    if dirs[0].is_file():
        raise click.BadParameter(
            f"{dirs[0]}: the first DIR is the run the report is about (a folder)", param_hint="DIR"
        )
    imported = {i: load_source(d, names[i]) for i, d in enumerate(dirs) if i > 0 and is_eee(d)}
    others = [
        imported[i].run if i in imported else run_of(d, names[i])
        for i, d in enumerate(dirs)
        if i > 0
    ]
    first = run_of(dirs[0], names[0])  # the first DIR must hold a benchmark too
    sha = same_benchmark([first, *others])
    pairs = _shared_key_pairs(dirs, names, imported, first)
    if pairs is not None:
        others.append(pairs)
    params, root = params_for(dirs[0], out, units, judgements)
    # nothing outside DIR is read (its params.yaml's paths, links out), save the files named
    scope = Scope.of(dirs[0], [*(units and [units] or []), *judgements])
    summary = build_report(params, root, others=others, label=names[0], scope=scope)
    sources = ", ".join(names)
    paired = f"; {len(pairs.board['pairs'])} paired differences on shared keys" if pairs else ""
    click.echo(
        f"report: {sources} -> {out}/index.html ({summary['n_units']} units in the browser"
        f"{paired}){'' if sha is None else f' benchmark {sha[:12]}'}"
    )


def _shared_key_pairs(
    dirs: tuple[Path, ...], names: list[str], imported: dict[int, Any], first: Any
) -> Any:
    """A leaderboard source holding the paired differences between sources with instance
    rows (imported instance files; a run folder's judgement tables), or None."""
    if not any(s.instances is not None for s in imported.values()):
        return None
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.publish.eee_import import INSTANCE_COLUMNS, paired_rows
    from implicit_bench.publish.instances import instance_rows
    from implicit_bench.publish.run_dir import load_run
    from implicit_bench.report.leaderboard import Run

    sources = []
    for i, d in enumerate(dirs):
        if i in imported:
            rows = imported[i].instances
        else:
            inst = instance_rows(load_run(d)).rows
            rows = None if inst is None else inst[list(INSTANCE_COLUMNS)]
        if rows is not None and len(rows):
            sources.append((names[i], rows))
    if len(sources) < 2:
        return None
    block = (first.benchmark or {}).get("bootstrap") or {}
    boot = Bootstrap(
        n=int(block.get("n_boot") or 1000),
        seed=int(block.get("seed") if block.get("seed") is not None else 42),
        level=float(block.get("level") or 0.95),
    )
    board = paired_rows(sources, boot)
    return Run("shared (unit, seed) keys", {"leaderboard": board}) if board["pairs"] else None
