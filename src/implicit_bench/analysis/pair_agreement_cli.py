"""``implicit-bench agreement``: two judges, or two deployments of one judge, on the same
images (Appendix C.2; docs/analysis.md, "Agreement of two judges or deployments")."""

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
@click.option("--first", "first", required=True, help="judgements FILE[,FILE...][:JUDGE] of the first judge or deployment")
@click.option("--second", "second", required=True, help="judgements FILE[,FILE...][:JUDGE] of the second")
@click.option("--task", default="blind", show_default=True, help="judge task compared (blind, rubric, alignment, ...)")
@click.option("--config", default=None, help="generator configuration (default: every configuration both sides judged)")
@click.option("--n-boot", type=int, default=1000, show_default=True, help="bootstrap resamples of units")
@click.option("--seed", type=int, default=0, show_default=True, help="bootstrap seed")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="metrics JSON to write")
def agreement_command(first: str, second: str, task: str, config: str | None, n_boot: int, seed: int, out: str) -> None:
    """Exact agreement (%) and Cohen's kappa, with unit-bootstrap 95% intervals."""
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.analysis.pair_agreement import pair_agreement, paired, side
    from implicit_bench.analysis.report import clean
    from implicit_bench.io import write_json
    from implicit_bench.tables.judgements import read_judgements

    try:
        sides = []
        for name, text in (("first", first), ("second", second)):
            paths, judge = _spec(text)
            sides.append((side(read_judgements(paths), judge, task, config, name), paths))
        boot = Bootstrap(n_boot, seed, 0.95)
        result = pair_agreement(paired(sides[0][0], sides[1][0]), boot, f"agreement/{task}")
    except (ConfigError, InputError) as exc:
        raise click.ClickException(str(exc)) from None
    result = {"first": first, "second": second, "task": task, "config": config, **result, "bootstrap": boot.block()}
    write_json(out, clean(result))
    a, k = result["agreement"], result["cohen_kappa"]
    click.echo(f"agreement: {result['n_images']} images of {result['n_units']} units; agree {100 * a['value']:.1f}% "
               f"{[round(100 * x, 1) for x in a['ci'] or []]}, kappa {k['value']:.3f} {[round(x, 3) for x in k['ci'] or []]} -> {out}")
