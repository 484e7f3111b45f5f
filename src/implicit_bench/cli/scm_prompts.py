"""``implicit-bench scm-prompts``: HoloFair's SCM trigger prompts (docs/audits.md)."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench.audits.scm_prompts import scm_prompts


@click.command("scm-prompts")
@click.option(
    "--split", type=click.Choice(["eval", "train", "gen"]), default="eval", show_default=True
)
@click.option("--seed", type=int, default=42, show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help=".csv or .parquet")
def scm_prompts_command(split: str, seed: int, out: str) -> None:
    """Write HoloFair's SCM trigger prompts (Eval: 300 neutral + 450 trigger; Train: 10,000,
    disjoint vocabulary; Gen: 30 race x age x gender) in the UNITS prompt layout
    (docs/audits.md)."""
    frame = scm_prompts(split, seed)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    triggers = frame["trigger"].notna().sum() if "trigger" in frame else 0
    click.echo(f"scm-prompts: {split}: {len(frame)} prompts ({triggers} with a trigger) -> {out}")
