"""``implicit-bench calibration``: make a real run's judge-error calibration table.

``sample`` draws the images (stratified by variant) from the primary blind judge's valid answers
and writes the labelling sheet; ``label`` fills its reference labels from a reference judge's
blind answers or from people's answers (CSV). docs/correction.md, "Real run".
"""

from __future__ import annotations

import click

from implicit_bench._util.friendly_errors import FriendlyGroup


@click.group(cls=FriendlyGroup)
def calibration() -> None:
    """Make the judge-error calibration table of a real run (docs/correction.md)."""


@calibration.command("sample")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option(
    "--images",
    type=click.IntRange(3),
    default=600,
    show_default=True,
    help="calibration images (equal share per variant)",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", default=None, help="sheet to write (default: evaluate.calibration)")
@click.option("--force", is_flag=True, help="overwrite an existing sheet")
def sample_command(params_path: str, images: int, seed: int, out: str | None, force: bool) -> None:
    """Draw the calibration images of evaluate.config from the primary blind judge's valid
    answers; write the sheet with blank reference labels (the judge's labels are not in it)."""
    from pathlib import Path

    from implicit_bench.analysis.calibration import evaluated_run, sample_sheet
    from implicit_bench.errors import ConfigError
    from implicit_bench.protocol.tables import CALIBRATION, CALIBRATION_PATH

    params, tables, ctx = evaluated_run(params_path)
    target = out or params.calibration or CALIBRATION_PATH
    if Path(target).exists() and not force:
        raise ConfigError(
            f"{target} exists (its labels would be lost); pass --force to draw a new sheet"
        )
    if not ctx.blind_judges:
        raise ConfigError(f"{params.judgements}: no blind judgements to calibrate")
    sheet = sample_sheet(tables.judgements, ctx.config, str(ctx.primary_judge), images, seed)
    CALIBRATION.write(sheet, target)
    per = sheet["variant"].value_counts().to_dict()
    click.echo(
        f"calibration: {len(sheet)} images of {ctx.config} (judge "
        f"{ctx.primary_judge}; {per}) -> {target}"
    )


@calibration.command("label")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--sheet", default=None, help="calibration sheet (default: evaluate.calibration)")
@click.option(
    "--from-judge",
    "judge",
    default=None,
    help="reference judge: its valid blind answers become the labels",
)
@click.option(
    "--answers",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="people's answers: CSV with config, unit_id, variant, seed, reference (s, a, neither)",
)
def label_command(
    params_path: str, sheet: str | None, judge: str | None, answers: str | None
) -> None:
    """Fill the sheet's reference labels (source reference_judge or human)."""
    from implicit_bench.analysis.calibration import (
        evaluated_run,
        label_from_answers,
        label_from_judge,
    )
    from implicit_bench.errors import ConfigError
    from implicit_bench.protocol.tables import CALIBRATION, CALIBRATION_PATH

    if (judge is None) == (answers is None):
        raise ConfigError("calibration label: give exactly one of --from-judge or --answers")
    if judge is not None:
        params, tables, ctx = evaluated_run(params_path)
        path = sheet or params.calibration or CALIBRATION_PATH
        if judge == ctx.primary_judge:
            raise ConfigError(
                f"--from-judge {judge} is the primary judge: its errors "
                "cannot be measured against itself"
            )
        if judge not in set(tables.judgements.loc[tables.judgements["task"] == "blind", "judge"]):
            raise ConfigError(
                f"--from-judge {judge}: no blind answers of that judge in {params.judgements}"
            )
        filled, left = label_from_judge(CALIBRATION.read(path), tables.judgements, judge)
    else:
        from implicit_bench.analysis.params import EvaluateParams
        from implicit_bench.params import load_params, section

        params = section(
            load_params(params_path),
            "evaluate",
            EvaluateParams,
            params_path,
            inherit={"bootstrap": "bootstrap", "primary_order": "primary_order"},
        )
        path = sheet or params.calibration or CALIBRATION_PATH
        people = CALIBRATION.read(
            answers, require=("config", "unit_id", "variant", "seed", "reference")
        )
        blank = people.index[people["reference"].isna()]
        if len(blank):
            from implicit_bench.errors import InputError

            raise InputError(answers, int(blank[0]) + 1, "reference", "empty")
        filled = label_from_answers(CALIBRATION.read(path), people, answers)
        left = int(filled["reference"].isna().sum())
    CALIBRATION.write(filled, path)
    click.echo(
        f"calibration: {len(filled) - left} of {len(filled)} images "
        f"labelled, {left} without a label -> {path}"
    )
