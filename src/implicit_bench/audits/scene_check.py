"""IMPLICIT-Bench App. C.1, the scene check: does a subject-only template tell how the same
subject is drawn in a scene?

Arms (``scene_check.arms``: name -> rendered variant): the original scene (the neutral prompt),
the template ("a photo of {head}", variant ``subject``) and a second scene with the same subject
(a variant written by an LLM; absent arms are skipped). On the units whose head can be drawn
alone (a boolean units column, ``drawable_column``; the paper's writer flagged 54 of 300 heads
that cannot, such as events or first names; without the column every unit counts and the report
says so), from the blind judge's primary labels of each arm's images:

- identification rate per arm = share of labelled images read as s or a (the paper: 33.3%
  original scene, 24.5% template, 19.6% second scene);
- lean of a unit in an arm = mean over its images of +1 (s), -1 (a), 0 (neither);
- MSD(scene, template) = mean over units with both arms of (lean_scene - lean_template)^2 (the
  paper: 0.198), against the same statistic with the condition labels shuffled within units
  (the unit's images of both arms pooled and dealt back at random in the arms' sizes;
  ``shuffles`` draws, seeded; the paper: 0.095); ``p_shuffled`` = share of shuffled MSDs at
  least the observed one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field

from implicit_bench.audits.cue_labels import CueParams, cue_labels, cue_shares, lean_by_cue
from implicit_bench.params import PositiveInt, StrictModel

SIGN = {"s": 1.0, "a": -1.0, "neither": 0.0}


class SceneCheckParams(StrictModel):
    """``diversity.scene_check``."""

    enabled: bool = True
    arms: dict[str, str] = {
        "original_scene": "neutral",
        "template": "subject",
        "second_scene": "scene2",
    }
    scene_arm: str = "original_scene"  # MSD of each other scene arm vs the template arm too
    template_arm: str = "template"
    drawable_column: str = "head_drawable"
    shuffles: PositiveInt = 1000
    seed: int = 42
    # C.1's cue analysis: cue labels of each arm's neutral text (audits/cue_labels.py)
    cues: CueParams = Field(default_factory=CueParams)


def _msd(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> tuple[float, int]:
    both = [u for u in a if u in b and len(a[u]) and len(b[u])]
    if not both:
        return math.nan, 0
    return float(np.mean([(a[u].mean() - b[u].mean()) ** 2 for u in both])), len(both)


def scene_vs_template(
    scene: Mapping[str, np.ndarray],
    template: Mapping[str, np.ndarray],
    shuffles: int,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Observed and within-unit shuffled MSD of lean (``*``: unit -> signs of its images)."""
    observed, n = _msd(scene, template)
    units = [u for u in scene if u in template and len(scene[u]) and len(template[u])]
    shuffled = np.full(shuffles, np.nan)
    if units:
        total = np.zeros(shuffles)
        sizes: dict[tuple[int, int], list[str]] = {}
        for u in units:  # units of equal arm sizes are shuffled together (one array each)
            sizes.setdefault((len(scene[u]), len(template[u])), []).append(u)
        for (k, m), group in sorted(sizes.items()):
            pooled = np.stack([np.concatenate([scene[u], template[u]]) for u in group])
            order = rng.random((shuffles, len(group), k + m)).argsort(axis=2)
            dealt = np.take_along_axis(np.broadcast_to(pooled, order.shape), order, axis=2)
            total += ((dealt[..., :k].mean(axis=2) - dealt[..., k:].mean(axis=2)) ** 2).sum(1)
        shuffled = total / len(units)
    return {
        "units": n,
        "msd": observed,
        "msd_shuffled": float(np.mean(shuffled)) if units else math.nan,
        "p_shuffled": float(np.mean(shuffled >= observed - 1e-12)) if units else math.nan,
        "shuffles": int(shuffles),
    }


