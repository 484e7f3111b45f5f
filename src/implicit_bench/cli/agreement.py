"""``implicit-bench agreement``: exact agreement and Cohen's kappa of two judges or two
deployments of one judge on the same images (paper Appendix C.2; the library:
``implicit_bench.analysis.agreement.judgement_files``; docs/analysis.md)."""

from __future__ import annotations

import click

from implicit_bench.errors import ConfigError, InputError


def _spec(text: str) -> tuple[list[str], str | None]:
    """FILE[,FILE...][:JUDGE]: the part after the last colon is a judge name unless it looks
    like a path (contains '/' or '.')."""
    head, colon, tail = text.rpartition(":")
    if colon and tail and "/" not in tail and "." not in tail:
        return head.split(","), tail
    return text.split(","), None


@click.command("agreement")
@click.option(
    "--first",
    "first",
    required=True,
    help="judgements FILE[,FILE...][:JUDGE] of the first judge or deployment",
)
@click.option(
    "--second", "second", required=True, help="judgements FILE[,FILE...][:JUDGE] of the second"
)
@click.option(
    "--task",
    default="blind",
    show_default=True,
    help="judge task compared (blind, rubric, alignment, ...)",
)
@click.option(
    "--config",
    default=None,
    help="generator configuration (default: every configuration both sides judged)",
)
@click.option(
    "--n-boot", type=int, default=1000, show_default=True, help="bootstrap resamples of units"
)
@click.option("--seed", type=int, default=0, show_default=True, help="bootstrap seed")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="metrics JSON to write")
def agreement_command(
    first: str, second: str, task: str, config: str | None, n_boot: int, seed: int, out: str
) -> None:
    """Exact agreement (%) and Cohen's kappa, with unit-bootstrap 95% intervals."""
    from implicit_bench._util.files import write_json
    from implicit_bench.analysis.agreement.judgement_files import file_agreement
    from implicit_bench.analysis.paper_tables import clean

    try:
        figures = file_agreement(_spec(first), _spec(second), task, config, n_boot, seed)
    except (ConfigError, InputError) as exc:
        raise click.ClickException(str(exc)) from None
    result = {"first": first, "second": second, "task": task, "config": config, **figures}
    write_json(out, clean(result))
    a, k = result["agreement"], result["cohen_kappa"]
    click.echo(
        f"agreement: {result['n_images']} images of "
        f"{result['n_units']} units; agree {100 * a['value']:.1f}% "
        f"{[round(100 * x, 1) for x in a['ci'] or []]}, kappa {k['value']:.3f} "
        f"{[round(x, 3) for x in k['ci'] or []]} -> {out}"
    )
