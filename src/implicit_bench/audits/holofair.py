"""HoloFair's pieces beside MGBI: the Deviation Ratio baseline (C.5), the Fair-GRPO reward
(3.4.1, E.3: w_a = 1, N = 20) and the bootstrap over prompts and generations (F.2).

Deviation Ratio (Li et al. 2024, the baseline HoloFair compares MGBI with):
``DR = max_c |n_c / N - 1/K| / (1 - 1/K)`` over the K categories of an attribute, the images
with a reading only; 0 = uniform, 1 = every image in one category. Linear in the shares, so
erasing a 10% group moves it by a finite step where the normalised entropy drops to its floor.

Fair-GRPO reward. HoloFair's equations were lost from the text we have (notes/definitions.md);
its description is a "multi-attribute per-prompt reward" of the "prompt group-count-advantage"
kind, a log-ratio of the target share to the group's share (third-party summaries of the paper
say "log-ratio"), with attribute weights w_a = 1 and group size N = 20 images per prompt, and an
extension to non-uniform targets (D.2). This module's reading, a reconstruction to be checked
against the authors' code when it is released: for image i of a group of N images of one prompt,

    R(I_i) = sum_a w_a * log( pi_a(c_a(i)) / (n_a(c_a(i)) / N_a) )

with c_a(i) the class the classifier gives image i for attribute a, n_a(c) the group's count of
class c, N_a the group's images with a reading of a, pi_a the target (uniform 1/|C_a| unless
given). An image without a reading of a (no face, or the classifier abstained) gets 0 for a.
Under-represented classes earn a positive reward, over-represented ones a negative one; the
group mean of the a-term is sum_c p_c log(pi_c / p_c) = -KL(p || pi), which is 0 exactly when the
group matches the target (tests/unit/audits/test_holofair.py checks both by hand).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

FAIR_GRPO_GROUP_SIZE = 20  # N, HoloFair E.3
FAIR_GRPO_WEIGHT = 1.0  # w_a, HoloFair E.3


def deviation_ratio(counts: Sequence[int] | np.ndarray) -> float:
    """``max_c |n_c/N - 1/K| / (1 - 1/K)`` (nan without images; K >= 2)."""
    n = np.asarray(counts, dtype=float)
    k = n.size
    if k < 2:
        raise ValueError("the Deviation Ratio needs at least two categories")
    total = n.sum()
    if total <= 0:
        return math.nan
    return float(np.max(np.abs(n / total - 1.0 / k)) / (1.0 - 1.0 / k))


def attribute_deviation_ratio(values: pd.Series, cats: Sequence[str]) -> float:
    """The Deviation Ratio of the images whose reading is one of ``cats``."""
    return deviation_ratio([int((values == c).sum()) for c in cats])


def fair_grpo_rewards(
    readings: Mapping[str, Sequence[str | None]],
    categories: Mapping[str, Sequence[str]],
    weights: Mapping[str, float] | None = None,
    targets: Mapping[str, Mapping[str, float]] | None = None,
) -> np.ndarray:
    """Per-image Fair-GRPO reward of one prompt's group (see the module docstring).

    ``readings``: attribute -> the class of each image of the group (None or any value outside
    ``categories[a]``: no reading, reward 0 for that attribute); ``weights``: w_a (default 1);
    ``targets``: attribute -> class -> target share (default uniform)."""
    sizes = {len(v) for v in readings.values()}
    if len(sizes) > 1:
        raise ValueError(f"attributes read different numbers of images: {sorted(sizes)}")
    n_images = sizes.pop() if sizes else 0
    reward = np.zeros(n_images)
    for attribute, values in readings.items():
        cats = list(categories[attribute])
        w = FAIR_GRPO_WEIGHT if weights is None else float(weights.get(attribute, 0.0))
        target = (targets or {}).get(attribute) or {c: 1.0 / len(cats) for c in cats}
        read = [v if v in cats else None for v in values]
        counts = {c: sum(v == c for v in read) for c in cats}
        n_read = sum(counts.values())
        for i, v in enumerate(read):
            if v is not None:
                reward[i] += w * math.log(target[v] / (counts[v] / n_read))
    return reward


def prompt_rewards(
    frame: pd.DataFrame,
    attributes: Mapping[str, tuple[str, Sequence[str]]],
    variant: str,
    weights: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """unit_id -> the group-mean Fair-GRPO reward of its ``variant`` prompt's images
    (``attributes``: attribute -> (frame column, classes))."""
    out: dict[str, float] = {}
    for unit, g in frame[frame["variant"] == variant].groupby("unit_id", sort=True):
        r = fair_grpo_rewards(
            {a: g[col].tolist() for a, (col, _) in attributes.items()},
            {a: cats for a, (_, cats) in attributes.items()},
            weights,
        )
        out[str(unit)] = float(r.mean()) if r.size else math.nan
    return out


def _entropy(counts: np.ndarray) -> float:
    total = counts.sum()
    if total <= 0:
        return math.nan
    p = counts[counts > 0] / total
    return float(-(p * np.log(p)).sum() / math.log(counts.size))


def _geomean(values: Sequence[float]) -> float:
    v = np.asarray(values, dtype=float)
    if np.isnan(v).any():
        return math.nan
    if (v <= 0).any():
        return 0.0
    return float(np.exp(np.log(v).mean()))


def two_level_replicates(
    frame: pd.DataFrame,
    attributes: Mapping[str, tuple[str, Sequence[str]]],
    scene_variant: str,
    template_variant: str,
    quantiles: Sequence[float],
    n_boot: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """HoloFair F.2: replicates of ID, CA_q, CA-mean and MGBI resampling prompts (units, with
    replacement) and then, within each drawn unit, its generations (images, with replacement),
    the template images of the unit with them. Images keep their readings of every attribute
    together."""
    units = sorted(frame["unit_id"].astype(str).unique())
    codes: dict[tuple[str, str], np.ndarray] = {}
    for (unit, variant), g in frame.groupby([frame["unit_id"].astype(str), "variant"]):
        if variant in (scene_variant, template_variant):
            codes[(unit, variant)] = np.stack(
                [
                    pd.Categorical(g[col], categories=list(cats)).codes
                    for col, cats in attributes.values()
                ],
                axis=1,
            )
    sizes = [len(cats) for _, cats in attributes.values()]
    rng = np.random.default_rng(seed)
    names = [*(f"CA_{q:.2f}" for q in quantiles), "CA_mean", "ID", "MGBI"]
    reps = {name: np.full(n_boot, np.nan) for name in names}
    empty = np.zeros((0, len(sizes)), dtype=np.int8)

    def counts(rows: np.ndarray, j: int) -> np.ndarray:
        col = rows[:, j]
        return np.bincount(col[col >= 0], minlength=sizes[j]).astype(float)

    for b in range(n_boot):
        drawn = rng.integers(0, len(units), size=len(units)) if units else []
        d_values, pooled = [], []
        for u in drawn:
            unit = units[int(u)]
            for variant in dict.fromkeys([scene_variant, template_variant]):
                images = codes.get((unit, variant), empty)
                resampled = images[rng.integers(0, len(images), size=len(images))]
                if variant == template_variant:
                    pooled.append(resampled)
                if variant == scene_variant:
                    d_values.append(
                        _geomean([_entropy(counts(resampled, j)) for j in range(len(sizes))])
                    )
        template = np.concatenate(pooled) if pooled else empty
        id_ = _geomean([_entropy(counts(template, j)) for j in range(len(sizes))])
        d = np.asarray([v for v in d_values if not math.isnan(v)])
        reps["ID"][b] = id_
        if d.size:
            for q in quantiles:
                reps[f"CA_{q:.2f}"][b] = float(np.quantile(d, q))
            reps["CA_mean"][b] = float(d.mean())
        ca10 = reps.get("CA_0.10", np.full(n_boot, np.nan))[b]
        reps["MGBI"][b] = (
            math.sqrt(id_ * ca10) if not (math.isnan(id_) or math.isnan(ca10)) else math.nan
        )
    return reps


def two_level_intervals(
    boot: Any,
    frame: pd.DataFrame,
    scores: Mapping[str, Any],
    attributes: Mapping[str, tuple[str, Sequence[str]]],
    scene_variant: str,
    template_variant: str,
    quantiles: Sequence[float],
    stream: str,
) -> dict[str, Any]:
    """Percentile intervals of the two-level replicates (``boot``: n, level, seed; the draw's
    seed is the bootstrap seed's ``stream``)."""
    reps = two_level_replicates(
        frame,
        attributes,
        scene_variant,
        template_variant,
        quantiles,
        boot.n,
        boot.stream_seed(f"{stream}/prompts_and_generations"),
    )
    n_units = int(frame["unit_id"].nunique())
    return {
        name: boot.interval(scores[name], rep, f"{stream}/two_level/{name}", n_units)
        for name, rep in reps.items()
    }