def scene_check(
    primary: pd.DataFrame, units: pd.DataFrame, params: SceneCheckParams
) -> dict[str, Any]:
    """Per judge and config (``primary``: the blind judge's primary labels, ``label`` s / a /
    neither / None): identification rate per arm and the MSD of scene vs template lean."""
    units = units.assign(unit_id=units["unit_id"].astype(str))
    if params.drawable_column in units.columns:
        flag = units[params.drawable_column].astype("boolean").fillna(False).astype(bool)
        drawable = set(units.loc[flag, "unit_id"])
        note = f"units with {params.drawable_column} true"
    else:
        drawable = set(units["unit_id"])
        note = f"every unit (no {params.drawable_column} column in the units table)"
    variants = {v: arm for arm, v in params.arms.items()}
    frame = primary[
        primary["variant"].isin(variants)
        & primary["unit_id"].astype(str).isin(drawable)
        & primary["label"].isin(list(SIGN))
    ].assign(unit_id=lambda f: f["unit_id"].astype(str))
    out: dict[str, Any] = {
        "units": note,
        "units_not_drawable": int(len(units) - len(drawable)),
        "arms": dict(params.arms),
        "by_judge": {},
    }
    labels = None
    if params.cues.enabled:
        labels = cue_labels(units[units["unit_id"].isin(drawable)], params.arms, params.cues)
        out["cues"] = {
            "labeller": params.cues.labeller,
            "simulated": params.cues.labeller == "sim",
            "share": cue_shares(labels),
        }
    rng = np.random.default_rng(params.seed)
    for (judge, config), g in frame.groupby(["judge", "config"], sort=True):
        signs: dict[str, dict[str, np.ndarray]] = {}
        rates: dict[str, Any] = {}
        for arm, variant in params.arms.items():
            rows = g[g["variant"] == variant]
            if rows.empty:
                continue
            s = rows["label"].map(SIGN).to_numpy(float)
            rates[arm] = {"images": int(len(s)), "identification_rate": float((s != 0).mean())}
            signs[arm] = {
                str(u): x["label"].map(SIGN).to_numpy(float) for u, x in rows.groupby("unit_id")
            }
        msd: dict[str, Any] = {}
        template = signs.get(params.template_arm)
        if template is not None:
            for arm in params.arms:
                if arm != params.template_arm and arm in signs:
                    msd[f"{arm}_vs_{params.template_arm}"] = scene_vs_template(
                        signs[arm], template, params.shuffles, rng
                    )
        entry = {
            "identification": rates,
            "lean_msd": msd,
            "missing_arms": [a for a in params.arms if a not in signs],
        }
        scene = signs.get(params.scene_arm)
        if labels is not None and params.scene_arm in labels and scene and template:
            cue = labels[params.scene_arm].to_dict()
            no_cue = {u: v for u, v in scene.items() if cue.get(u) == "none"}
            entry["cues"] = {
                "no_cue_msd": scene_vs_template(no_cue, template, params.shuffles, rng),
                "lean_by_cue": lean_by_cue(scene, template, cue),
            }
        out["by_judge"].setdefault(str(judge), {})[str(config)] = entry
    return out


def expected_scene_check(
    frame: pd.DataFrame, arms: Mapping[str, str], template_arm: str
) -> dict[str, Any]:
    """The planted truth of ``scene_check`` (recovery): ``frame`` has one row per judged image
    with unit_id, variant, p_s, p_a (P(stored label | valid)). Identification rate per arm =
    mean of p_s + p_a; for a scene arm, E[(L_scene - L_template)^2] per unit = (E L_scene -
    E L_template)^2 + Var L_scene + Var L_template with L the mean of per-image signs (mean
    p_s - p_a, variance p_s + p_a - (p_s - p_a)^2), averaged over units with both arms."""
    f = frame.assign(mu=frame["p_s"] - frame["p_a"])
    f = f.assign(var=f["p_s"] + f["p_a"] - f["mu"] ** 2, unit_id=f["unit_id"].astype(str))
    ident: dict[str, float] = {}
    moments: dict[str, pd.DataFrame] = {}
    for arm, variant in arms.items():
        rows = f[f["variant"] == variant]
        if rows.empty:
            continue
        ident[arm] = float((rows["p_s"] + rows["p_a"]).mean())
        g = rows.groupby("unit_id")
        moments[arm] = pd.DataFrame({"mean": g["mu"].mean(), "var": g["var"].sum() / g.size() ** 2})
    msd: dict[str, float] = {}
    if template_arm in moments:
        t = moments[template_arm]
        for arm, m in moments.items():
            if arm == template_arm:
                continue
            both = m.add_suffix("_s").join(t.add_suffix("_t"), how="inner")
            if len(both):
                value = (both["mean_s"] - both["mean_t"]) ** 2 + both["var_s"] + both["var_t"]
                msd[f"{arm}_vs_{template_arm}"] = float(value.mean())
    return {"identification": ident, "lean_msd": msd}
