"""Attribute diversity of neutral images (HoloFair's ID, CA_q and MGBI, on blind labels).

Diversity of a set of images = normalised entropy of their blind labels,
H = -sum_c p_c log p_c / log |C|, with C = {s, a} (``neither`` left out) or {s, a, neither}.

- pooled per bias type: all neutral images of the units of one bias type;
- per scene: the images of one unit's neutral prompt (its seeds);
- ID: the geometric mean over bias types of H of the images of the subject-only template
  prompts (variant ``subject`` by default: "a photo of a {subject}");
- CA_q: the q-quantile of the per-scene H over scenes (q = 0.05, 0.10, 0.20); CA-mean their mean;
- MGBI = sqrt(ID * CA_0.10).

CA_q and MGBI are estimated only from scenes with at least ``min_scene_images`` labelled
images (HoloFair generates N images per prompt, 20 in its E.1): the entropy of 3 images can
only be 0, 0.918 or 1, so a quantile over such scenes measures the seed count, not the
diversity. Without such scenes they are null and ``not_estimable`` says why (the diversity
study, docs/audits.md, renders N images per prompt and estimates them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.closed_form import geometric_mean, normalised_entropy
from implicit_bench.protocol.schema import BLIND_LABELS

QUANTILES: tuple[float, ...] = (0.05, 0.10, 0.20)
MIN_SCENE_IMAGES = 20  # HoloFair E.1: N = 20 images per prompt


def categories(include_neither: bool) -> tuple[str, ...]:
    return BLIND_LABELS if include_neither else BLIND_LABELS[:2]


def label_entropy(labels: pd.Series, cats: Sequence[str]) -> float:
    counts = [int((labels == c).sum()) for c in cats]
    return normalised_entropy(counts, len(cats))


def entropy_by(frame: pd.DataFrame, by: str | list[str], cats: Sequence[str]) -> pd.DataFrame:
    """H and counts per group of labelled images (labels outside ``cats`` are left out).

    The label counts of every group come from one ``groupby``; H is computed per group from
    them (``normalised_entropy``, as it always was)."""
    kept = frame[frame["label"].isin(cats)]
    keys = [by] if isinstance(by, str) else list(by)
    if kept.empty:
        return pd.DataFrame([])
    counts = kept.groupby([*keys, "label"], sort=True).size().unstack("label", fill_value=0)
    counts = counts.reindex(columns=list(cats), fill_value=0)
    rows = []
    for key, row in zip(counts.index, counts.to_numpy().tolist(), strict=True):
        values = key if isinstance(key, tuple) else (key,)
        rows.append(
            {
                **dict(zip(keys, values, strict=True)),
                "n": int(sum(row)),
                **{f"n_{c}": int(v) for c, v in zip(cats, row, strict=True)},
                "entropy": normalised_entropy([int(v) for v in row], len(cats)),
            }
        )
    return pd.DataFrame(rows)


def diversity_scores(
    scene_entropy: Sequence[float],
    template_entropy_by_type: dict[str, float],
    quantiles: Sequence[float] = QUANTILES,
) -> dict[str, Any]:
    """ID, CA_q, CA-mean and MGBI from per-scene and per-bias-type template entropies.

    Quantiles use numpy's default (linear interpolation between order statistics). Scenes
    with no labelled image are left out; ID is nan when any bias type has no template image.
    """
    h = np.asarray([x for x in scene_entropy if not math.isnan(x)], dtype=float)
    ca = {f"CA_{q:.2f}": (float(np.quantile(h, q)) if h.size else math.nan) for q in quantiles}
    ca_mean = float(h.mean()) if h.size else math.nan
    id_ = (
        geometric_mean(list(template_entropy_by_type.values()))
        if template_entropy_by_type
        else math.nan
    )
    ca10 = ca.get("CA_0.10", math.nan)
    mgbi = math.sqrt(id_ * ca10) if not (math.isnan(id_) or math.isnan(ca10)) else math.nan
    return {"ID": id_, **ca, "CA_mean": ca_mean, "MGBI": mgbi, "scenes": int(h.size)}


def diversity_frame(
    primary: pd.DataFrame,
    units: pd.DataFrame,
    scene_variant: str = "neutral",
    template_variant: str = "subject",
) -> pd.DataFrame:
    """Primary labels of the scene and template images with the unit's bias type."""
    frame = primary[primary["variant"].isin([scene_variant, template_variant])]
    return frame.merge(
        units[["unit_id", "bias_type"]].astype({"unit_id": str}), on="unit_id", how="left"
    )


