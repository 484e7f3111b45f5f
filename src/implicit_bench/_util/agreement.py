"""Agreement between people who labelled the same calibration images (issue 23): per pair of
raters, over the images both labelled, the share of equal labels and Cohen's kappa
(``sklearn.metrics.cohen_kappa_score`` over s, a, neither). Shared by ``human-eval import``
and the evaluate stage's ``corrected`` block (the calibration table's ``raters`` column)."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pandas as pd

from implicit_bench.protocol.schema import BLIND_LABELS

LONG_COLUMNS = ["image", "rater", "label"]


def long_from_raters(raters: pd.Series) -> pd.DataFrame:
    """(image, rater, label) rows from a ``raters`` column of JSON objects (rater -> label);
    the index of ``raters`` is the image id, blank cells are skipped."""
    rows = [
        (image, str(rater), str(label))
        for image, text in raters.items()
        if isinstance(text, str) and text.strip()
        for rater, label in json.loads(text).items()
    ]
    return pd.DataFrame(rows, columns=LONG_COLUMNS)


def rater_agreement(answers: pd.DataFrame) -> dict[str, Any]:
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
            value = float(cohen_kappa_score(a, b, labels=list(BLIND_LABELS)))
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
        "note": "Cohen's kappa (sklearn cohen_kappa_score, labels s, a, neither) per rater pair "
        "over the images both labelled; null where only one label occurs",
    }
