"""Truth beside every estimate: ``metrics/recovery.json`` (docs/world.md, "Recovery").

For each estimand the planted truth is computed over exactly the images the estimator used
(the same units, seeds, variants, configs and option orders, read from the judgements), as
the expected value of what the estimator measures given the planted per-image probabilities:
a finite-population truth conditional on the planned (and, for benchmark metrics, the
selected) units. ``truth`` includes the simulated judges' planted behaviour (confusion,
slot-A preference), because that is what a consistent estimator recovers; ``truth_rendered``
is the same quantity for a perfect judge (what the pictures show). Ratio estimators
(sum over units / sum over units) target the ratio of expectations; Hedges' g targets the
population standardised difference (J -> 1); CA and MGBI target the plug-in value on the
population label distributions (the estimator from 3 images per scene is biased: reported).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.numbers import finite
from implicit_bench.protocol.estimate import Estimate, read_estimate
from implicit_bench.protocol.schema import blind_order
from implicit_bench.world import measure
from implicit_bench.world.model import World
from implicit_bench.world.params import CLASSES
from implicit_bench.world.truth import variant_matrix


def entry(
    group: str,
    name: str,
    truth: float | None,
    estimate: float | None,
    ci: Sequence[float] | None,
    *,
    truth_rendered: float | None = None,
    note: str | None = None,
    n: int | None = None,
    diagnostic: bool = False,
    level: float = 0.95,
) -> dict[str, Any]:
    """One estimand: truth, the ``Estimate`` (value, interval at ``level``, n) and whether the
    interval covers the truth."""
    est = Estimate.of(estimate, ci, n, level if ci is not None else None)
    ok = truth is not None and est.ci is not None
    out: dict[str, Any] = {
        "group": group,
        "estimand": name,
        "truth": finite(truth),
        "estimate": est.to_json(),
        "covered": (
            bool(est.ci[0] - 1e-12 <= truth <= est.ci[1] + 1e-12) if ok and not diagnostic else None
        ),
    }
    if truth_rendered is not None:
        out["truth_rendered"] = finite(truth_rendered)
    if note:
        out["note"] = note
    return out


def estimate_entry(
    group: str,
    name: str,
    truth: float | None,
    block: Any,
    truth_rendered: float | None = None,
    note: str | None = None,
    diagnostic: bool = False,
) -> dict[str, Any]:
    """``entry`` for an estimate read from a metrics file (an ``Estimate`` JSON form, or null)."""
    est = read_estimate(block) or Estimate.of(None)
    return entry(
        group,
        name,
        truth,
        est.value,
        est.ci,
        truth_rendered=truth_rendered,
        note=note,
        n=est.n,
        diagnostic=diagnostic,
        level=est.level or 0.95,
    )


class RowTruth:
    """Per-image planted probabilities for judgement rows of the main image stores."""

    def __init__(self, world: World, config_generators: dict[str, str]):
        self.world = world
        self.gens = config_generators
        self.by_gen = {
            g: world.rows(g)
            for g in set(config_generators.values())
            if g in set(world.truth["generator"])
        }

    def probs(self, rows: pd.DataFrame) -> np.ndarray:
        """(n, 3) P(shows s, a, neither) for rows with config, unit_id, variant."""
        out = np.full((len(rows), 3), np.nan)
        for (config, variant), idx in rows.groupby(["config", "variant"]).groups.items():
            gen = self.gens.get(str(config))
            if gen not in self.by_gen:
                continue
            table = self.by_gen[gen].reindex(rows.loc[idx, "unit_id"].astype(str))
            pos = rows.index.get_indexer(idx)
            out[pos] = variant_matrix(table, str(variant))
        return out

    def judge(self, name_or_model: str):
        return self.world.params.judges[name_or_model]


def primary_rows(judgements: pd.DataFrame, judge: str, task: str = "blind") -> pd.DataFrame:
    """The judge's rows of ``task``; blind rows under each image's hash order only."""
    rows = judgements[(judgements["judge"] == judge) & (judgements["task"] == task)]
    if task == "blind":
        keep = [
            o == blind_order(u, int(s), v)
            for u, s, v, o in zip(
                rows["unit_id"], rows["seed"], rows["variant"], rows["order"], strict=True
            )
        ]
        rows = rows[np.asarray(keep, dtype=bool)]
    return rows.reset_index(drop=True)


def blind_truths(rt: RowTruth, rows: pd.DataFrame, spec) -> tuple[np.ndarray, np.ndarray]:
    """(stored-label probabilities, rendered probabilities) of blind rows."""
    probs = rt.probs(rows)
    return measure.blind_stored(probs, spec, rows["order"].to_numpy()), probs


def strength_group_truth(stored_neutral: pd.DataFrame, valid: float, n_seeds: int) -> pd.DataFrame:
    """P(unit in each default-strength group) from per-(unit, seed) P(stored s); a unit is grouped
    only with ``n_seeds`` valid neutral labels (probability valid ** n_seeds). One row per unit
    with exactly ``n_seeds`` rows, sorted by unit id."""
    p = stored_neutral["p_s"].to_numpy(dtype=float)
    per_unit = (
        pd.DataFrame({"unit_id": stored_neutral["unit_id"].to_numpy(), "s": valid * p})
        .assign(n=valid * (1 - p), k=1)
        .groupby("unit_id", sort=True)
        .agg(all_s=("s", "prod"), none_s=("n", "prod"), k=("k", "sum"))
    )
    per_unit = per_unit[per_unit["k"] == n_seeds]
    grouped = valid**n_seeds
    all_s, none_s = per_unit["all_s"].to_numpy(), per_unit["none_s"].to_numpy()
    return pd.DataFrame(
        {
            "unit_id": per_unit.index.to_numpy(),
            f"0 of {n_seeds}": none_s,
            f"1-{n_seeds - 1} of {n_seeds}": grouped - all_s - none_s,
            f"{n_seeds} of {n_seeds}": all_s,
        }
    )


def hedges_truth(rt: RowTruth, rows: pd.DataFrame, judge_models: dict[str, str]) -> float | None:
    """Population standardised difference of rubric scores, stereotype vs anti images; the
    judges' scores pooled with weights of their valid-answer probability, as the estimator
    pools their valid answers (docs/world.md)."""
    moments = {}
    for variant in ("stereotype", "anti_stereotype"):
        sub = rows[rows["variant"] == variant]
        if sub.empty:
            return None
        parts = []
        for judge, g in sub.groupby("judge"):
            spec = rt.judge(judge_models[str(judge)])
            parts.append((*measure.score_moments(rt.probs(g), spec), 1 - spec.invalid))
        moments[variant] = measure.pooled_score_moments(parts)
    (ms, vs), (ma, va) = moments["stereotype"], moments["anti_stereotype"]
    sd = np.sqrt((vs + va) / 2)
    return float((ms - ma) / sd) if sd > 0 else None


def plugin_diversity(stored: pd.DataFrame, quantile: float) -> dict[str, float]:
    """CA_q, ID and MGBI on the population label distributions ({s, a}, neither left out)."""
    per_unit = stored.groupby(["bias_type", "unit_id"])[["p_s", "p_a"]].mean()
    h_unit = measure.normalised_entropy(per_unit.to_numpy())
    ca = float(np.quantile(h_unit, quantile)) if len(h_unit) else float("nan")
    per_type = stored.groupby("bias_type")[["p_s", "p_a"]].mean()
    h_type = measure.normalised_entropy(per_type.to_numpy())
    ident = float(np.exp(np.mean(np.log(h_type)))) if len(h_type) and np.all(h_type > 0) else 0.0
    return {"CA": ca, "ID": ident, "MGBI": float(np.sqrt(ident * ca))}


def classes() -> tuple[str, ...]:
    return CLASSES
