"""``implicit-bench analyze``: every analysis metric from tables produced elsewhere.

No model is loaded: the command reads a UNITS table and one or more JUDGEMENTS tables (CSV or
Parquet; formats in docs/byo-judgements.md) and writes the same metrics JSON, tables and plot
data as the ``select`` and ``evaluate`` stages, then runs the registered extensions
(``implicit_bench.analysis.byo.core.run_analyze``).
"""

from __future__ import annotations

import os

import click

# One BLAS thread, set before numpy loads: OpenBLAS otherwise starts a thread per CPU at load,
# ~0.1 s of CPU for matrix products ``analyze`` runs on one thread anyway (``one_blas_thread``;
# docs/analysis.md, "Speed"). A value the caller set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from implicit_bench.analysis.byo.core import run_analyze  # noqa: E402
from implicit_bench.params import block, load_params


@click.command()
@click.option(
    "--units",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="UNITS table (CSV or Parquet).",
)
@click.option(
    "--judgements",
    "judgements",
    required=True,
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="JUDGEMENTS table (CSV or Parquet); repeat for several.",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option(
    "--params",
    "params_path",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="YAML with 'select' / 'evaluate' (and extension) sections.",
)
@click.option(
    "--refusals",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Image index / refusals table(s): config, unit_id, variant, seed, status.",
)
@click.option(
    "--selection",
    type=click.Choice(["none", "union", "intersection"]),
    default="none",
    show_default=True,
    help="Apply the selection rule before evaluating (none: the units are the benchmark already).",
)
@click.option(
    "--pairs",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Source pairs table for Table 9's raw upstream counts.",
)
@click.option("--config", "config", default=None, help="Configuration (generator) analysed.")
@click.option(
    "--blind-judge", "blind_judges", multiple=True, help="Blind judge(s); the first is primary."
)
@click.option(
    "--retrieval",
    "retrieval",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Retrieval table (unit_id, own_hit[, own_rank, same_head_removed, "
    "same_pair_removed]): retrieval figures and Table 7's full-KG rows.",
)
@click.option("--bootstrap-n", type=int, default=None, help="Bootstrap resamples (default 1000).")
@click.option("--bootstrap-seed", type=int, default=None, help="Bootstrap seed (default 42).")
@click.option(
    "--order",
    "order_file",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Unit ids one per line, in rendering order, or images as 'unit_id,seed' lines: "
    "write anytime.json (with --looks).",
)
@click.option(
    "--looks",
    default=None,
    help="N1,N2,...: draw counts (units, or images of an image order) of the order at which "
    "to report anytime-valid intervals.",
)
@click.option(
    "--covariates",
    default="none",
    show_default=True,
    help="With --order: per-unit values known before the run that the sequences use: "
    "release (the params' evaluate.beside_release), a release checkout / .zip, a folder of "
    "units + judgements tables (an earlier run, an `implicit-bench import`), or none.",
)
@click.option(
    "--target-width",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="With --order: the half-width (each estimand's own scale) fixed in advance that the "
    "sequences' bets are tuned to (default: plug-in bets).",
)
def analyze(
    units: str,
    judgements: tuple[str, ...],
    out: str,
    params_path: str | None,
    refusals: tuple[str, ...],
    selection: str,
    pairs: str | None,
    config: str | None,
    blind_judges: tuple[str, ...],
    retrieval: str | None,
    bootstrap_n: int | None,
    bootstrap_seed: int | None,
    order_file: str | None,
    looks: str | None,
    covariates: str,
    target_width: float | None,
) -> None:
    """Compute every analysis metric from UNITS and JUDGEMENTS tables, without any model."""
    if (order_file is None) != (looks is None):
        raise click.UsageError("--order and --looks go together")
    if looks is not None:  # its syntax before any table is read
        from implicit_bench.analysis.looks import parse_counts

        parse_counts(looks, "--looks")
    params = load_params(params_path) if params_path else {}
    where = params_path or "analyze"
    ev = block(params, "evaluate", where)
    if config:
        ev["config"] = config
    if blind_judges:
        ev["blind_judges"] = list(blind_judges)
    boot = block(ev, "bootstrap", f"{where}: evaluate")
    if bootstrap_n is not None:
        boot["n"] = bootstrap_n
    if bootstrap_seed is not None:
        boot["seed"] = bootstrap_seed
    ev["bootstrap"] = boot
    params["evaluate"] = ev
    overrides = {k: v for k, v in (("n", bootstrap_n), ("seed", bootstrap_seed)) if v is not None}
    if overrides:  # the one top-level block too: the extensions (audits, debias) inherit it
        params["bootstrap"] = {**block(params, "bootstrap", where), **overrides}
    if retrieval:
        debias = dict(params.get("debias") or {})
        debias["scoring"] = {**(debias.get("scoring") or {}), "retrieval": retrieval}
        params["debias"] = debias
    if order_file is None and (covariates != "none" or target_width is not None):
        raise click.UsageError("--covariates and --target-width go with --order and --looks")
    # `--looks ''` is parsed (and refused), never taken for "no looks"
    anytime = (
        (order_file, looks, covariates, target_width)
        if order_file is not None and looks is not None
        else None
    )
    summary = run_analyze(units, list(judgements), out, params, refusals, selection, pairs, anytime)
    broken = []
    for name, result in summary["extensions"].items():
        if isinstance(result, dict) and "error" in result:
            click.echo(f"analyze: extension '{name}' failed: {result['error']}", err=True)
            if result.get("unexpected"):
                broken.append(name)
    click.echo(f"analyze: {summary}")
    if broken:
        raise click.ClickException(
            f"extension(s) {', '.join(broken)} failed unexpectedly (the main "
            "metrics were written); rerun with --debug"
        )
