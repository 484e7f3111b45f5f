"""The fast path: whole simulated worlds as arrays, no pixels (the coverage benchmark, power).

It plants units with ``truth.plant`` and draws images with ``sampling.outcomes`` (the very
code the ``sim`` generator uses), then draws the simulated judges' answers with the same rules
as ``judge.SimJudge`` (``sampling.perceive_many``, ``rubric_scores``), and runs the real
estimators of ``implicit_bench.analysis`` on the resulting JUDGEMENTS-shaped table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.closed_form import safe_div, wilson_interval
from implicit_bench.analysis.blind import label_counts, rates, strength_groups
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.analysis.correction import (
    CORRECTED,
    CORRECTED_METHODS,
    CalibrationSet,
    Correction,
    corrected_method,
    corrected_rates,
    corrected_strength_groups,
)
from implicit_bench.analysis.lean import hedges_by_type
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.estimate import estimate_json
from implicit_bench.protocol.schema import BLIND_LABELS, VARIANTS, blind_order
from implicit_bench.world import measure
from implicit_bench.world.params import WorldParams
from implicit_bench.world.sampling import N_UNIFORMS, outcomes, perceive_many, rubric_scores
from implicit_bench.world.truth import plant, variant_matrix

CORE = VARIANTS
CONFIG = "sim"


def design_units(n_units: int, bias_types: list[str], tag: str) -> pd.DataFrame:
    """``n_units`` units spread round robin over ``bias_types`` (as the stratified subset)."""
    rows = []
    for i in range(n_units):
        bt = bias_types[i % len(bias_types)]
        rows.append(
            {
                "unit_id": f"{tag}-{i:05d}",
                "bias_type": bt,
                "head": "person",
                "relation": None,
                "stereotype": f"s{i}",
                "anti_stereotype": f"a{i}",
                "prompt_neutral": "a photo of a person",
            }
        )
    return pd.DataFrame(rows)


@dataclass
class SimWorld:
    """One simulated world: planted truth, the judgements table and the refusal draws."""

    truth: pd.DataFrame  # rows of the analysed generator
    units: pd.DataFrame
    judgements: pd.DataFrame
    refusals: (
        pd.DataFrame
    )  # unit_id, bias_type, refused, planted (API-like generator, neutral prompts)


@lru_cache(maxsize=8)
def _blind_orders(unit_ids: tuple[str, ...], seeds: tuple[int, ...], variant: str) -> np.ndarray:
    """``schema.blind_order`` of each image (a hash per image), memoised: the coverage
    benchmark's worlds share their unit ids, so it hashes them once."""
    out = np.array([blind_order(u, int(s), variant) for u, s in zip(unit_ids, seeds, strict=True)])
    out.setflags(write=False)
    return out


