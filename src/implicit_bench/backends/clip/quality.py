"""CLIP-Score as a quality metric (HoloFair E.1) and the CLIP backbone comparison (When the
Judge Acts T15: ViT-L/14 against ViT-B/32), both from the ``clip`` stage's embeddings.

CLIP-Score of an image = cos(image embedding, embedding of the prompt it was rendered from), on
L2-normalised embeddings. HoloFair reports it on the raw cosine scale (0.2288 for SD3.5M with
clip-vit-large-patch14): ``clip_score`` is the mean cosine; ``clipscore_hessel`` is Hessel et
al.'s 2.5 * max(cos, 0), the scale of the original CLIPScore, for comparison with other papers.

Backbone comparison: the same images embedded by a second CLIP model (``clip.compare_models``)
give a second lean per (unit, seed) and a second blind label per image; the report sets them
side by side with the primary model's: Pearson and Spearman r of the leans, the share of lean
signs that agree, the blind labels' agreement rate and Cohen's kappa (scikit-learn), and each
model's mean lean and lean S%.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

HESSEL_W = 2.5  # CLIPScore's weight (Hessel et al. 2021)


def clip_scores(
    images: pd.DataFrame, img_emb: dict[str, np.ndarray], txt_emb: dict[str, np.ndarray]
) -> pd.DataFrame:
    """One row per image (``images``: config, unit_id, variant, seed, sha256, prompt): cos."""
    pairs = zip(images["sha256"], images["prompt"].astype(str), strict=True)
    cos = [float(img_emb[sha] @ txt_emb[p]) for sha, p in pairs]
    return images[["config", "unit_id", "variant", "seed"]].assign(cos=cos)


def clip_score_summary(scores: pd.DataFrame) -> dict[str, Any]:
    """Per config: every image, then per variant: n, clip_score (mean cos), clipscore_hessel."""

    def one(cos: pd.Series) -> dict[str, Any]:
        c = cos.to_numpy(float)
        return {
            "n": int(c.size),
            "clip_score": float(c.mean()) if c.size else math.nan,
            "clipscore_hessel": float(HESSEL_W * np.maximum(c, 0).mean()) if c.size else math.nan,
        }

    out: dict[str, Any] = {}
    for config, g in scores.groupby("config", sort=True):
        out[str(config)] = {
            "all": one(g["cos"]),
            "by_variant": {str(v): one(gv["cos"]) for v, gv in g.groupby("variant", sort=True)},
        }
    return out


def _kappa(a: pd.Series, b: pd.Series) -> float:
    from sklearn.metrics import cohen_kappa_score

    if len(a) == 0 or (a.nunique() == 1 and b.nunique() == 1 and a.iloc[0] == b.iloc[0]):
        return math.nan  # kappa is undefined when both raters use one label
    return float(cohen_kappa_score(a, b))


def backbone_comparison(
    primary_sims: pd.DataFrame,
    other_sims: pd.DataFrame,
    primary_blind: pd.DataFrame,
    other_blind: pd.DataFrame,
) -> dict[str, Any]:
    """The primary and a second CLIP model side by side (see the module docstring).

    ``*_sims``: ``scores.variant_sims`` frames; ``*_blind``: ``scores.blind_rows`` frames."""
    key = ["config", "unit_id", "seed"]
    lean = primary_sims[[*key, "lean"]].merge(
        other_sims[[*key, "lean"]], on=key, suffixes=("_primary", "_other")
    )
    x, y = lean["lean_primary"].to_numpy(float), lean["lean_other"].to_numpy(float)
    enough = len(lean) >= 3 and np.std(x) > 0 and np.std(y) > 0
    bkey = ["config", "unit_id", "variant", "seed"]
    labels = primary_blind[[*bkey, "value"]].merge(
        other_blind[[*bkey, "value"]], on=bkey, suffixes=("_primary", "_other")
    )
    same = labels["value_primary"] == labels["value_other"]
    return {
        "lean_pairs": int(len(lean)),
        "lean_pearson": float(stats.pearsonr(x, y)[0]) if enough else math.nan,
        "lean_spearman": float(stats.spearmanr(x, y)[0]) if enough else math.nan,
        "lean_sign_agreement": float((np.sign(x) == np.sign(y)).mean()) if len(x) else math.nan,
        "lean_mean": {
            "primary": float(x.mean()) if len(x) else math.nan,
            "other": float(y.mean()) if len(y) else math.nan,
        },
        "lean_s_share": {
            "primary": float((x > 0).mean()) if len(x) else math.nan,
            "other": float((y > 0).mean()) if len(y) else math.nan,
        },
        "blind_images": int(len(labels)),
        "blind_agreement": float(same.mean()) if len(labels) else math.nan,
        "blind_kappa": _kappa(labels["value_primary"], labels["value_other"]),
    }
