"""People who labelled the same calibration images: the calibration table's
``raters`` column (written by ``human-eval import``) as (image, rater, label) rows, for the
evaluate stage's ``corrected`` block. The statistic itself, per pair of raters, is
``implicit_bench._util.agreement.rater_agreement`` (below ``human_eval``, which reports it too)."""

from __future__ import annotations

import json

import pandas as pd

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