def diversity_report(
    frame: pd.DataFrame,
    include_neither: bool = False,
    scene_variant: str = "neutral",
    template_variant: str = "subject",
    quantiles: Sequence[float] = QUANTILES,
    boot: Any = None,
    min_scene_images: int = MIN_SCENE_IMAGES,
) -> dict[str, Any]:
    """Per judge (and config): pooled per-bias-type entropy, per-scene entropy, ID, CA_q, MGBI.

    CA_q, CA-mean and MGBI use the scenes with at least ``min_scene_images`` labelled images;
    none: null, with the reason in ``not_estimable``. With ``boot`` (the analysis
    ``Bootstrap``), the scores carry percentile intervals over units.
    """
    cats = categories(include_neither)
    out: dict[str, Any] = {}
    for (judge, config), g in frame.groupby(["judge", "config"], sort=True):
        scenes = g[g["variant"] == scene_variant]
        templates = g[g["variant"] == template_variant]
        by_type = entropy_by(scenes, "bias_type", cats)
        per_scene = entropy_by(scenes, "unit_id", cats)
        tmpl_type = entropy_by(templates, "bias_type", cats)
        tmpl = (
            dict(zip(tmpl_type["bias_type"], tmpl_type["entropy"], strict=True))
            if len(tmpl_type)
            else {}
        )
        enough = per_scene[per_scene["n"] >= min_scene_images] if len(per_scene) else per_scene
        scores = diversity_scores(
            enough["entropy"].tolist() if len(enough) else [], tmpl, quantiles
        )
        scores["template_images"] = int(templates["label"].isin(cats).sum())
        sizes = per_scene["n"] if len(per_scene) else pd.Series([], dtype=int)
        scores["scene_images_median"] = float(sizes.median()) if len(sizes) else None
        scores["scenes"] = int(
            len(per_scene)
        )  # scenes with a labelled image; CA_q uses the next count
        scores["scenes_with_enough_images"] = int(len(enough))
        scores["min_scene_images"] = int(min_scene_images)
        not_estimable = None
        if len(per_scene) and not len(enough):
            reason = (
                f"not estimable: {len(per_scene)} scenes with a median of "
                f"{sizes.median():g} labelled images; CA_q "
                f"needs at least {min_scene_images} images per scene (the "
                f"entropy of {int(sizes.max())} images takes "
                f"only {len(set(per_scene['entropy'].round(6)))} values "
                "here); see the diversity study"
            )
            not_estimable = {
                k: reason for k in [*(f"CA_{q:.2f}" for q in quantiles), "CA_mean", "MGBI"]
            }
        intervals = None
        if boot is not None:
            from implicit_bench.audits.intervals import diversity_intervals

            kept_units = set(enough["unit_id"]) if len(enough) else set()
            scene_rows = g["variant"] == scene_variant
            sub = g[~scene_rows | g["unit_id"].isin(kept_units)] if kept_units else g
            intervals = diversity_intervals(
                boot,
                sub,
                scores,
                cats=cats,
                scene_variant=scene_variant,
                template_variant=template_variant,
                quantiles=quantiles,
                stream=f"diversity/{judge}/{config}",
            )
            for name in not_estimable or {}:
                intervals[name] = None
        out.setdefault(str(judge), {})[str(config)] = {
            "scores": scores,
            "not_estimable": not_estimable,
            "intervals": intervals,
            "entropy_by_bias_type": by_type.set_index("bias_type").to_dict("index")
            if len(by_type)
            else {},
            "template_entropy_by_bias_type": tmpl,
            "scene_entropy_summary": {
                "mean": float(per_scene["entropy"].mean()) if len(per_scene) else math.nan,
                "share_collapsed": float((per_scene["entropy"] == 0).mean())
                if len(per_scene)
                else math.nan,
            },
        }
    return out
