"""``implicit-bench construction-rating``: App. C.1's construction ablation (docs/audits.md)."""

from __future__ import annotations

import click

from implicit_bench.audits.construction_ablation import construction_rating
from implicit_bench.protocol.tables import PAIRS_PATH, UNITS_PATH


@click.command("construction-rating")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--units", default=UNITS_PATH, show_default=True)
@click.option("--pairs", default=PAIRS_PATH, show_default=True)
@click.option("--out-dir", default="data/construction_ablation", show_default=True)
@click.option("--metrics", default="metrics/construction_ablation.json", show_default=True)
def construction_rating_command(
    params_path: str, units: str, pairs: str, out_dir: str, metrics: str
) -> None:
    """App. C.1's construction ablation: write the direct arm, rate both arms blind with the
    raters; writes OUT_DIR/direct_triplets.parquet, OUT_DIR/ratings.csv and METRICS."""
    n_units, n_raters = construction_rating(params_path, units, pairs, out_dir, metrics)
    click.echo(f"construction-rating: {n_units} units, {n_raters} raters -> {metrics}")
