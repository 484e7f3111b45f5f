"""Agreement statistics on labels, below every package that needs them: Cohen's
kappa of confusion counts (vectorised over bootstrap replicates), and per pair of raters the
share of equal labels and Cohen's kappa (``sklearn.metrics.cohen_kappa_score``). The analyses
that use them are ``implicit_bench.analysis.agreement`` (judges, deployments, raters); the
``human-eval import`` report uses ``rater_agreement`` too, hence this module below both."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.closed_form import safe_div


def kappa_from_counts(counts: np.ndarray, k: int) -> np.ndarray:
    """Cohen's kappa of flattened k x k confusion counts (rows: last axis k*k); NaN where
    undefined (no image, or one label only). The hand-written formula, not sklearn's
    ``cohen_kappa_score``: it takes replicate counts at once (a bootstrap's thousand rows) and
    keeps sklearn, hence scipy.sparse, off the ``analyze`` path (docs/analysis.md, "Speed")."""
    m = counts.reshape(*counts.shape[:-1], k, k)
    n = m.sum(axis=(-1, -2))
    po = np.asarray(safe_div(np.trace(m, axis1=-2, axis2=-1), n))
    pe = np.asarray(safe_div((m.sum(axis=-1) * m.sum(axis=-2)).sum(axis=-1), n * n))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


def cohen_kappa(table: np.ndarray) -> float | None:
    """Cohen's kappa of one k x k confusion table (rows: first rater); None where undefined."""
    m = np.asarray(table, dtype=float)
    value = float(kappa_from_counts(m.reshape(-1), m.shape[0]))
    return None if math.isnan(value) else value


def rater_agreement(answers: pd.DataFrame, labels: Sequence[str]) -> dict[str, Any]:
    """``answers``: one row per (image, rater) with the rater's ``label``. Returns the images
    with two or more raters and, per rater pair sharing at least one image, ``items``,
    ``agreement`` (share of equal labels) and ``kappa`` (null when undefined: one label only);
    ``mean_kappa`` over the pairs with a kappa."""
    from sklearn.metrics import cohen_kappa_score

    wide = answers.pivot(index="image", columns="rater", values="label")
    counts = wide.notna().sum(axis=1)
    pairs = []
    for first, second in itertools.combinations(sorted(wide.columns), 2):
        both = wide[[first, second]].dropna()
        if both.empty:
            continue
        a, b = both[first].tolist(), both[second].tolist()
        kappa = None
        if len(set(a) | set(b)) > 1:
            value = float(cohen_kappa_score(a, b, labels=list(labels)))
            kappa = None if math.isnan(value) else round(value, 4)
        pairs.append(
            {
                "raters": [first, second],
                "items": len(both),
                "agreement": round(sum(x == y for x, y in zip(a, b, strict=True)) / len(a), 4),
                "kappa": kappa,
            }
        )
    kappas = [p["kappa"] for p in pairs if p["kappa"] is not None]
    return {
        "raters": int(wide.shape[1]),
        "images": int(len(wide)),
        "images_two_or_more_raters": int((counts >= 2).sum()),
        "pairs": pairs,
        "mean_kappa": round(sum(kappas) / len(kappas), 4) if kappas else None,
        "note": f"Cohen's kappa (sklearn cohen_kappa_score, labels {', '.join(labels)}) per rater "
        "pair over the images both labelled; null where only one label occurs",
    }
