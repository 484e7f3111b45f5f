"""``implicit-bench audit``: the neighbouring papers' audits on your own files.

- ``audit selection DECISIONS``: When the Judge Acts' selection audit of a judge's picks from
  fixed candidate pools (audits/selection_table.py for the file's columns);
- ``audit evaluator LABELS``: NegT2IBench's evaluator audit (judge modes, element-level
  agreement, negated-question probe, annotator agreement) from a labels file
  (audits/evaluator_agreement.py for the columns).
"""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench._util.friendly_errors import FriendlyCommand, FriendlyGroup


def _boot(n_boot: int, seed: int):  # noqa: ANN202 - the analysis Bootstrap, imported lazily
    from implicit_bench.analysis.bootstrap import Bootstrap

    return Bootstrap(n=n_boot, seed=seed)


@click.group("audit", cls=FriendlyGroup)
def audit_group() -> None:
    """Audits of your own judge or evaluator files (docs/audits.md)."""


@audit_group.command("selection", cls=FriendlyCommand)
@click.argument("decisions", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--sim",
    is_flag=True,
    help="audit the simulated world's pools (world.selection of --params) under every protocol "
    "of judge_audit.selection, as the judge_audit stage does, instead of a DECISIONS file",
)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSON to write")
@click.option("--n-boot", type=click.IntRange(1, 100_000), default=10_000, show_default=True)
@click.option("--seed", type=int, default=20261002, show_default=True, help="bootstrap seed")
@click.option("--margin", type=click.FloatRange(0), default=0.0, show_default=True)
@click.option("--near-tie-delta", type=click.FloatRange(0), default=0.05, show_default=True)
@click.option(
    "--second",
    type=click.Path(exists=True, dir_okay=False),
    help="a second judge's decisions file on the same pools: the cross-model gate (§5.3)",
)
@click.option(
    "--ablation",
    "ablations",
    multiple=True,
    metavar="NAME=FILE",
    help="an ablation's decisions file on the same prompts (§5.5), audited like the main one; "
    "repeat for several",
)
def selection_command(
    *,
    decisions: str | None,
    sim: bool,
    params_path: str,
    out: str,
    n_boot: int,
    seed: int,
    margin: float,
    near_tie_delta: float,
    second: str | None,
    ablations: tuple[str, ...],
) -> None:
    """Regret, gain over random, BMR, gates, order diagnostics, cultural-error outcomes and
    breakdowns of a decisions file (or --sim); the cross-model gate and ablations from more
    files."""

    from implicit_bench._util.files import nan_to_none, write_json
    from implicit_bench.audits.stage import decisions_report

    boot = _boot(n_boot, seed)
    if sim == (decisions is not None):
        raise click.UsageError("give a DECISIONS file or --sim, not both or neither")
    if sim and (second or ablations):
        raise click.UsageError("--second and --ablation take decisions files, not --sim")
    named: dict[str, str] = {}
    for item in ablations:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise click.UsageError(f"--ablation {item!r}: expected NAME=FILE")
        if not Path(path).is_file():
            raise click.UsageError(f"--ablation {item!r}: no such file {path}")
        if name in named:
            raise click.UsageError(f"--ablation {name}: given twice")
        named[name] = path
    if sim:
        from implicit_bench.audits.params import JudgeAuditParams
        from implicit_bench.audits.stage import selection_report, world_block
        from implicit_bench.params import load_params, section

        raw = load_params(params_path)
        params = section(raw, "judge_audit", JudgeAuditParams, params_path).selection
        params = params.model_copy(
            update={"source": "sim", "margin": margin, "near_tie_delta": near_tie_delta}
        )
        report = selection_report(params, world_block(raw, params_path), boot) or {}
        report = {"bootstrap": boot.block("prompts with replacement"), **report}
        write_json(out, report)
        click.echo(f"audit selection (SIMULATED): {len(report['protocols'])} protocols -> {out}")
        return
    kw = {"margin": margin, "near_tie_delta": near_tie_delta}
    block = decisions_report(decisions, second, named, boot, kw)
    # the main audit at the top level (as before), the gate inside it, the ablations beside it
    report = {
        "source": decisions,
        "bootstrap": boot.block("prompts with replacement"),
        **block["main"],
        "ablations": block.get("ablations"),
    }
    write_json(out, nan_to_none(report))
    click.echo(f"audit selection: {report['pools']} pools -> {out}")


