"""Stage `debias_score`: bias, alignment, composite S and dS (paired
bootstrap) per configuration."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench._util.files import atomic_write_text, read_json
from implicit_bench._util.friendly_errors import FriendlyCommand
from implicit_bench.debias.stage import DebiasParams, score_judgements
from implicit_bench.params import load_params, section
from implicit_bench.protocol.tables import DEBIAS_JUDGEMENTS_DIR, RETRIEVAL, RETRIEVAL_PATH
from implicit_bench.protocol.tables.judgements import read_judgements
from implicit_bench.runtime.provenance import markdown_banner, merge_provenance
from implicit_bench.runtime.runlog import write_metrics


@click.command(cls=FriendlyCommand)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--judgements", "judgements_dir", default=DEBIAS_JUDGEMENTS_DIR, show_default=True)
@click.option("--retrieval", "retrieval_path", default=RETRIEVAL_PATH, show_default=True)
@click.option("--metrics", default="metrics/debias.json", show_default=True)
@click.option("--table", default="metrics/debias.md", show_default=True)
def main(
    params_path: str, judgements_dir: str, retrieval_path: str, metrics: str, table: str
) -> None:
    raw = load_params(params_path)
    params = section(
        raw, "debias", DebiasParams, params_path, inherit={"bootstrap": "scoring.bootstrap"}
    ).checked()
    blocks = []
    for name in params.configs:
        summary = Path(judgements_dir) / f"{name}.json"
        if summary.exists():
            blocks.append(read_json(summary).get("provenance", {}))
    judgements = read_judgements(
        [Path(judgements_dir) / f"{name}.parquet" for name in params.configs]
    )
    retrieval = RETRIEVAL.read_if_present(retrieval_path)
    payload, markdown = score_judgements(
        judgements, params.scoring, params.configs, retrieval, source=judgements_dir
    )
    payload["alpha"] = params.alpha
    payload["seeds"] = list(params.seeds)
    payload["provenance"] = merge_provenance(*blocks) if blocks else {}
    write_metrics(metrics, payload, "debias_score")
    atomic_write_text(table, markdown_banner(payload["provenance"]) + markdown)
    click.echo(markdown)


if __name__ == "__main__":
    main()
