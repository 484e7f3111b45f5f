"""``implicit-bench audit``: the neighbouring papers' audits on your own files.

- ``audit selection DECISIONS``: When the Judge Acts' selection audit of a judge's picks from
  fixed candidate pools (audits/selection_table.py for the file's columns);
- ``audit evaluator LABELS``: NegT2IBench's evaluator audit (judge modes, element-level
  agreement, negated-question probe, annotator agreement) from a labels file
  (audits/evaluator_agreement.py for the columns).
"""

from __future__ import annotations

import click

from implicit_bench._util.friendly_errors import FriendlyCommand, FriendlyGroup


def _boot(n_boot: int, seed: int):  # noqa: ANN202 - the analysis Bootstrap, imported lazily
    from implicit_bench.analysis.bootstrap import Bootstrap

    return Bootstrap(n=n_boot, seed=seed)


@click.group("audit", cls=FriendlyGroup)
def audit_group() -> None:
    """Audits of your own judge or evaluator files (docs/audits.md)."""


@audit_group.command("selection", cls=FriendlyCommand)
@click.argument("decisions", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--sim",
    is_flag=True,
    help="audit the simulated world's pools (world.selection of --params) under every protocol "
    "of judge_audit.selection, as the judge_audit stage does, instead of a DECISIONS file",
)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSON to write")
@click.option("--n-boot", type=click.IntRange(1, 100_000), default=10_000, show_default=True)
@click.option("--seed", type=int, default=20261002, show_default=True, help="bootstrap seed")
@click.option("--margin", type=click.FloatRange(0), default=0.0, show_default=True)
@click.option("--near-tie-delta", type=click.FloatRange(0), default=0.05, show_default=True)
@click.option(
    "--second",
    type=click.Path(exists=True, dir_okay=False),
    help="a second judge's decisions file on the same pools: the cross-model gate (§5.3)",
)
@click.option(
    "--ablation",
    "ablations",
    multiple=True,
    metavar="NAME=FILE",
    help="an ablation's decisions file on the same prompts (§5.5), audited like the main one; "
    "repeat for several",
)
def selection_command(
    *,
    decisions: str | None,
    sim: bool,
    params_path: str,
    out: str,
    n_boot: int,
    seed: int,
    margin: float,
    near_tie_delta: float,
    second: str | None,
    ablations: tuple[str, ...],
) -> None:
    """Regret, gain over random, BMR, gates, order diagnostics, cultural-error outcomes and
    breakdowns of a decisions file (or --sim); the cross-model gate and ablations from more
    files."""
    from pathlib import Path

    from implicit_bench._util.files import nan_to_none, write_json
    from implicit_bench.audits.stage import decisions_report

    boot = _boot(n_boot, seed)
    if sim == (decisions is not None):
        raise click.UsageError("give a DECISIONS file or --sim, not both or neither")
    if sim and (second or ablations):
        raise click.UsageError("--second and --ablation take decisions files, not --sim")
    named: dict[str, str] = {}
    for item in ablations:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise click.UsageError(f"--ablation {item!r}: expected NAME=FILE")
        if not Path(path).is_file():
            raise click.UsageError(f"--ablation {item!r}: no such file {path}")
        if name in named:
            raise click.UsageError(f"--ablation {name}: given twice")
        named[name] = path
    if sim:
        from implicit_bench.audits.params import JudgeAuditParams
        from implicit_bench.audits.stage import selection_report, world_block
        from implicit_bench.params import load_params, section

        raw = load_params(params_path)
        params = section(raw, "judge_audit", JudgeAuditParams, params_path).selection
        params = params.model_copy(
            update={"source": "sim", "margin": margin, "near_tie_delta": near_tie_delta}
        )
        report = selection_report(params, world_block(raw, params_path), boot) or {}
        report = {"bootstrap": boot.block("prompts with replacement"), **report}
        write_json(out, report)
        click.echo(f"audit selection (SIMULATED): {len(report['protocols'])} protocols -> {out}")
        return
    kw = {"margin": margin, "near_tie_delta": near_tie_delta}
    block = decisions_report(decisions, second, named, boot, kw)
    # the main audit at the top level (as before), the gate inside it, the ablations beside it
    report = {
        "source": decisions,
        "bootstrap": boot.block("prompts with replacement"),
        **block["main"],
        "ablations": block.get("ablations"),
    }
    write_json(out, nan_to_none(report))
    click.echo(f"audit selection: {report['pools']} pools -> {out}")


@audit_group.command("evaluator", cls=FriendlyCommand)
@click.argument("labels", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--sim",
    is_flag=True,
    help="audit the simulated world's evaluation set (world.negprobe of --params), as the "
    "negation stage does with evaluator_source sim, instead of a LABELS file",
)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSON to write")
@click.option("--n-boot", type=click.IntRange(1, 100_000), default=1000, show_default=True)
@click.option("--seed", type=int, default=42, show_default=True, help="bootstrap seed")
def evaluator_command(
    labels: str | None, sim: bool, params_path: str, out: str, n_boot: int, seed: int
) -> None:
    """Evaluator against the annotators' majority, three judge modes, negated probe."""
    from implicit_bench._util.files import write_json
    from implicit_bench.audits.params import NegationParams
    from implicit_bench.audits.stage import evaluator_report, world_block
    from implicit_bench.params import load_params

    if sim == (labels is not None):
        raise click.UsageError("give a LABELS file or --sim, not both or neither")
    boot = _boot(n_boot, seed)
    if sim:
        params = NegationParams(evaluator_source="sim")
        world = world_block(load_params(params_path), params_path)
    else:
        params, world = NegationParams(evaluator_source="file", evaluator_labels=labels), None
    report = evaluator_report(params, world, boot) or {}
    report = {"bootstrap": boot.block("images with replacement"), **report}
    write_json(out, report)
    click.echo(f"audit evaluator: {report['images']} images -> {out}")