def simulate(
    params: WorldParams,
    *,
    n_units: int,
    seeds: list[int],
    generator: str,
    api_generator: str | None,
    blind_judge: str,
    rubric_judges: list[str],
    rng: np.random.Generator,
    tag: str = "w",
) -> SimWorld:
    types = sorted(params.bias_types) or ["default"]
    units = design_units(n_units, types, tag)
    planted = plant(units, params)
    truth = planted[planted["generator"] == generator].set_index("unit_id", drop=False)
    n = len(truth)
    frames = []
    for variant in CORE:
        probs = np.repeat(variant_matrix(truth, variant), len(seeds), axis=0)
        unit_ids = np.repeat(truth["unit_id"].to_numpy(), len(seeds))
        seed_col = np.tile(np.asarray(seeds), n)
        k = len(unit_ids)
        ages = np.repeat(truth[["p_young", "p_middle", "p_elderly"]].to_numpy(), len(seeds), axis=0)
        out = outcomes(
            probs,
            np.zeros(k),
            np.zeros(k),
            np.repeat(truth["p_female"].to_numpy(), len(seeds)),
            ages,
            rng.random((k, N_UNIFORMS)),
        )
        shown = out.shown
        order = _blind_orders(tuple(unit_ids.tolist()), tuple(seed_col.tolist()), variant)
        other = np.where(order == "sa", "as", "sa")
        spec = params.judges[blind_judge]
        seen = perceive_many(shown, measure.confusion(spec), rng.random(k))
        for o in (order, other):
            slot_a = rng.random(k) < spec.slot_a
            first = np.where(o == "sa", "s", "a")
            value = np.where(
                seen == 0, "s", np.where(seen == 1, "a", np.where(slot_a, first, "neither"))
            )
            valid = rng.random(k) >= spec.invalid
            frames.append(
                pd.DataFrame(
                    {
                        "task": "blind",
                        "config": CONFIG,
                        "judge": blind_judge,
                        "unit_id": unit_ids,
                        "variant": variant,
                        "seed": seed_col,
                        "order": o,
                        "value": np.where(valid, value, None),
                        "valid": valid,
                        "score": np.nan,
                        "primary": o is order,
                        "shown": shown,
                    }
                )
            )
        for judge in rubric_judges:
            js = params.judges[judge]
            seen_r = perceive_many(shown, measure.confusion(js), rng.random(k))
            score = rubric_scores(seen_r, js, rng.random(k)).astype(float)
            valid = rng.random(k) >= js.invalid
            frames.append(
                pd.DataFrame(
                    {
                        "task": "rubric",
                        "config": CONFIG,
                        "judge": judge,
                        "unit_id": unit_ids,
                        "variant": variant,
                        "seed": seed_col,
                        "order": None,
                        "value": np.where(valid, score.astype(int).astype(str), None),
                        "valid": valid,
                        "score": np.where(valid, score, np.nan),
                        "primary": True,
                        "shown": shown,
                    }
                )
            )
    refusals = pd.DataFrame()
    if api_generator:
        api = planted[planted["generator"] == api_generator]
        k = len(api) * len(seeds)
        planted_r = np.repeat(api["refusal"].to_numpy(), len(seeds))
        refusals = pd.DataFrame(
            {
                "unit_id": np.repeat(api["unit_id"].to_numpy(), len(seeds)),
                "bias_type": np.repeat(api["bias_type"].to_numpy(), len(seeds)),
                "refused": rng.random(k) < planted_r,
                "planted": planted_r,
            }
        )
    return SimWorld(truth, units, pd.concat(frames, ignore_index=True), refusals)


