"""``implicit-bench human-eval export|import``: rating bundles and the human-study report."""

from __future__ import annotations

from pathlib import Path

import click

from implicit_bench.params import load_params, section

DEFAULT_PARAMS = "params.yaml"


def _params(params_path: str, overrides: dict):
    from implicit_bench.human_eval.bundle import HumanEvalParams

    if (
        not Path(params_path).exists() and params_path != DEFAULT_PARAMS
    ):  # an explicit --params must exist
        raise click.BadParameter(f"{params_path}: no such file", param_hint="'--params'")
    params = (
        section(load_params(params_path), "human_eval", HumanEvalParams, params_path)
        if Path(params_path).exists()
        else HumanEvalParams()
    )
    updates = {k: v for k, v in overrides.items() if v not in (None, ())}
    if not updates:
        return params
    # options are validated like the params file (--threshold nan or 5 is refused)
    return section(
        {"human_eval": {**params.model_dump(exclude_unset=True), **updates}},
        "human_eval",
        HumanEvalParams,
        "options",
    )


@click.group("human-eval")
def human_eval() -> None:
    """Human evaluation (paper Section 3.4, Appendix D): export rating bundles, import answers."""


@human_eval.command("export")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option(
    "--out", required=True, type=click.Path(file_okay=False), help="bundle directory to write"
)
@click.option(
    "--size", "sample_size", type=int, default=None, help="number of units (default: params)"
)
@click.option("--seed", type=int, default=None, help="sampling seed (default: params)")
@click.option("--config", default=None, help="generator configuration whose images are rated")
@click.option(
    "--image-seed",
    type=int,
    default=None,
    help="rate this seed's images (default: one drawn per unit)",
)
@click.option(
    "--exclude",
    multiple=True,
    help="manifest / answers CSV / id list of units already rated (repeatable)",
)
@click.option("--bundle-id", default=None, help="bundle id (default: a hash of the sample)")
@click.option(
    "--calibration",
    "sheet",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="calibration sheet (implicit-bench calibration sample): a bundle of its images with "
    "the blind A / B / C question instead of the 0-5 ratings",
)
def export_cmd(
    *, params_path, out, sample_size, seed, config, image_seed, exclude, bundle_id, sheet
) -> None:
    """Write OUT/form.html (self-contained rating form), OUT/manifest.json and OUT/README.txt."""
    from implicit_bench.human_eval.bundle import export_bundle

    if sheet is not None:
        from implicit_bench.human_eval.blind_bundle import export_calibration_bundle

        if sample_size is not None or image_seed is not None or exclude or config is not None:
            raise click.UsageError(
                "--calibration takes the sheet's images: --size, --config, --image-seed and "
                "--exclude do not apply"
            )
        info = export_calibration_bundle(
            _params(params_path, {"seed": seed}), sheet, out, bundle_id=bundle_id
        )
        click.echo(
            f"human-eval export: calibration bundle {info['bundle_id']}, {info['n_items']} "
            f"images of {sheet} -> {out}/form.html"
        )
        return
    params = _params(
        params_path,
        {
            "sample_size": sample_size,
            "seed": seed,
            "config": config,
            "image_seed": image_seed,
            "exclude": list(exclude),
        },
    )
    info = export_bundle(params, out, bundle_id=bundle_id)
    click.echo(
        f"human-eval export: bundle {info['bundle_id']}, {info['n_cases']} "
        f"cases ({info['config']}) -> {out}/form.html"
    )


@human_eval.command("import")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option(
    "--manifest",
    "manifests",
    multiple=True,
    required=True,
    help="bundle manifest.json (one per round; repeatable)",
)
@click.option("--out", default=None, help="metrics JSON (default: params human_eval.out_metrics)")
@click.option(
    "--threshold", type=float, default=None, help="rater screening threshold (paper: 0.40)"
)
@click.option(
    "--rule",
    type=click.Choice(["loo_mean", "mean_pairwise", "none"]),
    default=None,
    help="rater screening rule",
)
@click.option(
    "--sheet",
    default=None,
    help="calibration bundles: the calibration table to label (default: the manifest's sheet)",
)
@click.argument("answers", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
def import_cmd(params_path, manifests, out, threshold, rule, sheet, answers) -> None:
    """Read rater ANSWERS CSVs and write the human-evaluation metrics JSON; for calibration
    bundles, write people's blind labels into the calibration table instead."""
    from implicit_bench._util.files import write_json
    from implicit_bench.human_eval.answers import load_manifests
    from implicit_bench.human_eval.blind_import import read_manifest
    from implicit_bench.human_eval.study import human_eval_report

    kinds = {str(read_manifest(m).get("kind")) for m in manifests}  # a tampered list: unhashable
    if "calibration" in kinds:
        _import_calibration(list(manifests), list(answers), sheet, out, len(kinds) > 1)
        return
    params = _params(params_path, {"screen_threshold": threshold, "screen_rule": rule})
    report = human_eval_report(load_manifests(list(manifests)), list(answers), params)
    target = out or params.out_metrics
    write_json(target, report)
    kg = report["kg_validity"]
    mr = report["mean_rating"]
    click.echo(
        f"human-eval import: {report['n_raters']} raters kept "
        f"({len(report['screening']['excluded'])} excluded), "
        f"{report['n_cases']} cases, {report['n_ratings']} ratings; KG "
        f"yes/unsure/no {kg['yes']}/{kg['unsure']}/{kg['no']}; "
        f"mean S/N/A {mr['stereotype']}/{mr['neutral']}/{mr['anti_stereotype']}; "
        f"inter-rater r {report['inter_rater']['mean_pairwise_r']}, alpha "
        f"{report['inter_rater']['alpha_ordinal']} -> {target}"
    )


def _import_calibration(
    manifests: list[str], answers: list[str], sheet: str | None, out: str | None, mixed: bool
) -> None:
    """``human-eval import`` of calibration bundles: label the sheet, report agreement."""
    from implicit_bench._util.files import write_json
    from implicit_bench.human_eval.blind_import import (
        import_calibration,
        load_calibration_manifests,
    )
    from implicit_bench.protocol.tables import CALIBRATION

    if mixed:
        raise click.UsageError("import rating bundles and calibration bundles separately")
    table, path, report = import_calibration(load_calibration_manifests(manifests), answers, sheet)
    CALIBRATION.write(table, path)
    if out:
        write_json(out, report)
    agree = report["agreement"]
    click.echo(
        f"human-eval import: {report['answers']} answers of {agree['raters']} raters -> "
        f"{report['images_labelled']} images labelled (source human; {report['ties']} ties "
        f"broken at random) in {path}; {agree['images_two_or_more_raters']} images with two or "
        f"more raters, mean Cohen's kappa {agree['mean_kappa']}"
        + (f"; report -> {out}" if out else "")
    )
