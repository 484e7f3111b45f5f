"""``implicit-bench prompt-labels``: IMPLICIT-Bench B.3 on the run's own triplets
(docs/audits.md)."""

from __future__ import annotations

import click


@click.command("prompt-labels")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", default="metrics/prompt_labels.json", show_default=True)
def prompt_labels_command(params_path: str, out: str) -> None:
    """Label each unit's three prompts with the ``prompt_labels`` labellers (matching and
    independent protocols) and write B.3's statistics (accuracy, Fleiss' kappa, Cohen's kappa,
    flips) to OUT."""
    from implicit_bench._util.files import nan_to_none, write_json
    from implicit_bench.audits.prompt_labels import PromptLabelParams, run_prompt_labels
    from implicit_bench.params import catalogue, load_params, section

    raw = load_params(params_path)
    params = section(raw, "prompt_labels", PromptLabelParams, params_path)
    report = run_prompt_labels(params, catalogue(raw, "llms", params_path))
    write_json(out, nan_to_none(report))
    kappas = {p: r["fleiss_kappa"]["kappa"] for p, r in report["protocols"].items()}
    click.echo(f"prompt-labels: {report['units']} units, Fleiss' kappa {kappas} -> {out}")