@audit_group.command("evaluator", cls=FriendlyCommand)
@click.argument("labels", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--sim",
    is_flag=True,
    help="audit the simulated world's evaluation set (world.negprobe of --params), as the "
    "negation stage does with evaluator_source sim, instead of a LABELS file",
)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSON to write")
@click.option("--n-boot", type=click.IntRange(1, 100_000), default=1000, show_default=True)
@click.option("--seed", type=int, default=42, show_default=True, help="bootstrap seed")
def evaluator_command(
    labels: str | None, sim: bool, params_path: str, out: str, n_boot: int, seed: int
) -> None:
    """Evaluator against the annotators' majority, three judge modes, negated probe."""
    from implicit_bench._util.files import write_json
    from implicit_bench.audits.params import NegationParams
    from implicit_bench.audits.stage import evaluator_report, world_block
    from implicit_bench.params import load_params

    if sim == (labels is not None):
        raise click.UsageError("give a LABELS file or --sim, not both or neither")
    boot = _boot(n_boot, seed)
    if sim:
        params = NegationParams(evaluator_source="sim")
        world = world_block(load_params(params_path), params_path)
    else:
        params, world = NegationParams(evaluator_source="file", evaluator_labels=labels), None
    report = evaluator_report(params, world, boot) or {}
    report = {"bootstrap": boot.block("images with replacement"), **report}
    write_json(out, report)
    click.echo(f"audit evaluator: {report['images']} images -> {out}")


@audit_group.command("negation-corpus", cls=FriendlyCommand)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="CSV / Parquet")
@click.option("--per-cell", type=click.IntRange(1), default=100, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="the decks' seed")
@click.option(
    "--elements",
    "elements_out",
    type=click.Path(dir_okay=False),
    help="also write one row per required object and statement (what a judge answers)",
)
def negation_corpus_command(out: str, per_cell: int, seed: int, elements_out: str | None) -> None:
    """NegT2IBench's prompt corpus: 6 categories x 8 polarity settings x PER_CELL prompts."""
    from implicit_bench._util.files import write_table
    from implicit_bench.audits.negation_corpus import elements, write_corpus

    corpus = write_corpus(per_cell, seed)
    write_table(corpus, out)
    if elements_out:
        write_table(elements(corpus), elements_out)
    click.echo(f"audit negation-corpus: {len(corpus)} prompts -> {out}")


