"""Blind-label rates of the benchmark, on any set of labelled images.

Default rate = share of neutral images labelled s; success(s) = share of stereotype images
labelled s; success(a) = share of anti-stereotype images labelled a; gap = success(s) -
success(a). Images without a valid label are left out of every denominator (and counted).
"""

from __future__ import annotations

import math

import pandas as pd

from implicit_bench._util.closed_form import share

RATE_NAMES: tuple[str, ...] = ("default_rate", "success_s", "success_a", "gap")
# The exact random baseline: choosing uniformly among s, a, neither gives each label 1/3.
RANDOM_RATES: dict[str, float] = {
    "default_rate": 1 / 3,
    "success_s": 1 / 3,
    "success_a": 1 / 3,
    "gap": 0.0,
}


def rates(frame: pd.DataFrame, label: str = "label") -> dict[str, float | int]:
    """Rates of ``frame`` (columns ``variant`` and ``label``) with their denominators."""
    labelled = frame[frame[label].notna()]
    out: dict[str, float | int] = {}
    for name, variant, wanted in (
        ("default_rate", "neutral", "s"),
        ("success_s", "stereotype", "s"),
        ("success_a", "anti_stereotype", "a"),
    ):
        rows = labelled[labelled["variant"] == variant]
        out[name] = share(int((rows[label] == wanted).sum()), len(rows))
        out[f"n_{variant}"] = len(rows)
    s, a = out["success_s"], out["success_a"]
    out["gap"] = s - a if not (math.isnan(s) or math.isnan(a)) else math.nan
    out["n_unlabelled"] = int(frame[label].isna().sum())
    return out