def calibration_set(
    world: SimWorld, params: WorldParams, judge: str, rng: np.random.Generator
) -> CalibrationSet | None:
    """The calibration set of ``world.calibration``: images drawn at random without replacement
    among the judge's valid primary blind answers, ``images / 3`` per core variant, each read by
    the simulated human rater from what it shows (``rater_error``); None when ``images`` is 0."""
    n = params.calibration.images
    if n <= 0:
        return None
    j = world.judgements
    pool = j[(j["task"] == "blind") & j["primary"] & j["valid"] & (j["judge"] == judge)]
    rater = np.asarray(params.calibration.rater_confusion())
    ref, jud, stratum = [], [], []
    for i, variant in enumerate(CORE):
        rows = pool[pool["variant"] == variant]
        m = min(len(rows), n // len(CORE) + (1 if i < n % len(CORE) else 0))
        take = rows.iloc[np.sort(rng.choice(len(rows), size=m, replace=False))]
        ref.append(perceive_many(take["shown"].to_numpy(), rater, rng.random(m)))
        jud.append(
            pd.Categorical(take["value"], categories=list(BLIND_LABELS)).codes.astype(np.int64)
        )
        stratum.append(np.full(m, variant))
    return CalibrationSet(np.concatenate(ref), np.concatenate(jud), np.concatenate(stratum))


def truths(
    world: SimWorld, params: WorldParams, blind_judge: str, rubric_judges: list[str], n_seeds: int
) -> dict[str, float]:
    """The expected value of every estimand's target over this world's units (finite population)."""
    spec = params.judges[blind_judge]
    out: dict[str, float] = {}
    primary = world.judgements[(world.judgements["task"] == "blind") & world.judgements["primary"]]
    index = pd.Index(world.truth["unit_id"].to_numpy())
    by_variant = {v: variant_matrix(world.truth, v) for v in CORE}

    def probs_of(unit_ids: pd.Series, variant: str) -> np.ndarray:
        """The variant's class probabilities of each row's unit (positional, not ``.loc``)."""
        return by_variant[variant][index.get_indexer(unit_ids.to_numpy())]

    stored = {}
    for variant in CORE:
        rows = primary[primary["variant"] == variant]
        probs = probs_of(rows["unit_id"], variant)
        stored[variant] = (rows, measure.blind_stored(probs, spec, rows["order"].to_numpy()))
    out["default_rate"] = stored["neutral"][1][:, 0].mean()
    out["success_stereotype"] = stored["stereotype"][1][:, 0].mean()
    out["success_anti"] = stored["anti_stereotype"][1][:, 1].mean()
    out["gap"] = out["success_stereotype"] - out["success_anti"]
    out["a_to_s"] = stored["anti_stereotype"][1][:, 0].mean()
    rendered = {v: probs_of(stored[v][0]["unit_id"], v) for v in CORE}
    out["default_rate (rendered)"] = rendered["neutral"][:, 0].mean()
    out["success_stereotype (rendered)"] = rendered["stereotype"][:, 0].mean()
    out["success_anti (rendered)"] = rendered["anti_stereotype"][:, 1].mean()
    out["gap (rendered)"] = out["success_stereotype (rendered)"] - out["success_anti (rendered)"]
    out["a_to_s (rendered)"] = rendered["anti_stereotype"][:, 0].mean()
    rows, st = stored["neutral"]
    neutral = rows[["unit_id"]].assign(p_s=st[:, 0])
    from implicit_bench.world.recovery.truth import strength_group_truth

    member = strength_group_truth(neutral, 1 - spec.invalid, n_seeds).set_index("unit_id")
    rows_a, st_a = stored["anti_stereotype"]
    succ_a = pd.Series(st_a[:, 1], index=rows_a["unit_id"].to_numpy()).groupby(level=0).mean()
    succ_r = (
        pd.Series(rendered["anti_stereotype"][:, 1], index=rows_a["unit_id"].to_numpy())
        .groupby(level=0)
        .mean()
    )
    for name in member.columns:
        w = member[name]  # membership: the judged groups, as the estimator forms them
        out[f"success_anti [{name}]"] = float((w * succ_a.reindex(w.index)).sum() / w.sum())
        out[f"success_anti [{name}] (rendered)"] = float(
            (w * succ_r.reindex(w.index)).sum() / w.sum()
        )
    for bt, g in world.truth.groupby("bias_type"):
        moments = {}
        for variant in ("stereotype", "anti_stereotype"):
            parts = [
                (
                    *measure.score_moments(variant_matrix(g, variant), params.judges[j]),
                    1 - params.judges[j].invalid,
                )
                for j in rubric_judges
            ]
            moments[variant] = measure.pooled_score_moments(parts)
        (ms, vs), (ma, va) = moments["stereotype"], moments["anti_stereotype"]
        out[f"hedges_g [{bt}]"] = float((ms - ma) / np.sqrt((vs + va) / 2))
    allrows = world.judgements[world.judgements["task"] == "blind"]
    probs = np.concatenate(
        [probs_of(r["unit_id"], v) for v, r in allrows.groupby("variant", sort=False)]
    )
    orders = np.concatenate(
        [r["order"].to_numpy() for _, r in allrows.groupby("variant", sort=False)]
    )
    p_a = measure.slot_a(probs, spec, orders)
    p_c = measure.perceived(probs, spec)[:, 2] * (1 - spec.slot_a)
    out["slot_a_share"] = float(p_a.sum() / (1 - p_c).sum())
    once = allrows[allrows["order"] == "sa"]
    probs1 = np.concatenate(
        [probs_of(r["unit_id"], v) for v, r in once.groupby("variant", sort=False)]
    )
    out["flip_rate"] = float(measure.flip(probs1, spec).mean())
    if not world.refusals.empty:
        out["refusal_rate"] = float(world.refusals["planted"].mean())
    return out


METHODS = ("percentile", "bca", "studentized", "basic")


def estimates(
    world: SimWorld,
    blind_judge: str,
    rubric_judges: list[str],
    n_seeds: int,
    boot: Bootstrap,
    calibration: CalibrationSet | None = None,
    compare: bool = True,
) -> dict[str, Any]:
    """Every estimand with its interval, from the real estimator code; with a calibration set,
    the corrected rates beside them (``<name> (corrected)``; docs/correction.md). ``compare``:
    also the intervals of the other methods from the same resamples (``<name> (<method>)`` for
    Hedges' g: percentile, BCa, studentized, basic; ``<name> (corrected, <method>)`` for
    corrected rates: percentile, BCa, basic)."""
    j = world.judgements
    unit_ids = world.units["unit_id"].tolist()
    primary = j[j["primary"]]
    counts = label_counts(primary, CONFIG, blind_judge, unit_ids)
    pos = np.arange(len(unit_ids))
    r = rates(counts, pos, boot, "fast")
    out = {k: r[k] for k in metric_schema.tabled()}
    groups = strength_groups(counts, counts, n_seeds, boot, "fast/strength")["groups"]
    for name, block in groups.items():
        out[f"success_anti [{name}]"] = block["success_anti"]
    if calibration is not None:
        corr = Correction(calibration, boot, "fast/calibration")
        extra = CORRECTED_METHODS if compare else ()

        def add(name: str, block: dict[str, Any]) -> None:
            out[f"{name} (corrected)"] = block[name.split(" [")[0]]
            chosen = corrected_method(boot, name.split(" [")[0])
            for m, by in block.get("by_method", {}).items():
                if m != chosen:
                    out[f"{name} (corrected, {m})"] = by[name.split(" [")[0]]

        fixed = corrected_rates(counts, pos, boot, "fast", corr, extra)
        for name in CORRECTED:
            add(name, fixed)
        for name, block in corrected_strength_groups(
            counts, counts, n_seeds, boot, "fast/strength", corr, extra
        ).items():
            add(f"success_anti [{name}]", block)
    chosen_g = boot.method.get("hedges_g", "percentile")
    extra_g = tuple(m for m in METHODS if compare and m != chosen_g)
    hedges = hedges_by_type(
        primary, CONFIG, rubric_judges, world.units, None, boot, "fast/hedges", extra_g
    )
    for bt, block in hedges.items():
        out[f"hedges_g [{bt}]"] = block["g"]
        for m, est in block.get("g_by_method", {}).items():
            out[f"hedges_g [{bt}] ({m})"] = est
    blind = j[j["task"] == "blind"]
    valid = blind[blind["valid"]]
    slot = np.where(
        valid["value"] == "neither",
        "C",
        np.where((valid["value"] == "s") == (valid["order"] == "sa"), "A", "B"),
    )
    n_a, n_b = int((slot == "A").sum()), int((slot == "B").sum())
    out["slot_a_share"] = estimate_json(
        n_a / (n_a + n_b), wilson_interval(n_a, n_a + n_b, boot.level), n_a + n_b, boot.level
    )
    # the same share with a cluster bootstrap over units: both calls of an image stay together
    # (their slots are negatively correlated, so the Wilson interval over calls over-covers)
    unit_pos = pd.Index(unit_ids).get_indexer(valid["unit_id"])
    per_unit = np.column_stack(
        [np.bincount(unit_pos, weights=slot == x, minlength=len(unit_ids)) for x in "AB"]
    )
    out["slot_a_share (unit bootstrap)"] = boot.of_sums(
        per_unit, lambda t: safe_div(t[..., 0], t[..., 0] + t[..., 1]), "fast/slot_a"
    )
    sa, as_ = blind[blind["order"] == "sa"], blind[blind["order"] == "as"]
    key = ["unit_id", "variant", "seed"]
    both = sa[key + ["value"]].merge(as_[key + ["value"]], on=key, suffixes=("_sa", "_as")).dropna()
    k = int((both["value_sa"] != both["value_as"]).sum())
    out["flip_rate"] = estimate_json(
        k / len(both), wilson_interval(k, len(both), boot.level), len(both), boot.level
    )
    if not world.refusals.empty:
        k = int(world.refusals["refused"].sum())
        n = len(world.refusals)
        out["refusal_rate"] = estimate_json(k / n, wilson_interval(k, n, boot.level), n, boot.level)
    return out
