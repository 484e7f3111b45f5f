"""Stage `rewrite`: LLM rewrites of the neutral prompts and LLM sentence pairs (F.6), cached."""

from __future__ import annotations

import click

from implicit_bench.debias.stage import (
    KG_COLUMNS,
    DebiasParams,
    build_llm,
    read_retrieval,
    rewriter_block,
    run_rewriting,
    subset_units,
)
from implicit_bench.params import catalogue, load_params, section
from implicit_bench.protocol.tables import (
    LLM_PAIRS,
    LLM_PAIRS_PATH,
    RETRIEVAL_PATH,
    REWRITES,
    REWRITES_PATH,
    UNITS,
)
from implicit_bench.runtime.preflight.stage import ModelStageCommand
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=ModelStageCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--retrieval", "retrieval_path", default=RETRIEVAL_PATH, show_default=True)
@click.option("--rewrites", "rewrites_path", default=REWRITES_PATH, show_default=True)
@click.option("--pairs", "pairs_path", default=LLM_PAIRS_PATH, show_default=True)
@click.option("--metrics", default="metrics/rewrite.json", show_default=True)
def main(
    params_path: str, retrieval_path: str, rewrites_path: str, pairs_path: str, metrics: str
) -> None:
    raw = load_params(params_path)
    params = section(raw, "debias", DebiasParams, params_path).checked()
    llms = catalogue(raw, "llms", params_path)
    where, block = rewriter_block(params, llms)
    kg = UNITS.read(params.units, require=KG_COLUMNS)
    subset = subset_units(kg, params.subset)
    retrieval = read_retrieval(retrieval_path)
    client = build_llm(block, where=where)
    rewrites, pairs, summary = run_rewriting(
        kg, subset, retrieval, params, client, llms[str(params.rewriter)].get("model")
    )
    REWRITES.write(rewrites, rewrites_path)
    LLM_PAIRS.write(pairs, pairs_path)
    write_metrics(metrics, {"units": int(len(subset)), **summary}, "rewrite")
    click.echo(
        f"rewrite: {len(rewrites)} rewrites ({summary['rewrites']['invalid']} invalid), "
        f"{len(pairs)} LLM pairs ({summary['llm_pairs']['invalid']} invalid), "
        f"{summary['llm_calls']} LLM calls -> {rewrites_path}, {pairs_path}"
    )


if __name__ == "__main__":
    main()
