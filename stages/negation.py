"""Stage `negation`: strict / lenient success and forbidden-rendered rate of negated prompts,
next to the affirmative anti-stereotype prompt (overall, by bias type, by default strength)."""

from __future__ import annotations

import click

from implicit_bench._util.files import write_table
from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.audits.stage import (
    UNIT_COLUMNS_USED,
    NegationParams,
    corpus_report,
    evaluator_report,
    make_bootstrap,
    negation_report,
    order_function,
    upstream_provenance,
    world_block,
)
from implicit_bench.params import load_params, section
from implicit_bench.protocol.tables import UNITS, UNITS_PATH, existing
from implicit_bench.protocol.tables.judgements import read_judgements
from implicit_bench.runtime.runlog import write_metrics

CORPUS_PATH = "data/negation/negt2i_prompts.csv"  # NegT2IBench's prompt corpus (per_cell 0: empty)


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--units", default=UNITS_PATH, show_default=True)
@click.option("--metrics", default="metrics/negation.json", show_default=True)
@click.option("--plot", default="plots/negation_by_strength.csv", show_default=True)
@click.option("--corpus", "corpus_path", default=CORPUS_PATH, show_default=True)
def main(params_path: str, units: str, metrics: str, plot: str, corpus_path: str) -> None:
    raw = load_params(params_path)
    params = section(
        raw,
        "negation",
        NegationParams,
        params_path,
        inherit={"bootstrap": "bootstrap", "primary_order": "primary_order"},
    )
    read = existing(params.judgements, "judgements")
    judgements = read_judgements(read)
    report, plot_rows = negation_report(
        judgements,
        UNITS.read(units, require=UNIT_COLUMNS_USED),
        order_function(params.primary_order),
        boot=make_bootstrap(params.bootstrap),
        presence_judge=params.presence_judge,
    )
    # NegT2IBench Tables 2, 5-7, 9-13: the evaluator against the annotators' majority
    sim = params.evaluator_source == "sim" or params.corpus.source == "sim"
    world = world_block(raw, params_path) if sim else None
    report["evaluator_agreement"] = evaluator_report(
        params, world, make_bootstrap(params.bootstrap)
    )
    # NegT2IBench Tables 1, 3, 4, 19 and Figures 3, 5, 6: its prompt corpus and a model's
    # accuracy on it from per-object judgements
    corpus, report["corpus"] = corpus_report(params, world, make_bootstrap(params.bootstrap))
    write_table(corpus, corpus_path)
    report.update(
        inputs=read,
        primary_order=params.primary_order,
        provenance=upstream_provenance(
            ["metrics/judge.json", "metrics/clip.json", "metrics/render.json"]
        ),
    )
    write_metrics(metrics, report, "negation")
    write_table(plot_rows, plot)
    click.echo(f"negation: {len(report['by_judge'])} judges -> {metrics}")


if __name__ == "__main__":
    main()
