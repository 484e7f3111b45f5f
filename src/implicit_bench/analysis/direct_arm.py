"""IMPLICIT-Bench App. C.1: the contrast rate of the direct arm beside the unit-based arm's.

"When we rendered both sets, the requested contrast appeared equally often (20.3% and 20.1%
of unit-seed pairs)." The contrast is the selection criterion (Section 3.3): per (unit, seed)
and rubric judge, dx = |s_n - s_a| - |s_n - s_s| from the 0-5 scores of that seed's neutral,
stereotype and anti-stereotype images, the unit-based arm from the variants ``neutral``,
``stereotype``, ``anti_stereotype`` and the direct arm from ``direct_neutral``,
``direct_stereotype``, ``direct_anti_stereotype``. Per configuration with direct rubric scores,
on the units that have a complete seed in both arms:

- ``pair_rate``: share of complete unit-seed pairs with dx > 0 (the paper's figure), per judge
  and arm, with the direct - ours difference; cluster bootstrap over units (a unit's seeds
  travel together; both arms on the same resamples);
- ``unit_rate``: share of units whose mean dx over their complete seeds is > 0 (the selection
  rule per judge), and under at least one judge (``union``, the rule of Section 3.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.analysis.views import wide
from implicit_bench.protocol.schema import DIRECT_VARIANTS, VARIANTS

ARMS: dict[str, tuple[str, ...]] = {"ours": VARIANTS, "direct": DIRECT_VARIANTS}


def arm_dx(rubric: pd.DataFrame, variants: Sequence[str]) -> pd.DataFrame:
    """dx per complete (unit_id, seed) from rubric rows (columns unit_id, seed, variant, score)
    of one configuration and judge; ``variants``: the arm's neutral, stereotype, anti."""
    n, s, a = variants
    scores = wide(rubric, "score", variants).dropna()
    dx = (scores[n] - scores[a]).abs() - (scores[n] - scores[s]).abs()
    return dx.rename("dx").reset_index()


def _per_unit(dx: pd.DataFrame, unit_ids: Sequence[str]) -> pd.DataFrame:
    g = dx.assign(pos=dx["dx"] > 0).groupby("unit_id")
    out = pd.DataFrame({"pos": g["pos"].sum(), "pairs": g["pos"].size(), "mean": g["dx"].mean()})
    return out.reindex(pd.Index(list(unit_ids), name="unit_id")).fillna({"pos": 0, "pairs": 0})


def contrast_rates(
    rubric: pd.DataFrame, boot: Bootstrap, stream: str = "direct_arm"
) -> dict[str, Any]:
    """The module docstring's block for the rubric rows of one configuration (columns
    unit_id, seed, variant, judge, score; NaN score = invalid)."""
    judges = sorted(str(j) for j in rubric["judge"].unique())
    dxs = {
        (judge, arm): arm_dx(rubric[rubric["judge"] == judge], variants)
        for judge in judges
        for arm, variants in ARMS.items()
    }
    both = set.intersection(
        *[set(dxs[(j, "ours")]["unit_id"]) & set(dxs[(j, "direct")]["unit_id"]) for j in judges]
    )
    units = sorted(str(u) for u in both)
    out: dict[str, Any] = {"units": len(units), "by_judge": {}}
    if not units:
        return out
    positive_any = {arm: np.zeros(len(units), bool) for arm in ARMS}
    for judge in judges:
        block: dict[str, Any] = {}
        reps = {}
        for arm in ARMS:
            per = _per_unit(dxs[(judge, arm)], units)
            pos, pairs = per["pos"].to_numpy(float), per["pairs"].to_numpy(float)
            est, reps[arm] = boot.ratio(pos, pairs, f"{stream}/units")
            unit_pos = (per["mean"] > 0).to_numpy(bool)
            positive_any[arm] |= unit_pos
            block[arm] = {
                "pair_rate": est,
                "pairs": int(pairs.sum()),
                "pairs_positive": int(pos.sum()),
                "unit_rate": float(unit_pos.mean()),
                "mean_dx": float(per["mean"].mean()),
            }
        block["difference_pair_rate"] = boot.difference(
            (block["direct"]["pair_rate"]["value"], reps["direct"]),
            (block["ours"]["pair_rate"]["value"], reps["ours"]),
            f"{stream}/units",
            len(units),
        )
        out["by_judge"][judge] = block
    out["union_unit_rate"] = {arm: float(positive_any[arm].mean()) for arm in ARMS}
    return out


def direct_arm_block(
    judgements: pd.DataFrame, boot: Bootstrap, configs: Sequence[str] | None = None
) -> dict[str, Any] | None:
    """Per configuration with direct-arm rubric scores, ``contrast_rates``; None when no
    direct-arm image was scored (the arm is opt-in). ``judgements``: JUDGEMENTS rows with a
    numeric ``score`` (NaN where invalid), every variant."""
    rubric = judgements[judgements["task"] == "rubric"]
    has_direct = rubric["variant"].isin(DIRECT_VARIANTS)
    present = sorted(str(c) for c in rubric.loc[has_direct, "config"].unique())
    if not present:
        return None
    chosen = present if configs is None else [c for c in configs if c in present]
    return {
        "source": "IMPLICIT-Bench App. C.1 (20.3% ours vs 20.1% direct of unit-seed pairs)",
        "definition": "share of complete unit-seed pairs with dx > 0 (pair_rate) and of units "
        "with mean dx > 0 (unit_rate; union_unit_rate: under at least one judge), on the units "
        "complete in both arms",
        "configs": {
            c: contrast_rates(rubric[rubric["config"] == c], boot, f"direct_arm/{c}")
            for c in chosen
        },
    }


def _has_direct(path: str) -> bool:
    """Whether a judgements file has direct-arm rows (only its ``variant`` column read; a file
    that cannot be read so is read whole, and the reader names what is wrong)."""
    try:
        if str(path).endswith(".parquet"):
            variants = pd.read_parquet(path, columns=["variant"])["variant"].astype(str)
        else:
            variants = pd.read_csv(path, usecols=["variant"], dtype=str, keep_default_na=False)
            variants = variants["variant"].str.strip()
    except (ValueError, KeyError, OSError):
        return True
    return bool(variants.isin(DIRECT_VARIANTS).any())


def scored_rubric_rows(paths: Sequence[str]) -> pd.DataFrame:
    """The rubric rows of the judgements files (every variant), ``score`` = the number of a
    valid answer, NaN otherwise. Files without a direct-arm row are not read. A bad row is
    left out as the analysis's own load rejects it (listed in its rejected rows), not an error.
    """
    from pathlib import Path

    from implicit_bench.protocol.tables import JUDGEMENTS
    from implicit_bench.protocol.tables.judgements import value_checks

    present = [p for p in paths if Path(p).exists() and _has_direct(p)]
    if not present:
        return pd.DataFrame(columns=["unit_id", "seed", "variant", "config", "judge", "task"])
    frame, _ = JUDGEMENTS.check(
        present, on_bad_row="reject", sort=False, extra=(value_checks,), allow_empty=True
    )
    frame = frame.drop(columns="score")
    frame = frame[frame["task"] == "rubric"]
    score = pd.to_numeric(frame["value"], errors="coerce").where(frame["valid"].astype(bool))
    return frame.assign(score=score)


__all__ = ["arm_dx", "contrast_rates", "direct_arm_block", "scored_rubric_rows"]
