"""Per-generator table (paper Table 4, App. E.4 step 3): bias, alignment, coverage, refusals.

One row per (configuration, rubric judge), on the neutral images of the analysed units:
``bias`` = mean valid 0-5 rubric score (ungated: over every judged neutral image), ``alignment``
= share of valid alignment answers that are true (the alignment judge of the same name when it
exists, else the configuration's only alignment judge), ``requested`` = units x seeds,
``returned`` = neutral images the generator returned (image index status ok when an index or
refusals table covers the configuration, else the distinct neutral (unit, seed) pairs that have
any judgement row), ``coverage`` = returned / requested. ``bias_gated`` (App. E.4 step 2, the
alignment gate) = mean rubric score over the images the alignment judge called aligned
(``gated_images`` of them; the gate pass rate is ``alignment``): a separate column, never mixed
with the ungated ``bias`` of Table 4. Refusals per bias type come only from
an image index or refusals table (status refused / failed of neutral requests); missing images
are never imputed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from implicit_bench.analysis.views import rows


def generator_table(
    judgements: pd.DataFrame,
    units: pd.DataFrame,
    images: pd.DataFrame | None,
    seeds: Sequence[int] | None,
    n_seeds: int,
) -> pd.DataFrame:
    unit_ids = set(units["unit_id"])
    j = judgements[judgements["unit_id"].isin(unit_ids) & (judgements["variant"] == "neutral")]
    if seeds is not None:
        j = j[j["seed"].isin(list(seeds))]
    n_seed = len(seeds) if seeds is not None else n_seeds
    requested = len(unit_ids) * n_seed
    img = _neutral_images(images, unit_ids, seeds)
    records: list[dict[str, Any]] = []
    for config in sorted(j["config"].unique()):
        jc = j[j["config"] == config]
        if img is not None and config in set(img["config"]):
            ic = img[img["config"] == config]
            returned = int((ic["status"] == "ok").sum())
            refused = int((ic["status"] == "refused").sum())
            failed = int((ic["status"] == "failed").sum())
            source = "image index"
        else:
            returned = int(jc[["unit_id", "seed"]].drop_duplicates().shape[0])
            refused = failed = None
            source = "judgements"
        align = rows(jc, "alignment")
        align_judges = sorted(align["judge"].unique())
        rubric = rows(jc, "rubric")
        for judge in sorted(rubric["judge"].unique()) or [None]:
            r = rubric[(rubric["judge"] == judge) & rubric["valid"]]
            a_judge = (
                judge
                if judge in align_judges
                else (align_judges[0] if len(align_judges) == 1 else None)
            )
            a = align[(align["judge"] == a_judge) & align["valid"]] if a_judge else align.iloc[0:0]
            # E.4 step 2, the alignment gate: bias over the images judged aligned only
            passed = set(
                zip(a.loc[a["score"] == 1, "unit_id"], a.loc[a["score"] == 1, "seed"], strict=True)
            )
            gated = r[[k in passed for k in zip(r["unit_id"], r["seed"], strict=True)]]
            records.append(
                {
                    "config": config,
                    "judge": judge,
                    "images": int(len(r)),
                    "bias": float(r["score"].mean()) if len(r) else None,
                    "alignment_judge": a_judge,
                    "alignment_images": int(len(a)),
                    "alignment": float(a["score"].mean()) if len(a) else None,
                    "bias_gated": float(gated["score"].mean()) if len(gated) else None,
                    "gated_images": int(len(gated)),
                    "requested": requested,
                    "returned": returned,
                    "coverage": returned / requested if requested else None,
                    "refused": refused,
                    "failed": failed,
                    "returned_from": source,
                }
            )
    return pd.DataFrame(records)


def _neutral_images(
    images: pd.DataFrame | None, unit_ids: set[str], seeds: Sequence[int] | None
) -> pd.DataFrame | None:
    if images is None:
        return None
    img = images[images["unit_id"].isin(unit_ids) & (images["variant"] == "neutral")]
    if seeds is not None:
        img = img[img["seed"].isin(list(seeds))]
    return img


def refusals_by_bias_type(
    images: pd.DataFrame | None, units: pd.DataFrame, seeds: Sequence[int] | None
) -> pd.DataFrame:
    """Neutral requests, refusals and failures per (configuration, bias type)."""
    cols = ["config", "bias_type", "requests", "ok", "refused", "failed", "refusal_rate"]
    img = _neutral_images(images, set(units["unit_id"]), seeds)
    if img is None or not len(img):
        return pd.DataFrame(columns=cols)
    img = img.assign(bias_type=img["unit_id"].map(units.set_index("unit_id")["bias_type"]))
    counts = img.groupby(["config", "bias_type", "status"]).size().unstack("status", fill_value=0)
    counts = counts.reindex(columns=["ok", "refused", "failed"], fill_value=0)
    counts["requests"] = counts.sum(axis=1)
    counts["refusal_rate"] = counts["refused"] / counts["requests"]
    return counts.reset_index()[cols]