@audit_group.command("negation-accuracy", cls=FriendlyCommand)
@click.argument("judgements", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--sim",
    is_flag=True,
    help="judge the simulated world's images of the corpus (world.negt2i of --params), as the "
    "negation stage does with corpus.source sim, instead of a JUDGEMENTS file",
)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(exists=True, dir_okay=False),
    help="the corpus the judgements refer to (from negation-corpus); default: written afresh "
    "from --per-cell and --corpus-seed",
)
@click.option("--per-cell", type=click.IntRange(1), default=100, show_default=True)
@click.option("--corpus-seed", type=int, default=0, show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSON to write")
@click.option("--n-boot", type=click.IntRange(1, 100_000), default=1000, show_default=True)
@click.option("--seed", type=int, default=42, show_default=True, help="bootstrap seed")
def negation_accuracy_command(
    *,
    judgements: str | None,
    sim: bool,
    params_path: str,
    corpus_path: str | None,
    per_cell: int,
    corpus_seed: int,
    out: str,
    n_boot: int,
    seed: int,
) -> None:
    """A model's NegT2IBench accuracy by setting, load and category from per-object judgements."""
    from implicit_bench._util.files import nan_to_none, read_table, write_json
    from implicit_bench.audits.negation_accuracy import (
        accuracy_report,
        read_judgements,
        validate_judgements,
    )
    from implicit_bench.audits.negation_corpus import COLUMNS, elements, write_corpus
    from implicit_bench.errors import InputError

    if sim == (judgements is not None):
        raise click.UsageError("give a JUDGEMENTS file or --sim, not both or neither")
    if corpus_path:
        corpus = read_table(corpus_path)
        missing = [c for c in COLUMNS if c not in corpus.columns]
        if missing:
            raise InputError(corpus_path, None, missing[0], "column missing from the corpus")
    else:
        corpus = write_corpus(per_cell, corpus_seed)
    el = elements(corpus)
    boot = _boot(n_boot, seed)
    if sim:
        from implicit_bench.audits.negation_world import accuracy_truth, simulated_judgements
        from implicit_bench.audits.stage import world_block
        from implicit_bench.params import load_params

        world = world_block(load_params(params_path), params_path)
        if world.negt2i.seeds == 0:
            raise click.UsageError(f"{params_path}: world.negt2i.seeds is 0 (no images)")
        judg = validate_judgements(
            simulated_judgements(el, world.negt2i, world.seed), el, "world.negt2i"
        )
        report = {
            "simulated": True,
            "note": "SIMULATED: images and per-object judgements from world.negt2i",
            **accuracy_report(judg, el, boot),
            "planted": accuracy_truth(corpus, world.negt2i),
        }
    else:
        report = {"simulated": False, "source": judgements}
        report.update(accuracy_report(read_judgements(judgements, el), el, boot))
    report = {"bootstrap": boot.block("prompts with replacement"), **report}
    write_json(out, nan_to_none(report))
    click.echo(f"audit negation-accuracy: {report['images']} images -> {out}")


@audit_group.command("negation-judge", cls=FriendlyCommand)
@click.argument("images", type=click.Path(exists=True, dir_okay=False))
@click.option("--judge", "judge_name", required=True, help="a judges catalogue entry of --params")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(exists=True, dir_okay=False),
    help="the corpus the images were rendered from (negation-corpus); default: written afresh "
    "from --per-cell and --corpus-seed",
)
@click.option("--per-cell", type=click.IntRange(1), default=100, show_default=True)
@click.option("--corpus-seed", type=int, default=0, show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="judgements to write")
@click.option(
    "--accuracy",
    "accuracy_out",
    type=click.Path(dir_okay=False),
    help="also write Table 3 from the judgements (as negation-accuracy) to this JSON",
)
@click.option(
    "--cache",
    "cache_path",
    default="cache/negation_judge.sqlite",
    show_default=True,
    help="answers kept by judge, question and image (cache/NAME: the repository's cache folder)",
)
@click.option("--n-boot", type=click.IntRange(1, 100_000), default=1000, show_default=True)
@click.option("--seed", type=int, default=42, show_default=True, help="bootstrap seed")
def negation_judge_command(
    *,
    images: str,
    judge_name: str,
    params_path: str,
    corpus_path: str | None,
    per_cell: int,
    corpus_seed: int,
    out: str,
    accuracy_out: str | None,
    cache_path: str,
    n_boot: int,
    seed: int,
) -> None:
    """Judge NegT2IBench corpus images per element with a judges entry (IMAGES: image_id,
    prompt_id, path relative to IMAGES' folder): the per-object judgements file that
    negation-accuracy and negation.corpus.source file read. The judge's own timings (s/img,
    s/Q, load s, GPU GiB: Tables 2, 8) are printed and logged to the untracked run log only."""
    import json

    from implicit_bench._util.files import nan_to_none, read_table, write_json, write_table
    from implicit_bench.audits.negation_accuracy import accuracy_report, validate_judgements
    from implicit_bench.audits.negation_corpus import COLUMNS, elements, write_corpus
    from implicit_bench.audits.negation_judge import judge_corpus_images
    from implicit_bench.backends.judges import build_judge
    from implicit_bench.errors import ConfigError, InputError
    from implicit_bench.params import load_params
    from implicit_bench.runtime.cache import DiskCache
    from implicit_bench.runtime.runlog import log_run

    catalogue = load_params(params_path).get("judges") or {}
    if judge_name not in catalogue:
        raise ConfigError(
            f"{params_path}: judges has no entry '{judge_name}' (known: {sorted(catalogue)})"
        )
    judge = build_judge(dict(catalogue[judge_name]), where=f"judges.{judge_name}")
    table = read_table(images).astype({"image_id": str, "prompt_id": str})
    for col in ("image_id", "prompt_id", "path"):
        if col not in table.columns:
            raise InputError(images, None, col, "column missing from the images table")
    if corpus_path:
        corpus = read_table(corpus_path)
        missing = [c for c in COLUMNS if c not in corpus.columns]
        if missing:
            raise InputError(corpus_path, None, missing[0], "column missing from the corpus")
    else:
        corpus = write_corpus(per_cell, corpus_seed)
    el = elements(corpus)
    root = Path(images).resolve().parent
    cache = DiskCache(cache_path)
    try:
        frame, counts, cost = judge_corpus_images(
            table, el, judge, lambda p: (root / p).read_bytes(), cache
        )
    finally:
        cache.close()
    validate_judgements(frame, el, out)
    write_table(frame, out)
    summary = {"judge": judge_name, "model": judge.model, **counts}
    log_run("audit negation-judge", {**summary, "cost": cost.summary()})
    click.echo(
        f"audit negation-judge: {counts['images_judged']} of {counts['images']} images, "
        f"{counts['questions']} questions asked, {counts['answers_from_cache']} answers from "
        f"the cache -> {out}"
    )
    summary_cost = json.dumps(cost.summary())
    click.echo(f"judge cost (wall clock, not written to any output file): {summary_cost}")
    if accuracy_out:
        boot = _boot(n_boot, seed)
        report = {
            "bootstrap": boot.block("prompts with replacement"),
            "simulated": False,
            "source": out,
            "judge": judge_name,
            "judging": counts,
            **accuracy_report(validate_judgements(frame, el, out), el, boot),
        }
        write_json(accuracy_out, nan_to_none(report))
        click.echo(f"audit negation-judge: Table 3 -> {accuracy_out}")


@audit_group.command("judge-cost", cls=FriendlyCommand)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False),
    help="the run log (default: IMPLICIT_BENCH_RUN_LOG or logs/runs.jsonl)",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="also write the figures as JSON (keep it out of metrics/: they are wall clock)",
)
def judge_cost_command(*, log_path: str | None, out: str | None) -> None:
    """NegT2IBench Tables 2 and 8's evaluator cost columns (s/img, s/Q, questions per image,
    load s, GPU GiB) per judge, from the judges' own timings in the untracked run log (the
    judge stages and audit negation-judge write them there)."""
    from implicit_bench._util.files import write_json
    from implicit_bench.audits.judge_cost import cost_table, judge_costs, read_run_log
    from implicit_bench.runtime.runlog import run_log_path

    path = log_path or run_log_path()
    if not Path(path).exists():
        raise click.UsageError(f"{path}: no run log (run a judge stage first)")
    costs = judge_costs(read_run_log(path))
    if not costs:
        raise click.UsageError(f"{path}: no judge timings logged (every answer from the cache?)")
    click.echo(cost_table(costs))
    click.echo("wall-clock figures of this machine's runs: not written to metrics/")
    if out:
        write_json(out, costs)
