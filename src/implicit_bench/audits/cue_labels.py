"""IMPLICIT-Bench App. C.1's cue analysis: does a neutral text carry a cue for one side?

A labeller reads each neutral text of the scene check's arms (the original scene
``prompt_neutral``, the template ``prompt_subject``, the second scene ``prompt_scene2``: the
arm's variant's prompt column) and answers ``none``, ``stereotype`` or ``anti_stereotype`` (the
paper: a separate model, no reasoning, conditions shuffled; 37% of original scenes, 75% of
second scenes and 98% of templates carry no cue). Labellers (``diversity.scene_check.cues``):

- ``sim`` (default, SIMULATED): each text is labelled ``none`` with the arm's planted share
  ``sim_no_cue[arm]`` (the paper's shares), else ``stereotype`` with ``sim_stereotype_share``,
  else ``anti_stereotype``, from a hash of (seed, unit, arm); the labels know nothing of the
  pictures, so on the simulated world the cue analysis shows no effect by construction;
- ``columns``: the units table's ``cue_<arm>`` columns, written by the LLM labelling hook
  (variant hook ``cue_labels_llm``, ``triplets/cue_labels_llm.py``, section ``cue_labels``:
  one JSON request per text, the two sides as options A / B in an order fixed by a hash of
  (unit, arm), the arm never named, so the labeller cannot tell the conditions apart); a missing
  or invalid label leaves the text out, counted.

From the labels and the blind judge's signs (``audits.scene_check``): the share of texts per arm
with no cue (``share``); the scene-vs-template MSD and its within-unit shuffle on the units whose
original scene carries no cue (the paper: 0.167 vs 0.097); and, per cue direction of the
original scene, the mean of (scene lean - template lean) over its units (the paper: +0.13
where the scene cues the stereotype, -0.14 where it cues the anti-stereotype).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from implicit_bench._util.hashing import derive_seed
from implicit_bench.params import StrictModel

CUES = ("none", "stereotype", "anti_stereotype")


class CueParams(StrictModel):
    """``diversity.scene_check.cues``. Off unless params turn it on (the default profile does):
    with the simulated labeller an ``analyze`` of one's own judgements would otherwise carry a
    SIMULATED block and be labelled simulated."""

    enabled: bool = False
    labeller: Literal["sim", "columns"] = "sim"
    sim_no_cue: dict[str, float] = {"original_scene": 0.37, "template": 0.98, "second_scene": 0.75}
    sim_stereotype_share: float = Field(0.5, ge=0.0, le=1.0)
    seed: int = 42


def sim_cue_labels(units: pd.DataFrame, arms: Mapping[str, str], params: CueParams) -> pd.DataFrame:
    """SIMULATED labels: one column per arm whose prompt column the units table has."""
    out = pd.DataFrame(index=units["unit_id"].astype(str).to_numpy())
    for arm, variant in arms.items():
        if f"prompt_{variant}" not in units.columns or arm not in params.sim_no_cue:
            continue
        texts = units[f"prompt_{variant}"]
        labels = []
        for unit, text in zip(out.index, texts, strict=True):
            if pd.isna(text):
                labels.append(None)
                continue
            rng = np.random.default_rng(derive_seed("cue-labels", params.seed, unit, arm))
            u, v = rng.random(2)
            labels.append(
                "none"
                if u < params.sim_no_cue[arm]
                else "stereotype"
                if v < params.sim_stereotype_share
                else "anti_stereotype"
            )
        out[arm] = labels
    return out


def column_cue_labels(units: pd.DataFrame, arms: Mapping[str, str]) -> pd.DataFrame:
    """The LLM hook's labels: the units table's ``cue_<arm>`` columns."""
    out = pd.DataFrame(index=units["unit_id"].astype(str).to_numpy())
    for arm in arms:
        if f"cue_{arm}" in units.columns:
            col = units[f"cue_{arm}"].to_numpy(dtype=object)
            out[arm] = [c if c in CUES else None for c in col]
    return out


def cue_labels(units: pd.DataFrame, arms: Mapping[str, str], params: CueParams) -> pd.DataFrame:
    if params.labeller == "sim":
        return sim_cue_labels(units, arms, params)
    return column_cue_labels(units, arms)


def cue_shares(labels: pd.DataFrame) -> dict[str, Any]:
    """Per arm: texts labelled, counts per cue, the share without a cue, texts unlabelled."""
    out = {}
    for arm in labels.columns:
        col = labels[arm]
        n = int(col.notna().sum())
        counts = {c: int((col == c).sum()) for c in CUES}
        out[arm] = {
            "texts": n,
            **counts,
            "no_cue_share": counts["none"] / n if n else None,
            "unlabelled": int(col.isna().sum()),
        }
    return out


def lean_by_cue(
    scene: Mapping[str, np.ndarray], template: Mapping[str, np.ndarray], cue: Mapping[str, Any]
) -> dict[str, Any]:
    """Per cue direction of the scene text: units and mean (scene lean - template lean)."""
    out = {}
    for direction in ("stereotype", "anti_stereotype", "none"):
        diffs = [
            scene[u].mean() - template[u].mean()
            for u in scene
            if u in template and len(scene[u]) and len(template[u]) and cue.get(u) == direction
        ]
        out[direction] = {
            "units": len(diffs),
            "mean_difference": float(np.mean(diffs)) if diffs else None,
        }
    return out


__all__ = [
    "CUES",
    "CueParams",
    "column_cue_labels",
    "cue_labels",
    "cue_shares",
    "lean_by_cue",
    "sim_cue_labels",
]
