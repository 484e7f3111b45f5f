"""Covariates of the anytime-valid sequences: what is known about every unit before a run
(read from a source by ``analyze.covariates``; docs/analysis.md, "Covariate-assisted
sequences").

Per Table 4 metric (``bias_score``: mean neutral rubric score of the configuration's first
rubric judge, by name; ``alignment``: share of neutral images judged aligned) one column per
configuration of the source, the per-unit mean over the unit's valid images (NaN: none). A
source may add columns derived from one configuration's images (the release: Gemma-4's
construction scores and the debiasing runs of Qwen-Image); ``origins`` names that
configuration, and an estimand of it never uses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

METRIC_TASKS = {"bias_score": "rubric", "alignment": "alignment"}


@dataclass
class Covariates:
    """Per metric, a unit_id-indexed frame with one column per source configuration (and per
    derived column); ``origins``: derived column -> the names of the configuration whose images
    it judges (a column not named is its own configuration)."""

    source: str
    columns: dict[str, pd.DataFrame] = field(default_factory=dict)
    origins: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def for_estimand(self, metric: str, exclude: set[str]) -> pd.DataFrame | None:
        """The columns of ``metric`` less those of the configurations in ``exclude`` (the
        estimand's own: a configuration's images never predict themselves)."""
        frame = self.columns.get(metric)
        if frame is None:
            return None
        keep = [c for c in frame.columns if not {c, *self.origins.get(c, ())} & exclude]
        return frame[keep] if keep else None


def unit_means(judgements: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per metric, the per-unit mean valid neutral score of each configuration (its first
    judge by name), one column per configuration."""
    out: dict[str, pd.DataFrame] = {}
    valid = judgements["valid"].astype(bool) & (judgements["variant"] == "neutral")
    for metric, task in METRIC_TASKS.items():
        sub = judgements[valid & (judgements["task"] == task)]
        if sub.empty:
            continue
        first = sub.groupby("config")["judge"].transform(lambda s: sorted(s.astype(str))[0])
        sub = sub[sub["judge"].astype(str) == first]
        means = sub.groupby(["unit_id", "config"])["score"].mean().unstack("config")
        means.index = means.index.astype(str)
        means.columns = [str(c) for c in means.columns]
        out[metric] = means
    return out
