"""``implicit-bench export eee|hf-eval-results``: a run's results in the formats the field's
hubs read (docs/publishing.md)."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench._util.friendly_errors import FriendlyGroup

RUN_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.group("export", cls=FriendlyGroup)
def export_group() -> None:
    """Publish a run: Every Eval Ever records, Hugging Face model-card eval results."""


@export_group.command("eee")
@click.argument("run_dir", type=RUN_DIR)
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--organization",
    default="unknown",
    show_default=True,
    help="Who ran the evaluation (source_metadata.source_organization_name).",
)
@click.option(
    "--relationship",
    type=click.Choice(["first_party", "third_party", "collaborative", "other"]),
    default="third_party",
    show_default=True,
    help="Evaluator's relationship to the model (first_party: the model's developer).",
)
@click.option(
    "--model-id",
    "model_ids",
    multiple=True,
    metavar="CONFIG=ORG/NAME",
    help="The model id of a generator (default: from the params' generators catalogue).",
)
@click.option("--no-instances", is_flag=True, help="Aggregate records only (no per-image JSONL).")
def eee_command(
    run_dir: Path,
    out: Path,
    organization: str,
    relationship: str,
    model_ids: tuple[str, ...],
    no_instances: bool,
) -> None:
    """One Every Eval Ever record per generator of RUN_DIR (a repository root after dvc repro
    or an analyze output), with its per-image instance file where the judgements are there,
    under OUT/data/implicit-bench/<developer>/<model>/, validated against the published
    schema."""
    from implicit_bench.publish.eee import Options, export_eee

    given = {}
    for item in model_ids:
        cfg, sep, mid = item.partition("=")
        if not sep or not cfg or not mid:
            raise click.BadParameter(f"{item!r}: give CONFIG=ORG/NAME", param_hint="--model-id")
        given[cfg] = mid
    written, reason = export_eee(
        run_dir,
        out,
        Options(organization, relationship, given, with_instances=not no_instances),
    )
    for w in written:
        rows = f" + {w.rows} instance rows" if w.samples else ""
        click.echo(f"export eee: {w.config} -> {w.record}{rows}")
    click.echo(f"export eee: {len(written)} records (schema valid); instances: {reason}")


@export_group.command("hf-eval-results")
@click.argument("run_dir", type=RUN_DIR)
@click.option("--model-id", required=True, metavar="ORG/NAME", help="The model repository.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--dataset-id",
    default=None,
    metavar="ORG/NAME",
    help="The benchmark dataset on the Hub (default ORG/implicit-bench: the folder "
    "`implicit-bench export-dataset` writes, uploaded under the model's organisation).",
)
@click.option("--config", default=None, help="The generator (default: the run's own).")
@click.option("--source-url", default=None, help="A public page of the run (the entry's source).")
def hf_command(
    run_dir: Path,
    model_id: str,
    out: Path,
    dataset_id: str | None,
    config: str | None,
    source_url: str | None,
) -> None:
    """OUT/.eval_results/implicit-bench.yaml: bias score, alignment and default rate of one
    generator of RUN_DIR as Hugging Face model-card eval results."""
    from implicit_bench.publish.hf_results import export_hf

    path, found = export_hf(run_dir, out, model_id, dataset_id, config, source_url)
    tasks = ", ".join(f"{e['dataset']['task_id']} {e['value']}" for e in found)
    click.echo(
        f"export hf-eval-results: {path} ({tasks}); upload with "
        f"`huggingface-cli upload {model_id} {path} .eval_results/{path.name}`"
    )
