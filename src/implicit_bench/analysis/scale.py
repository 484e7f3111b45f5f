"""How each rubric judge uses the 0-5 scale (paper Table 16, Appendix B.6).

Per rubric judge of one configuration, on the analysed units and seeds, over its valid scores:

- ``mean_anti``, ``mean_neutral``, ``mean_stereotype``: mean score per prompt variant (images);
- ``share_ge4``: share of images (all three variants) scored 4 or more (5 included);
- per (unit, seed) instance with valid stereotype and anti-stereotype scores, the contrast
  Delta = s_s - s_a: ``delta_mean`` (its mean), ``d`` (mean / sample SD, ddof = 1; None when
  the SD is 0 or there are fewer than 2 instances), ``share_s_gt_a`` (Delta > 0) and
  ``share_tie`` (Delta = 0); ``n_instances``.

The paper measures Table 16 on the images all three judges scored; here each judge's own valid
scores are used (``common_instances: true`` restricts every judge to the (unit, seed) instances
where all of them scored both explicit images, and the images of those instances).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.analysis.views import WIDE_SCORE, rows, wide

SCALE_COLUMNS = [
    "judge",
    "n_images",
    "mean_anti",
    "mean_neutral",
    "mean_stereotype",
    "n_instances",
    "delta_mean",
    "d",
    "share_ge4",
    "share_s_gt_a",
    "share_tie",
]


def _mean(values: pd.Series) -> float | None:
    values = values.dropna()
    return float(values.mean()) if len(values) else None


def judge_scale_use(
    judgements: pd.DataFrame,
    config: str,
    judges: Sequence[str],
    units: Sequence[str],
    seeds: Sequence[int] | None = None,
    common_instances: bool = False,
) -> pd.DataFrame:
    """One row per judge (columns ``SCALE_COLUMNS``)."""
    scores = {
        judge: wide(rows(judgements, "rubric", config, judge, seeds, units, WIDE_SCORE), "score")
        for judge in judges
    }
    keep = None
    if common_instances and scores:
        sets = [
            set(s.dropna(subset=["stereotype", "anti_stereotype"]).index) for s in scores.values()
        ]
        keep = set.intersection(*sets)
    records: list[dict[str, Any]] = []
    for judge, frame in scores.items():
        if keep is not None:
            frame = frame[frame.index.isin(keep)]
        images = frame.stack().dropna()
        pairs = frame.dropna(subset=["stereotype", "anti_stereotype"])
        delta = (pairs["stereotype"] - pairs["anti_stereotype"]).astype(float)
        sd = float(delta.std(ddof=1)) if len(delta) > 1 else float("nan")
        records.append(
            {
                "judge": judge,
                "n_images": int(len(images)),
                "mean_anti": _mean(frame["anti_stereotype"]),
                "mean_neutral": _mean(frame["neutral"]),
                "mean_stereotype": _mean(frame["stereotype"]),
                "n_instances": int(len(delta)),
                "delta_mean": float(delta.mean()) if len(delta) else None,
                "d": float(delta.mean() / sd) if np.isfinite(sd) and sd > 0 else None,
                "share_ge4": float((images >= 4).mean()) if len(images) else None,
                "share_s_gt_a": float((delta > 0).mean()) if len(delta) else None,
                "share_tie": float((delta == 0).mean()) if len(delta) else None,
            }
        )
    return pd.DataFrame(records, columns=SCALE_COLUMNS)
