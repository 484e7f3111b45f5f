"""``implicit-bench import SRC --out DIR``: the authors' release as analysis tables."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench.errors import InputError


@click.command("import")
@click.argument("src", type=click.Path(exists=True))
@click.option(
    "--out", required=True, type=click.Path(file_okay=False), help="Directory for the tables."
)
@click.option(
    "--screen-rule",
    type=click.Choice(["mean_pairwise", "loo_mean", "none"]),
    default="mean_pairwise",
    show_default=True,
    help="human-study rater screening (paper: mean_pairwise; none keeps every rater)",
)
@click.option(
    "--screen-threshold",
    type=float,
    default=0.40,
    show_default=True,
    help="human-study screening threshold (paper: 0.40)",
)
def import_command(src: str, out: str, screen_rule: str, screen_threshold: float) -> None:
    """Read a checkout (or .zip download) of ydai94/IMPLICIT-Bench and write units.csv,
    judgements_*.csv, images.csv, retrieval.csv, analyze.yaml, manifest.json and, when the
    release holds them, the human study (human_eval.json) and the prompt labels
    (prompt_labels.json) with their tables (docs/import.md)."""
    from implicit_bench.human_eval.bundle import HumanEvalParams
    from implicit_bench.release.importer import commands, import_release, write_imported

    try:
        imported = import_release(
            src, HumanEvalParams(screen_rule=screen_rule, screen_threshold=screen_threshold)
        )
    except InputError as exc:
        raise click.ClickException(str(exc)) from None
    paths = write_imported(imported, out)
    m = imported.manifest
    click.echo(
        f"import: {m['units']} units, judgements {m['judgements']}, "
        f"{m['rubric_fractional']} fractional rubric values "
        f"(means of repeated judgements), {len(m['skipped_files'])} file(s) skipped -> {out}"
    )
    if imported.human_study is not None:
        r = imported.human_study["report"]
        click.echo(
            f"  human study: {r['n_cases']} cases, raters per round {r['n_raters_per_round']} "
            f"({len(r['screening']['excluded'])} excluded by {screen_rule}), r-bar "
            f"{r['inter_rater']['mean_pairwise_r']} -> {out}/human_eval.json"
        )
    if imported.prompt_labels is not None:
        kappas = {
            p: round(v["fleiss_kappa"]["kappa"], 3)
            for p, v in imported.prompt_labels["protocols"].items()
        }
        click.echo(f"  prompt labels: Fleiss kappa {kappas} -> {out}/prompt_labels.json")
    for name, command in commands(Path(out), paths).items():
        click.echo(f"  {name}: {command}")
