"""A real run's calibration set (docs/correction.md, "Real run").

The calibration table (``tables.CALIBRATION``, default ``data/raw/calibration.csv``) maps an
image key (config, unit_id, variant, seed) to a **reference label** (s, a or neither) and its
source (``human`` or ``reference_judge``). It is made in two steps: ``sample_sheet`` draws the
images, stratified by variant, from the primary judge's valid blind answers (the reference
column blank), and ``label_from_judge`` / ``label_from_answers`` fill the reference labels. The
``evaluate`` stage (metric ``corrected``) pairs each labelled item with the judge's stored
blind label and reports the corrected rates beside the judged ones (``analysis.correction``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.agreement import rater_agreement
from implicit_bench._util.hashing import derive_seed
from implicit_bench.analysis.agreement.raters import long_from_raters
from implicit_bench.analysis.context import EvalContext
from implicit_bench.analysis.correction import (
    CalibrationSet,
    Correction,
    corrected_rates,
    corrected_strength_groups,
)
from implicit_bench.analysis.views import rows
from implicit_bench.errors import InputError
from implicit_bench.protocol.schema import BLIND_LABELS, VARIANTS
from implicit_bench.protocol.tables import CALIBRATION

KEY = ["config", "unit_id", "variant", "seed"]
SHEET_COLUMNS = [*KEY, "reference", "source", "image_sha256"]


def evaluated_run(params_path: str):  # noqa: ANN202 - (EvaluateParams, Tables, EvalContext)
    """The ``evaluate`` params of ``params_path``, its tables and their evaluation context
    (``implicit-bench calibration``)."""
    from implicit_bench.analysis.load import load_tables
    from implicit_bench.analysis.params import EvaluateParams
    from implicit_bench.params import load_params, section

    params = section(
        load_params(params_path),
        "evaluate",
        EvaluateParams,
        params_path,
        inherit={"bootstrap": "bootstrap", "primary_order": "primary_order"},
    )
    tables = load_tables(
        params.units,
        params.judgements,
        (),
        params.on_bad_row,
        params.on_duplicate,
        params.primary_order,
    )
    return params, tables, EvalContext.build(tables, tables.units, params)


def judged_labels(judgements: pd.DataFrame, config: str, judge: str) -> pd.DataFrame:
    """The judge's valid blind labels of ``config``'s core-variant images (one row per image:
    the analysis keeps each image's primary option order), with the key columns."""
    sub = rows(judgements, "blind", config, judge)
    sub = sub[sub["variant"].isin(VARIANTS) & sub["value"].isin(BLIND_LABELS)]
    cols = [*KEY, "value"] + (["image_sha256"] if "image_sha256" in sub.columns else [])
    return sub[cols].sort_values(KEY, kind="stable").reset_index(drop=True)


def sample_sheet(
    judgements: pd.DataFrame, config: str, judge: str, images: int, seed: int
) -> pd.DataFrame:
    """``images`` of the judge's validly answered images, drawn without replacement with an equal
    share per core variant (remainders to the first variants: neutral, stereotype,
    anti-stereotype) from ``derive_seed("calibration", seed, config, judge)``; the reference and
    source columns blank. The judge's labels are not in the sheet (the labeller stays blind)."""
    pool = judged_labels(judgements, config, judge)
    rng = np.random.default_rng(derive_seed("calibration", seed, config, judge))
    parts = []
    for i, variant in enumerate(VARIANTS):
        sub = pool[pool["variant"] == variant]
        m = min(len(sub), images // len(VARIANTS) + (1 if i < images % len(VARIANTS) else 0))
        parts.append(sub.iloc[np.sort(rng.choice(len(sub), size=m, replace=False))])
    sheet = pd.concat(parts, ignore_index=True) if parts else pool.iloc[:0]
    sheet = sheet.assign(reference=None, source=None)
    if "image_sha256" not in sheet.columns:
        sheet["image_sha256"] = None
    return sheet[SHEET_COLUMNS].reset_index(drop=True)


def label_from_judge(
    sheet: pd.DataFrame, judgements: pd.DataFrame, judge: str
) -> tuple[pd.DataFrame, int]:
    """The sheet with ``reference`` = the reference ``judge``'s valid blind label of each image
    (source ``reference_judge``) where it has one; rows already labelled are kept. Returns the
    sheet and the number of rows left unlabelled (no valid answer of that judge)."""
    out = sheet.copy()
    for config in sorted(out["config"].unique()):
        labels = judged_labels(judgements, config, judge)
        mask = (out["config"] == config) & out["reference"].isna()
        pos = pd.MultiIndex.from_frame(labels[KEY]).get_indexer(
            pd.MultiIndex.from_frame(out.loc[mask, KEY])
        )
        hit = pd.Series(labels["value"].to_numpy()[pos], index=out.index[mask])[pos >= 0]
        out.loc[hit.index, "reference"] = hit
        out.loc[hit.index, "source"] = "reference_judge"
    return out, int(out["reference"].isna().sum())


def label_from_answers(sheet: pd.DataFrame, answers: pd.DataFrame, path: str) -> pd.DataFrame:
    """The sheet with people's reference labels (``answers``: the key columns and ``reference``,
    validated as a CALIBRATION table), source ``human``. An answer for an image not in the sheet
    is an error naming its row."""
    index = pd.MultiIndex.from_frame(sheet[KEY])
    keys = pd.MultiIndex.from_frame(answers[KEY])
    pos = index.get_indexer(keys)
    missing = np.flatnonzero(pos < 0)
    if len(missing):
        i = int(missing[0])
        raise InputError(
            path,
            i + 1,
            "unit_id",
            f"image {tuple(answers.loc[i, KEY])} is not in the calibration sheet",
        )
    out = sheet.copy()
    out.loc[out.index[pos], "reference"] = answers["reference"].to_numpy()
    out.loc[out.index[pos], "source"] = "human"
    if "raters" in out.columns:  # a bundle import's rater labels no longer apply
        out.loc[out.index[pos], "raters"] = None
    return out


def calibration_items(
    table: pd.DataFrame, judged: pd.DataFrame, config: str
) -> tuple[CalibrationSet, dict[str, Any]]:
    """The labelled items of ``config`` paired with the judge's stored labels (``judged``:
    ``judged_labels``). An image the judgements do not hold at all is an error; rows of other
    configurations, unlabelled rows and images the judge answered invalidly are left out and
    counted. With a ``raters`` column (``human-eval import``), ``raters`` has the agreement of
    the people who labelled the items (Cohen's kappa per rater pair)."""
    table = table.reset_index(drop=True)
    mine = table["config"] == config
    labelled = mine & table["reference"].notna()
    judged_index = pd.MultiIndex.from_frame(judged[KEY])
    pos = judged_index.get_indexer(pd.MultiIndex.from_frame(table.loc[labelled, KEY]))
    items = table.loc[labelled].assign(
        judged=[judged["value"].iat[p] if p >= 0 else None for p in pos]
    )
    counts = {
        "rows": len(table),
        "other_config": int((~mine).sum()),
        "unlabelled": int((mine & ~labelled).sum()),
        "judge_invalid": int(items["judged"].isna().sum()),
    }
    items = items[items["judged"].notna()]
    code = {lab: i for i, lab in enumerate(BLIND_LABELS)}
    cal = CalibrationSet(
        items["reference"].map(code).to_numpy(dtype=int),
        items["judged"].map(code).to_numpy(dtype=int),
        items["variant"].to_numpy(),
    )
    counts["by_source"] = {
        str(k): int(v) for k, v in items["source"].value_counts().sort_index().items()
    }
    if "raters" in items.columns and items["raters"].notna().any():
        long = long_from_raters(items["raters"].set_axis(items[KEY].astype(str).agg("|".join, 1)))
        counts["raters"] = rater_agreement(long, BLIND_LABELS)
    return cal, counts


def unknown_images(table: pd.DataFrame, judgements: pd.DataFrame, config: str, path: str) -> None:
    """Raise for the first row of ``config`` whose image has no blind row in the judgements."""
    known = pd.MultiIndex.from_frame(rows(judgements, "blind", config)[KEY].drop_duplicates())
    mine = table.index[table["config"] == config]
    pos = known.get_indexer(pd.MultiIndex.from_frame(table.loc[mine, KEY]))
    bad = np.flatnonzero(pos < 0)
    if len(bad):
        i = int(mine[bad[0]])
        raise InputError(
            path,
            i + 1,
            "unit_id",
            f"image {tuple(table.loc[i, KEY])} has no blind judgement in configuration '{config}'",
        )


def corrected(ctx: EvalContext) -> dict[str, Any]:
    """Metric ``corrected``: with a calibration table (``evaluate.calibration``, when the file
    exists), the primary judge's headline rates and default-strength groups corrected for its
    misclassification, beside the judged ones (same bootstrap streams, so paired with them).
    Without one, no key (benchmark.json unchanged)."""
    path = ctx.params.calibration
    if not path or not Path(path).exists() or not ctx.blind_judges:
        return {}
    table = CALIBRATION.read(path)
    config, judge, boot = ctx.config, str(ctx.primary_judge), ctx.boot
    unknown_images(table, ctx.judgements, config, path)
    cal, counts = calibration_items(table, judged_labels(ctx.judgements, config, judge), config)
    corr = Correction(cal, boot, f"{config}/{judge}/calibration")
    c = ctx.counts(judge)
    stream = f"{config}/{judge}/all"
    fixed = corrected_rates(c, np.flatnonzero(c.has_labels()), boot, stream, corr)
    groups = corrected_strength_groups(
        c, c, ctx.k, boot, f"{config}/{judge}/strength/{judge}", corr
    )
    return {
        "corrected": {
            "judge": judge,
            "config": config,
            "calibration_table": str(path),
            "calibration": {**counts, **corr.describe()},
            "warning": corr.warning,
            "all": fixed,
            "by_default_strength": groups,
            "note": "judged rates of judges[primary].all corrected for the "
            "judge's misclassification on the calibration "
            "set (three-class Rogan-Gladen); intervals: joint "
            "bootstrap of units and calibration items",
        }
    }
