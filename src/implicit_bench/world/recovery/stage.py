"""Entry of the ``recovery`` stage: ``metrics/recovery.json``, every headline estimate beside its
planted truth (docs/world.md, "Recovery")."""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.closed_form import wilson_interval
from implicit_bench._util.nested import dig
from implicit_bench.protocol.schema import BLIND_LABELS, VARIANTS
from implicit_bench.world import measure
from implicit_bench.world.model import load_world, sim_name
from implicit_bench.world.params import WorldParams
from implicit_bench.world.recovery.truth import (
    RowTruth,
    blind_truths,
    entry,
    estimate_entry,
    hedges_truth,
    plugin_diversity,
    primary_rows,
    strength_group_truth,
)


def benchmark_entries(
    rt: RowTruth,
    judgements: pd.DataFrame,
    bench: dict[str, Any],
    analysed: list[str],
    judge_models: dict[str, str],
    n_seeds: int,
) -> list[dict[str, Any]]:
    """Default rate, success, gap, a->s, default-strength groups, judge agreement; none when the
    primary judge is not simulated (a real judge on a simulated generator: no planted answers)."""
    config, judge = bench.get("config"), bench.get("primary_judge")
    out: list[dict[str, Any]] = []
    if config is None or judge is None or judge not in judge_models:
        return out
    spec = rt.judge(judge_models[judge])
    rows = primary_rows(judgements, judge)
    rows = rows[(rows["config"] == config) & rows["unit_id"].isin(analysed)].reset_index(drop=True)
    stored, rendered = blind_truths(rt, rows, spec)
    frame = rows[["unit_id", "variant", "seed"]].assign(
        p_s=stored[:, 0], p_a=stored[:, 1], r_s=rendered[:, 0], r_a=rendered[:, 1]
    )
    mean = frame.groupby("variant")[["p_s", "p_a", "r_s", "r_a"]].mean()

    def m(variant: str, col: str) -> float | None:
        return float(mean.at[variant, col]) if variant in mean.index else None

    sub = "benchmark (selected units, primary blind judge)"
    truths = {
        "default_rate": (m("neutral", "p_s"), m("neutral", "r_s")),
        "success_stereotype": (m("stereotype", "p_s"), m("stereotype", "r_s")),
        "success_anti": (m("anti_stereotype", "p_a"), m("anti_stereotype", "r_a")),
        "a_to_s": (m("anti_stereotype", "p_s"), m("anti_stereotype", "r_s")),
    }
    for name, (t, tr) in truths.items():
        out.append(estimate_entry(sub, name, t, bench.get(name), tr))
    ts, ta = truths["success_stereotype"], truths["success_anti"]
    gap = None if None in (ts[0], ta[0]) else ts[0] - ta[0]
    gap_r = None if None in (ts[1], ta[1]) else ts[1] - ta[1]
    out.append(estimate_entry(sub, "gap", gap, bench.get("gap"), gap_r))
    # default-strength groups: P(group) per unit, then ratio of expectations within a group
    groups = dig(bench, "by_default_strength", "groups") or {}
    neutral = frame[frame["variant"] == "neutral"]
    member = strength_group_truth(neutral, 1 - spec.invalid, n_seeds)
    per_unit = frame.groupby(["unit_id", "variant"])[["p_s", "p_a"]].mean().unstack("variant")
    for name, block in groups.items():
        if member.empty or name not in member.columns:
            continue
        w = member.set_index("unit_id")[name]
        for metric, (col, variant) in {
            "success_stereotype": ("p_s", "stereotype"),
            "success_anti": ("p_a", "anti_stereotype"),
        }.items():
            if (col, variant) not in per_unit.columns:
                continue
            vals = per_unit[(col, variant)].reindex(w.index)
            t = float((w * vals).sum() / w.sum()) if w.sum() > 0 else None
            out.append(
                estimate_entry(
                    "default-strength groups", f"{metric} [{name}]", t, block.get(metric)
                )
            )
    # agreement of the primary and second blind judges
    for agr in bench.get("agreement") or []:
        first, second = agr.get("first"), agr.get("second")
        if first not in judge_models or second not in judge_models or agr.get("config") != config:
            continue
        r1 = primary_rows(judgements, first)
        r1 = r1[
            (r1["config"] == config)
            & r1["unit_id"].isin(analysed)
            & r1["variant"].isin(["neutral", "stereotype", "anti_stereotype"])
        ].reset_index(drop=True)
        probs = rt.probs(r1)
        # the judges draw independently given what the picture shows: sum over shown classes
        agree = np.zeros(len(r1))
        for k in range(3):
            onehot = np.zeros((len(r1), 3))
            onehot[:, k] = 1
            a1 = measure.blind_stored(onehot, rt.judge(judge_models[first]), r1["order"].to_numpy())
            a2 = measure.blind_stored(
                onehot, rt.judge(judge_models[second]), r1["order"].to_numpy()
            )
            agree += probs[:, k] * (a1 * a2).sum(axis=1)
        out.append(
            estimate_entry(
                "judges",
                f"agreement {first}~{second}",
                float(agree.mean()) if len(agree) else None,
                agr.get("agreement"),
            )
        )
    return out


def evaluate_bootstrap(raw: dict[str, Any], path: str) -> Any:
    """The evaluate stage's bootstrap: the top-level block under ``evaluate.bootstrap``'s own
    keys, validated by the evaluate params model (as ``stages/evaluate.py`` builds it)."""
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.analysis.params import EvaluateParams
    from implicit_bench.params import section

    return Bootstrap.from_params(
        section(raw, "evaluate", EvaluateParams, path, inherit={"bootstrap": "bootstrap"}).bootstrap
    )


def all_units_entries(
    rt: RowTruth,
    judgements: pd.DataFrame,
    config: str,
    judge: str,
    unit_ids: list[str],
    judge_models: dict[str, str],
    boot: Any,
) -> list[dict[str, Any]]:
    """The headline rates on every planned unit (no selection), with the evaluate stage's
    estimator and cluster bootstrap (``boot``: ``evaluate_bootstrap``): recovery without
    conditioning on a data-dependent set."""
    from implicit_bench.analysis.blind import label_counts, rates

    rows = primary_rows(judgements, judge)
    rows = rows[(rows["config"] == config) & rows["unit_id"].isin(unit_ids)].reset_index(drop=True)
    if rows.empty:
        return []
    counts = label_counts(rows, config, judge, unit_ids)
    est = rates(counts, np.arange(len(unit_ids)), boot, f"recovery/{config}/{judge}/all")
    stored, rendered = blind_truths(rt, rows, rt.judge(judge_models[judge]))
    frame = rows[["variant"]].assign(
        p_s=stored[:, 0], p_a=stored[:, 1], r_s=rendered[:, 0], r_a=rendered[:, 1]
    )
    mean = frame.groupby("variant").mean()
    truth = {
        "default_rate": ("neutral", "p_s", "r_s"),
        "success_stereotype": ("stereotype", "p_s", "r_s"),
        "success_anti": ("anti_stereotype", "p_a", "r_a"),
        "a_to_s": ("anti_stereotype", "p_s", "r_s"),
    }
    out, values = [], {}
    for name, (variant, col, rcol) in truth.items():
        values[name] = (float(mean.at[variant, col]), float(mean.at[variant, rcol]))
        out.append(
            estimate_entry(
                "benchmark (all planned units, primary blind judge)",
                name,
                values[name][0],
                est[name],
                values[name][1],
            )
        )
    gap = [values["success_stereotype"][i] - values["success_anti"][i] for i in (0, 1)]
    out.append(
        estimate_entry(
            "benchmark (all planned units, primary blind judge)", "gap", gap[0], est["gap"], gap[1]
        )
    )
    return out


def audit_entries(
    rt: RowTruth, judgements: pd.DataFrame, audit: dict[str, Any], judge_models: dict[str, str]
) -> list[dict[str, Any]]:
    """Slot-A share and order-flip rate of every simulated blind judge (both orders, all images)."""
    out = []
    blind = judgements[(judgements["task"] == "blind") & judgements["order"].isin(["sa", "as"])]
    for judge, pb in (dig(audit, "position_bias") or {}).items():
        if judge not in judge_models:
            continue
        rows = blind[blind["judge"] == judge].reset_index(drop=True)
        spec = rt.judge(judge_models[judge])
        probs = rt.probs(rows)
        ok = ~np.isnan(probs).any(axis=1)
        q = measure.perceived(probs[ok], spec)
        p_a = measure.slot_a(probs[ok], spec, rows["order"].to_numpy()[ok])
        p_c = q[:, 2] * (1 - spec.slot_a)
        t = float(p_a.sum() / (1 - p_c).sum()) if ok.any() else None
        out.append(
            estimate_entry(
                "judges",
                f"slot-A share {judge}",
                t,
                pb.get("slot_A_share"),
                note="A among A/B answers; Wilson interval over them",
            )
        )
        if pb.get("slot_A_share_unit_bootstrap") is not None:
            out.append(
                estimate_entry(
                    "judges",
                    f"slot-A share {judge} (unit bootstrap)",
                    t,
                    pb["slot_A_share_unit_bootstrap"],
                    note="A among A/B answers; cluster bootstrap over units (both orders of "
                    "an image together)",
                )
            )
        flips = dig(audit, "order_flips", judge) or {}
        one = rows[rows["order"] == "sa"].reset_index(drop=True)
        probs1 = rt.probs(one)
        ok1 = ~np.isnan(probs1).any(axis=1)
        tf = float(measure.flip(probs1[ok1], spec).mean()) if ok1.any() else None
        n, k = flips.get("images_both_valid") or 0, flips.get("flips") or 0
        ci = list(wilson_interval(k, n, 0.95)) if n else None
        out.append(
            entry(
                "judges",
                f"flip rate {judge}",
                tf,
                flips.get("flip_rate"),
                ci,
                note="images with both orders valid; Wilson interval over images",
                n=n,
            )
        )
    return out


def refusal_entries(
    world, index: pd.DataFrame | None, config_generators: dict[str, str]
) -> list[dict[str, Any]]:
    out = []
    if index is None or index.empty:
        return out
    for config, rows in index.groupby("config"):
        gen = config_generators.get(str(config))
        if gen is None or gen not in set(world.truth["generator"]):
            continue
        truth = world.rows(gen)
        if float(truth["refusal"].max()) == 0:
            continue
        planted = truth["refusal"].reindex(rows["unit_id"].astype(str)).to_numpy()
        refused = rows["status"].eq("refused")
        low, high = wilson_interval(int(refused.sum()), len(rows), 0.95)
        out.append(
            entry(
                "refusals",
                f"refusal rate {config}",
                float(np.nanmean(planted)),
                float(refused.mean()),
                [low, high],
                note="Wilson interval over requests",
                n=len(rows),
            )
        )
        for bt, g in rows.assign(planted=planted, refused=refused).groupby("bias_type"):
            low, high = wilson_interval(int(g["refused"].sum()), len(g), 0.95)
            out.append(
                entry(
                    "refusals",
                    f"refusal rate {config} [{bt}]",
                    float(g["planted"].mean()),
                    float(g["refused"].mean()),
                    [low, high],
                    n=len(g),
                )
            )
    return out


def negation_entries(
    rt: RowTruth,
    judgements: pd.DataFrame,
    negation: dict[str, Any],
    judge: str,
    judge_models: dict[str, str],
) -> list[dict[str, Any]]:
    out = []
    block = dig(negation, "by_judge", judge, "overall", "all") or {}
    rows = primary_rows(judgements, judge)
    for variant in ("negated_0_1", "negated_1_1"):
        b = block.get(variant)
        if not b:
            continue
        sub = rows[rows["variant"] == variant].reset_index(drop=True)
        stored, rendered = blind_truths(rt, sub, rt.judge(judge_models[judge]))
        ok = ~np.isnan(stored).any(axis=1)
        key = (
            "forbidden_rendered_of_images"
            if "forbidden_rendered_of_images" in b
            else "forbidden_rendered"
        )
        out.append(
            estimate_entry(
                "negation",
                f"forbidden rendered (share of images) {variant}",
                float(stored[ok, 0].mean()),
                b.get(key),
                float(rendered[ok, 0].mean()),
                note="images read as the forbidden s among labelled negated images",
            )
        )
    return out


def diversity_entries(
    rt: RowTruth,
    judgements: pd.DataFrame,
    diversity: dict[str, Any],
    judge: str,
    config: str,
    units: pd.DataFrame,
    judge_models: dict[str, str],
) -> list[dict[str, Any]]:
    block = dig(diversity, "blind_labels", judge, config) or {}
    intervals = block.get("intervals") or {}
    if not intervals:
        return []
    rows = primary_rows(judgements, judge)
    rows = rows[(rows["config"] == config) & (rows["variant"] == "neutral")].reset_index(drop=True)
    stored, _ = blind_truths(rt, rows, rt.judge(judge_models[judge]))
    frame = (
        rows[["unit_id"]]
        .assign(p_s=stored[:, 0], p_a=stored[:, 1])
        .merge(units[["unit_id", "bias_type"]], on="unit_id")
    )
    truth = plugin_diversity(frame, 0.10)
    note = (
        "plug-in truth on population label distributions; the estimate's per-scene entropy of "
        "3 images is biased, so coverage is not expected (docs/world.md)"
    )
    if block.get("not_estimable"):
        note = (
            "not estimable from the images per scene of this run ("
            + next(iter(block["not_estimable"].values()))
            + ")"
        )
    return [
        estimate_entry("diversity", name, truth[key], intervals.get(name), note=note)
        for name, key in (("CA_0.10", "CA"), ("MGBI", "MGBI"))
    ]


def scene_check_entries(
    rt: RowTruth,
    judgements: pd.DataFrame,
    diversity: dict[str, Any],
    judge: str,
    config: str,
    judge_models: dict[str, str],
) -> list[dict[str, Any]]:
    """App. C.1's scene check beside the planted truth of the same images (diagnostic: no
    interval). Empty unless a template arm was rendered and labelled."""
    from implicit_bench.audits.scene_check import expected_scene_check

    check = (diversity or {}).get("scene_check") or {}
    block = dig(check, "by_judge", judge, config) or {}
    planted = set(getattr(getattr(rt, "world", None), "truth", pd.DataFrame()).columns)
    # arms whose variant the world plants (a second scene written by an LLM is not planted)
    arms = {a: v for a, v in (dig(check, "arms") or {}).items() if f"{v}_s" in planted}
    if not block.get("lean_msd") or not arms:
        return []
    rows = primary_rows(judgements, judge)
    rows = rows[(rows["config"] == config) & rows["variant"].isin(list(arms.values()))]
    rows = rows[rows["valid"].fillna(False).astype(bool)].reset_index(drop=True)
    stored, _ = blind_truths(rt, rows, rt.judge(judge_models[judge]))
    frame = rows[["unit_id", "variant"]].assign(p_s=stored[:, 0], p_a=stored[:, 1])
    template = next((a for a in arms if a == "template"), None) or list(arms)[-1]
    truth = expected_scene_check(frame, arms, template)
    note = "truth: expected value over the labelled images of each arm (docs/world.md)"
    out = [
        entry(
            "scene check",
            f"identification rate, {arm} (C.1)",
            truth["identification"].get(arm),
            (dig(block, "identification") or {}).get(arm, {}).get("identification_rate"),
            None,
            diagnostic=True,
            note=note,
        )
        for arm in arms
        if arm in truth["identification"]
    ]
    for name, got in (dig(block, "lean_msd") or {}).items():
        out.append(
            entry(
                "scene check",
                f"MSD of lean, {name} (C.1)",
                truth["lean_msd"].get(name),
                got.get("msd"),
                None,
                n=got.get("units"),
                diagnostic=True,
                note=note,
            )
        )
    return out


def selection_entries(
    world, selected: list[str], candidates: list[str], generator: str
) -> list[dict[str, Any]]:
    truth = world.rows(generator)
    leaning = set(truth.index[truth["truly_leans"]]) & set(candidates)
    sel = set(selected) & set(candidates)
    hits = len(sel & leaning)
    out = []
    for name, k, n in (
        ("selection precision", hits, len(sel)),
        ("selection recall", hits, len(leaning)),
    ):
        ci = list(wilson_interval(k, n, 0.95)) if n else None
        out.append(
            entry(
                "selection",
                name,
                None,
                k / n if n else None,
                ci,
                n=n,
                diagnostic=True,
                note="against units that truly lean to the stereotype (docs/world.md); a property "
                "of the selection rule, no planted value to cover",
            )
        )
    return out


def contrast_truth(probs: dict[str, np.ndarray], spec) -> np.ndarray:
    """P(dx > 0) per unit-seed pair under a simulated rubric judge: ``probs`` maps "n", "s",
    "a" to (m, 3) probabilities of what each of the pair's three images shows; the images'
    scores are independent given them (measure.scores), dx = |s_n - s_a| - |s_n - s_s|."""
    k = np.arange(6)
    n, s, a = np.meshgrid(k, k, k, indexing="ij")
    positive = (np.abs(n - a) - np.abs(n - s) > 0).astype(float)
    pmf = {v: measure.scores(p, spec) for v, p in probs.items()}
    return np.einsum("mi,mj,mk,ijk->m", pmf["n"], pmf["s"], pmf["a"], positive)


def direct_arm_entries(
    rt: RowTruth, judgements: pd.DataFrame, selection: dict[str, Any], judges: dict[str, str]
) -> list[dict[str, Any]]:
    """App. C.1: each arm's share of unit-seed pairs with dx > 0 (select's ``direct_arm``) and
    the direct - ours difference beside their planted truth: the mean of P(dx > 0) over exactly
    the complete pairs the estimate used (``contrast_truth``)."""
    from implicit_bench.analysis.direct_arm import ARMS, arm_dx

    block = (selection or {}).get("direct_arm") or {}
    out: list[dict[str, Any]] = []
    rubric = judgements[judgements["task"] == "rubric"]
    score = pd.to_numeric(rubric["value"], errors="coerce").where(rubric["valid"].astype(bool))
    rubric = rubric.assign(score=score)
    for config, got in sorted((dig(block, "configs") or {}).items()):
        if config not in rt.gens or rt.gens[config] not in rt.by_gen:
            continue
        rows = rubric[rubric["config"] == config]
        dxs = {
            (j, arm): arm_dx(rows[rows["judge"] == j], variants)
            for j in got.get("by_judge") or {}
            for arm, variants in ARMS.items()
        }
        if not dxs:
            continue
        common = set.intersection(*[set(d["unit_id"]) for d in dxs.values()])
        for judge, by_arm in sorted((dig(got, "by_judge") or {}).items()):
            if judge not in judges:
                continue
            spec = rt.judge(judges[judge])
            truth = {}
            for arm, variants in ARMS.items():
                pairs = dxs[(judge, arm)]
                pairs = pairs[pairs["unit_id"].isin(common)]
                probs = {
                    key: rt.probs(pairs.assign(config=config, variant=v).reset_index(drop=True))
                    for key, v in zip("nsa", variants, strict=True)
                }
                truth[arm] = float(contrast_truth(probs, spec).mean()) if len(pairs) else None
                out.append(
                    estimate_entry(
                        "direct arm",
                        f"contrast rate, {arm} arm, {config} ({judge}, C.1)",
                        truth[arm],
                        dig(by_arm, arm, "pair_rate"),
                        note="share of unit-seed pairs with dx > 0; truth: mean P(dx > 0) over "
                        "the same pairs (docs/world.md)",
                    )
                )
            diff = (
                truth["direct"] - truth["ours"]
                if None not in (truth["direct"], truth["ours"])
                else None
            )
            out.append(
                estimate_entry(
                    "direct arm",
                    f"contrast rate, direct - ours, {config} ({judge}, C.1)",
                    diff,
                    by_arm.get("difference_pair_rate"),
                )
            )
    return out


def other_generator_entries(
    world,
    selected: list[str],
    candidates: list[str],
    gens: dict[str, str],
    other_generators: dict[str, Any],
) -> list[dict[str, Any]]:
    """App. C.3 on the simulated world: for each configuration not used for selection, the
    share of kept and of rejected units that lean to the stereotype there (select's
    ``other_generators``, rubric mean dx > 0) beside the share that truly leans on that
    generator's planted probabilities. Diagnostic: a rubric lean is not the planted lean."""
    out: list[dict[str, Any]] = []
    cands, kept = set(candidates), set(selected) & set(candidates)
    for config, by_judge in sorted((other_generators or {}).items()):
        if config not in gens:
            continue
        truth = world.rows(gens[config])
        leaning = set(truth.index[truth["truly_leans"]]) & cands
        for group, units in (("kept", kept), ("rejected", cands - kept)):
            share = len(units & leaning) / len(units) if units else None
            for judge, entry_ in sorted(by_judge.items()):
                got = (entry_ or {}).get(group) or {}
                out.append(
                    entry(
                        "selection",
                        f"{group} units leaning on {config} ({judge}, C.3)",
                        share,
                        got.get("share_positive"),
                        None,
                        n=got.get("units"),
                        diagnostic=True,
                        note="share with rubric mean dx > 0 on a generator not used for "
                        "selection; truth: the share that truly leans there (docs/world.md)",
                    )
                )
    return out


def _read_shares(world_row: Any, error: float) -> dict[str, np.ndarray]:
    """The planted gender / age-group shares a face judge with misreading rate ``error`` reads
    (gender flipped; an age group read as one of the other two, equally): sim faces."""
    f = float(world_row["p_female"])
    ages = np.array([world_row["p_young"], world_row["p_middle"], world_row["p_elderly"]], float)
    return {
        "gender": np.array([f * (1 - error) + (1 - f) * error, (1 - f) * (1 - error) + f * error]),
        "age": ages * (1 - error) + (1 - ages) * error / 2,
    }


def _study_rows(world, generator: str, units: list[str]) -> pd.DataFrame:
    """The planted rows of the study's units: SCM Eval prompts planted from their ids."""
    from implicit_bench.world.scm import is_scm_unit, plant_scm

    rows = world.rows(generator)
    scm = [u for u in units if is_scm_unit(u) and u not in rows.index]
    if scm:
        extra = plant_scm(scm, world.params)
        extra = extra[extra["generator"] == generator].set_index("unit_id", drop=False)
        rows = pd.concat([rows, extra])
    return rows


def _scm_trigger_entries(study: dict[str, Any], rows: pd.DataFrame, error: float) -> list:
    """SCM prompts (HoloFair 3.1): per trigger the share of faces read female beside the
    planted share (world.scm.female_logit) as the simulated face judge reads it."""
    by = dig(study, "scm", "by_trigger") or {}
    trig = rows["trigger"] if "trigger" in rows.columns else pd.Series(dtype=object)
    out = []
    for name, got in sorted(by.items()):
        ids = [
            u
            for u in study.get("units") or []
            if (trig.get(u) if isinstance(trig.get(u), str) else "neutral") == name
        ]
        if not ids or got.get("female_share") is None:
            continue
        truth = float(np.mean([_read_shares(rows.loc[u], error)["gender"][0] for u in ids]))
        out.append(
            entry(
                "diversity_study",
                f"female share, SCM {name} prompts (HoloFair 3.1)",
                truth,
                got["female_share"],
                None,
                n=got.get("images_with_face"),
                diagnostic=True,
                note="truth: mean planted P(female) of the trigger's prompts as read",
            )
        )
    return out


def _gen_entries(study: dict[str, Any], rows: pd.DataFrame, error: float) -> list:
    """The Gen set (HoloFair C.3.2): per attribute the share of images the face judge reads as
    the prompt asked beside the planted share (world.scm.gen_follow as the judge reads it),
    averaged over the study's Gen prompts (each drawn ``n_images`` times)."""
    from implicit_bench.world.scm import gen_request, is_gen_unit

    attributes = dig(study, "gen", "attributes") or {}
    ids = [str(u) for u in study.get("units") or [] if is_gen_unit(str(u))]
    out = []
    for attribute, index_of in (
        ("gender", lambda a: ("female", "male").index(a["gender"])),
        ("age", lambda a: ("young", "middle", "elderly").index(a["age_group"])),
    ):
        got = attributes.get(attribute)
        if not ids or not got:
            continue
        truth = float(
            np.mean(
                [_read_shares(rows.loc[u], error)[attribute][index_of(gen_request(u))] for u in ids]
            )
        )
        out.append(
            entry(
                "diversity_study",
                f"Gen set: {attribute} read as the prompt asks (HoloFair C.3.2)",
                truth,
                got.get("share_read_as_asked"),
                None,
                n=got.get("images_read"),
                diagnostic=True,
                note="truth: world.scm.gen_follow as the simulated face judge reads it",
            )
        )
    return out


def diversity_study_entries(
    world, study: dict[str, Any], gens: dict[str, str], error: float
) -> list[dict[str, Any]]:
    """HoloFair C.5 / 3.4.1 on the simulated world: the diversity study's Deviation Ratios
    (mean over scene prompts) and Fair-GRPO group reward (mean over prompts) beside the same
    quantities of the planted face shares. Diagnostic: plug-ins from 20 images are biased."""
    from implicit_bench.audits.holofair import deviation_ratio

    scores = (study or {}).get("scores") or {}
    prompts = scores.get("per_prompt") or []
    generator = gens.get(str((study or {}).get("generator")))
    if not prompts or generator is None:
        return []
    rows = _study_rows(world, generator, [str(u) for u in study.get("units") or []])
    shares = [_read_shares(rows.loc[str(p["unit_id"])], error) for p in prompts]
    attributes = [a for a in ("gender", "age") if f"DR_{a}" in prompts[0]]
    if not attributes:  # a study written before the Deviation Ratio existed
        return []
    out = _scm_trigger_entries(study, rows, error) + _gen_entries(study, rows, error)
    note = (
        "plug-in estimate from the study's images per prompt (biased away from uniform); "
        "truth: the planted face shares as the simulated face judge reads them (docs/world.md)"
    )
    for a in attributes:
        truth = float(np.mean([deviation_ratio(s[a]) for s in shares]))
        est = dig(scores, "deviation_ratio", "scenes_mean", a)
        out.append(
            entry(
                "diversity_study",
                f"Deviation Ratio {a}, mean over scene prompts (HoloFair C.5)",
                truth,
                est,
                None,
                n=len(prompts),
                diagnostic=True,
                note=note,
            )
        )
    weights = dig(scores, "fair_grpo_reward", "weights") or {}
    reward = [
        sum(
            float(weights.get(a, 1.0)) * float(np.sum(s[a] * np.log((1 / len(s[a])) / s[a])))
            for a in attributes
        )
        for s in shares
    ]
    out.append(
        entry(
            "diversity_study",
            "Fair-GRPO group reward, mean over prompts (HoloFair 3.4.1)",
            float(np.mean(reward)),
            dig(scores, "fair_grpo_reward", "mean"),
            None,
            n=len(prompts),
            diagnostic=True,
            note=note,
        )
    )
    return out


def summary(entries: list[dict[str, Any]]) -> dict[str, Any]:
    judged = [e for e in entries if e["covered"] is not None]
    return {
        "estimands": len(entries),
        "with_interval": len(judged),
        "covered": sum(e["covered"] for e in judged),
        "not_covered": [e["estimand"] for e in judged if not e["covered"]],
    }


def expected_composites(
    world_dir: str,
    params: Any,
    generators: dict[str, dict[str, Any]],
    judge_models: dict[str, str],
    alpha: float | None = None,
) -> dict[str, float | None]:
    """The planted composite S = 100 * E[Y (1 - b / 5)] of each debiasing configuration's images:
    the sim generator's shift from the rewritten or steered prompt embedding (``alpha``: each
    steering configuration's own alpha unless given), the scoring judges' planted behaviour.
    ``params``: the validated ``debias`` section (``DebiasParams``), ``generators``: the
    catalogue."""
    from implicit_bench.backends.generators import create_generator
    from implicit_bench.debias.render.stage import plan_inputs
    from implicit_bench.debias.steering import Encoding, direction, steer
    from implicit_bench.debias.units import KG_COLUMNS, subset_units
    from implicit_bench.protocol.tables import LLM_PAIRS, RETRIEVAL, REWRITES, UNITS
    from implicit_bench.world.sampling import tilt
    from implicit_bench.world.truth import variant_matrix

    gen_cfg = generators.get(params.generator) or {}
    if gen_cfg.get("backend") != "sim":
        return {}
    gen = create_generator({**gen_cfg, "world": world_dir})
    rubric = gen.world.params.judges[judge_models[params.scoring.rubric_judge]]
    align = gen.world.params.judges[judge_models[params.scoring.alignment_judge]]
    kg = UNITS.read(params.units, require=KG_COLUMNS)
    subset = subset_units(kg, params.subset)

    rewrites, pairs = REWRITES.read_if_present(), LLM_PAIRS.read_if_present()
    retrieval = RETRIEVAL.read_if_present()
    out: dict[str, float | None] = {}
    for name, spec in params.configs.items():
        frame, texts, _ = plan_inputs(name, spec, subset, kg, rewrites, pairs, retrieval)
        values = []
        for unit_id, prompt in zip(
            frame["unit_id"].astype(str), frame["prompt_neutral"], strict=True
        ):
            enc = gen.encode([prompt])
            vec = enc.embeds[0, 0].numpy()
            if spec.method == "steer":
                n = Encoding(enc.embeds[0], enc.mask[0])
                t_s, t_a = texts[unit_id]
                es, ea = gen.encode([t_s]), gen.encode([t_a])
                d = direction(
                    spec.signal or "",
                    n,
                    Encoding(es.embeds[0], es.mask[0]),
                    Encoding(ea.embeds[0], ea.mask[0]),
                )
                strength = spec.options.strength() if alpha is None else alpha
                vec = steer(n, d, strength).embeds[0].float().numpy()
            shift = gen.shift(unit_id, "neutral", vec)
            probs = tilt(variant_matrix(gen.rows.loc[[unit_id]], "neutral"), shift)
            off = min(0.95, gen.spec.off_prompt + gen.spec.off_prompt_per_shift * abs(shift))
            mean_b, _ = measure.score_moments(probs, rubric)
            values.append(float(measure.aligned(np.array([off]), align)[0] * (1 - mean_b[0] / 5)))
        out[name] = 100 * float(np.mean(values)) if values else None
    return out


def debias_entries(
    world_dir: str,
    raw: dict[str, Any],
    debias_metrics: dict[str, Any],
    judge_models: dict[str, str],
) -> list[dict[str, Any]]:
    """dS per debiasing configuration: planted S of the configuration minus the unmodified one's."""
    from implicit_bench.debias.params import DebiasParams
    from implicit_bench.params import catalogue, section

    if not debias_metrics.get("configs"):
        return []
    params = section(raw, "debias", DebiasParams).checked()  # validated once
    unmodified = params.scoring.unmodified
    planted = expected_composites(world_dir, params, catalogue(raw, "generators"), judge_models)
    base = planted.get(unmodified)
    out = []
    for name, block in debias_metrics["configs"].items():
        if name == unmodified or name not in planted:
            continue
        s_c = planted[name]
        t = None if s_c is None or base is None else s_c - base
        out.append(
            estimate_entry(
                "debiasing", f"dS {name}", t, block.get("dS"), note="paired bootstrap over units"
            )
        )
    return out


CORRECTED_GROUPS = {
    "all": "benchmark corrected for judge error (all planned units, primary blind judge)",
    "selected": "benchmark corrected for judge error (selected units, primary blind judge)",
}


def calibration_entries(
    rt: RowTruth,
    judgements: pd.DataFrame,
    *,
    config: str,
    judge: str,
    unit_ids: list[str],
    params: WorldParams,
    n_boot: int,
    seed: int,
    images_dir: str,
    selected: list[str] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Judge-error correction on every planned unit (docs/correction.md): a calibration set of
    ``world.calibration.images`` of the primary judge's validly answered images, drawn at random
    per core variant, answered by the simulated human rater **from the pixels** (the picture's
    code band, read as the simulated judges read it; ``rater_error``); the corrected rates beside
    the rendered truth (what the pictures show). Returns the entries and the calibration block."""
    from implicit_bench._util.hashing import derive_seed
    from implicit_bench.analysis.blind import label_counts
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.analysis.correction import (
        CORRECTED,
        CalibrationSet,
        Correction,
        corrected_rates,
    )
    from implicit_bench.render.images import ImageStore
    from implicit_bench.world.picture import band_text, read_bytes
    from implicit_bench.world.sampling import perceive_many

    n = params.calibration.images
    rows = primary_rows(judgements, judge)
    rows = rows[(rows["config"] == config) & rows["unit_id"].isin(unit_ids)].reset_index(drop=True)
    if n <= 0 or rows.empty or config not in rt.gens:
        return [], None
    truth = rt.by_gen[rt.gens[config]]
    store = ImageStore(Path(images_dir) / config)
    rng = np.random.default_rng(derive_seed("calibration", params.seed, config, judge))
    rater = np.asarray(params.calibration.rater_confusion())
    core = VARIANTS
    pool = rows[rows["valid"].astype(bool) & rows["value"].notna()]
    ref, jud, stratum = [], [], []
    for i, variant in enumerate(core):
        sub = pool[pool["variant"] == variant]
        m = min(len(sub), n // len(core) + (1 if i < n % len(core) else 0))
        take = sub.iloc[np.sort(rng.choice(len(sub), size=m, replace=False))]
        for r in take.itertuples():
            shown = read_bytes(store.read_bytes(str(r.image_sha256)))
            if (
                shown is None
            ):  # an unreadable picture: no reference label (the judge's answer was invalid too)
                continue
            t = truth.loc[str(r.unit_id)]
            cls = (
                0
                if shown.attribute and shown.attribute == band_text(str(t["shown_s"]))
                else 1
                if shown.attribute and shown.attribute == band_text(str(t["shown_a"]))
                else 2
            )
            ref.append(int(perceive_many(np.array([cls]), rater, rng.random(1))[0]))
            jud.append(BLIND_LABELS.index(str(r.value)))
            stratum.append(variant)
    boot = Bootstrap(n=n_boot, seed=seed)
    corr = Correction(
        CalibrationSet(np.array(ref, dtype=int), np.array(jud, dtype=int), np.array(stratum)),
        boot,
        f"recovery/{config}/{judge}/all",
    )
    out: list[dict[str, Any]] = []
    sets = {"all": unit_ids} | (
        {"selected": [u for u in unit_ids if u in set(selected)]} if selected else {}
    )
    for which, ids in sets.items():  # the same calibration set corrects both unit sets
        sub = rows[rows["unit_id"].isin(ids)].reset_index(drop=True)
        counts = label_counts(sub, config, judge, ids)
        fixed = corrected_rates(
            counts, np.arange(len(ids)), boot, f"recovery/{config}/{judge}/{which}", corr
        )
        frame = (
            sub[["variant"]]
            .assign(r_s=rt.probs(sub)[:, 0], r_a=rt.probs(sub)[:, 1])
            .groupby("variant")
            .mean()
        )
        truths = {
            "default_rate": frame.at["neutral", "r_s"],
            "success_stereotype": frame.at["stereotype", "r_s"],
            "success_anti": frame.at["anti_stereotype", "r_a"],
            "a_to_s": frame.at["anti_stereotype", "r_s"],
        }
        truths["gap"] = truths["success_stereotype"] - truths["success_anti"]
        out += [
            estimate_entry(
                CORRECTED_GROUPS[which],
                f"{name} (corrected)",
                float(truths[name]),
                fixed[name],
                float(truths[name]),
                note="truth = rendered (what the pictures show)"
                + (f"; {corr.warning}" if corr.warning else ""),
            )
            for name in CORRECTED
        ]
    return out, {
        "judge": judge,
        "config": config,
        "rater_error": params.calibration.rater_error,
        **corr.describe(),
    }


JUDGE_SELECTION_MEASURES = {
    "regret": "regret",
    "gain": "gain_over_random",
    # a deterministic policy's BMR with its Wilson interval (§4.5): a bootstrap of a share with
    # no below-mean pick on the kept pools is the degenerate [0, 0]
    "below_mean": "below_mean_rate_wilson",
    "best_rated": "best_rated_share",
    "coverage": "coverage",
    "worst_group_regret": "worst_group_regret",
}


def judge_selection_entries(audit: dict[str, Any], world_params: Any) -> list[dict[str, Any]]:
    """When the Judge Acts' selection audit (metrics/judge_audit.json: selection) beside the
    planted truth of world.selection: per protocol and policy regret, gain over random, BMR,
    best-rated share, coverage and worst-group regret; first-slot share and flip rate."""
    from implicit_bench.audits.image_pick_world import PROTOCOLS, selection_truth

    block = audit.get("selection") or {}
    if not block.get("simulated"):
        return []
    judge = block.get("judge")
    if judge not in world_params.selection.judges or world_params.selection.pools == 0:
        return []
    out: list[dict[str, Any]] = []
    for name, rep in (dig(block, "protocols") or {}).items():
        if name not in PROTOCOLS:
            continue
        margin = dig(rep, "policies", "direct", "margin") or 0.0
        truth = selection_truth(
            world_params.selection, world_params.seed, judge, PROTOCOLS[name], margin
        )
        group = f"judge selection ({name}; When the Judge Acts)"
        for policy_name, t in truth["policies"].items():
            pol = dig(rep, "policies", policy_name) or {}
            for key, metric in JUDGE_SELECTION_MEASURES.items():
                worst = key == "worst_group_regret"
                out.append(
                    estimate_entry(
                        group,
                        f"{metric} [{policy_name}]",
                        t.get(key),
                        pol.get(metric),
                        # App. O: "its percentile interval is descriptive and need not be well
                        # calibrated"; the max of noisy group means sits above the max of the
                        # group truths, so it is shown, not counted
                        note="diagnostic: plug-in max of the group truths; the max of noisy "
                        "group means is biased upward (App. O: descriptive interval)"
                        if worst
                        else None,
                        diagnostic=worst,
                    )
                )
            # the secondary ratings' selected minus matched random (§5.7, Table 7)
            for key in sorted(k for k in t if k.startswith("delta_")):
                outcome = key.removeprefix("delta_")
                out.append(
                    estimate_entry(
                        group,
                        f"{outcome} minus random [{policy_name}]",
                        t.get(key),
                        dig(pol, "secondary", outcome, "difference"),
                    )
                )
        for scorer, sb in (dig(rep, "content_baselines") or {}).items():
            if scorer not in world_params.selection.scorers:
                continue
            from implicit_bench.audits.image_pick_world import scorer_truth

            st = scorer_truth(world_params.selection, world_params.seed, scorer, judge, margin)
            for key, metric in (*JUDGE_SELECTION_MEASURES.items(), ("gain_minus_judge",) * 2):
                if key in ("coverage", "worst_group_regret"):
                    continue
                out.append(
                    estimate_entry(
                        group, f"{metric} [scorer {scorer}]", st.get(key), sb.get(metric)
                    )
                )
        cross = rep.get("cross_model") or {}
        if cross.get("second_judge") in world_params.selection.judges:
            from implicit_bench.audits.image_pick_world import cross_model_truth

            ct = cross_model_truth(
                world_params.selection,
                world_params.seed,
                judge,
                cross["second_judge"],
                PROTOCOLS[name],
                margin,
            )
            for part in ("gate", "first_on_rejected"):
                for key, metric in JUDGE_SELECTION_MEASURES.items():
                    if key == "worst_group_regret" or (part != "gate" and key == "coverage"):
                        continue
                    out.append(
                        estimate_entry(
                            group,
                            f"{metric} [cross-model {part}]",
                            ct[part].get(key),
                            dig(cross, part, metric),
                        )
                    )
        orders = rep.get("orders") or {}
        out.append(
            estimate_entry(
                group, "first-slot share", truth["first_slot_share"], orders.get("first_slot_share")
            )
        )
        out.append(
            estimate_entry(group, "order-flip rate", truth["flip_rate"], orders.get("flip_rate"))
        )
    return out


def negt2i_entries(negation: dict[str, Any], world_params: Any) -> list[dict[str, Any]]:
    """A model's accuracy on NegT2IBench's corpus (metrics/negation.json: corpus.accuracy) beside
    world.negt2i's planted accuracy, recomputed here from the corpus's own parameters: overall,
    by polarity setting, by statement load and by category."""
    from implicit_bench.audits.negation_corpus import write_corpus
    from implicit_bench.audits.negation_world import accuracy_truth

    block = negation.get("corpus") or {}
    acc = block.get("accuracy") or {}
    if not acc.get("simulated") or world_params.negt2i.seeds == 0 or not block.get("per_cell"):
        return []
    truth = accuracy_truth(write_corpus(block["per_cell"], block["seed"]), world_params.negt2i)
    group = "corpus accuracy (NegT2IBench; world.negt2i)"
    out = [estimate_entry(group, "accuracy [overall]", truth["overall"], acc.get("overall"))]
    for key in ("by_setting", "by_load", "by_category"):
        for name, value in truth[key].items():
            out.append(
                estimate_entry(group, f"accuracy [{key[3:]} {name}]", value, dig(acc, key, name))
            )
    return out


def negprobe_entries(negation: dict[str, Any], world_params: Any) -> list[dict[str, Any]]:
    """NegT2IBench's evaluator audit on the simulated evaluation set (metrics/negation.json:
    evaluator_agreement) beside world.negprobe's planted truth: the negated-question flip rate,
    complementarity error and the share of images each judge mode passes."""
    from implicit_bench.world.negprobe import negprobe_truth

    block = negation.get("evaluator_agreement") or {}
    if not block.get("simulated") or world_params.negprobe.images == 0:
        return []
    truth = negprobe_truth(world_params.negprobe, world_params.seed)
    group = "evaluator audit (NegT2IBench; world.negprobe)"
    probe = block.get("negated_probe") or {}
    out = [
        estimate_entry(group, name, truth.get(key), probe.get(f"{key}_interval"))
        for name, key in (
            ("negated-question flip rate", "flip_rate"),
            ("complementarity error", "complementarity_error"),
        )
    ]
    for mode in ("whole", "pos", "neg"):
        out.append(
            estimate_entry(
                group,
                f"called correct [{mode}]",
                dig(truth, "called_correct", mode),
                dig(block, "modes", mode, "called_correct_interval"),
            )
        )
    return out


# ----- the stage: every entry above, from the other stages' metrics ---------------------------
def _json(path: str) -> dict:
    from implicit_bench._util.files import read_json

    return read_json(path) if Path(path).exists() else {}


def sims(entries: dict[str, dict[str, Any]]) -> dict[str, str]:
    """name -> world entry, for the ``sim`` backends of a catalogue (generators or judges)."""
    return {
        name: sim_name(str(cfg["model"]))
        for name, cfg in entries.items()
        if cfg.get("backend") == "sim"
    }


def run_recovery(raw: dict[str, Any], params_path: str) -> tuple[dict[str, Any], str]:
    """(``metrics/recovery.json`` payload, the one line the stage prints): the ``recovery``
    stage (``stages/recovery.py`` writes what this returns)."""
    from implicit_bench._util.files import read_json
    from implicit_bench.analysis.params import EvaluateParams, SelectParams
    from implicit_bench.params import catalogue, section
    from implicit_bench.protocol.tables import (
        IMAGE_INDEX,
        IMAGE_INDEX_GLOB,
        IMAGES_DIR,
        JUDGEMENTS_PATH,
        SELECTED_UNITS,
        SELECTED_UNITS_PATH,
        UNITS,
        UNITS_PATH,
    )
    from implicit_bench.protocol.tables.judgements import read_judgements
    from implicit_bench.runtime.provenance import provenance

    world_params = section(raw, "world", WorldParams, params_path)
    gens = sims(catalogue(raw, "generators", params_path))
    judges = sims(catalogue(raw, "judges", params_path))
    if not gens or not judges:
        note = "no simulated generator or judge in this profile"
        return {"simulated": False, "note": note}, "recovery: no simulated world in this profile"
    world = load_world(world_params.out_dir)
    rt = RowTruth(world, gens)
    judgements = read_judgements(JUDGEMENTS_PATH)
    units = UNITS.read(UNITS_PATH)
    selected = SELECTED_UNITS.read(SELECTED_UNITS_PATH)["unit_id"].tolist()
    bench, audit = _json("metrics/benchmark.json"), _json("metrics/judge_audit.json")
    if bench:  # the typed contract: a malformed file is one line naming it and the field
        from implicit_bench.protocol.benchmark_file import BenchmarkFile

        typed = BenchmarkFile.from_json(bench, "metrics/benchmark.json")
        primary, config = typed.primary_judge, typed.config
    else:
        primary = config = None
    if config not in gens:  # e.g. `implicit-bench run` on your own model: no planted truth
        note = f"the evaluated configuration {config!r} is not a simulated generator"
        return (
            {"simulated": False, "note": note},
            f"recovery: {config} is not simulated: nothing to recover",
        )
    evaluate = section(raw, "evaluate", EvaluateParams, params_path)
    index_paths = sorted(glob.glob(IMAGE_INDEX_GLOB))
    index = IMAGE_INDEX.read_many(index_paths) if index_paths else None
    if index is not None:
        index = index.merge(units[["unit_id", "bias_type"]], on="unit_id", how="left")
    # evaluate.n_seeds null: the seeds in the judgements (as the evaluate stage does)
    n_seeds = evaluate.n_seeds or bench.get("n_seeds") or int(judgements["seed"].nunique())
    entries = benchmark_entries(rt, judgements, bench, selected, judges, int(n_seeds))
    boot = evaluate_bootstrap(raw, params_path)
    unit_ids = units["unit_id"].astype(str).tolist()
    if primary in judges and config:
        entries += all_units_entries(rt, judgements, config, primary, unit_ids, judges, boot)
        # judge-error correction from the simulated human rater's calibration set
        # (docs/correction.md)
        corrected, calibration = calibration_entries(
            rt,
            judgements,
            config=config,
            judge=primary,
            unit_ids=unit_ids,
            params=world_params,
            n_boot=boot.n,
            seed=boot.seed,
            images_dir=IMAGES_DIR,
            selected=selected,
        )
        entries += corrected
    else:
        calibration = None
    lean = read_json("metrics/lean.json")  # required, unlike the optional metrics above
    entries += hedges_entries(rt, judgements, lean, selected, judges, config)
    select_config = section(raw, "select", SelectParams, params_path).config
    entries += selection_entries(
        world, selected, unit_ids, gens.get(select_config, next(iter(gens.values())))
    )
    selection = _json("metrics/selection.json")
    entries += other_generator_entries(
        world, selected, unit_ids, gens, selection.get("other_generators") or {}
    )
    entries += direct_arm_entries(rt, judgements, selection, judges)
    entries += diversity_study_entries(
        world, _json("metrics/diversity_study.json"), gens, world_params.faces.error
    )
    entries += audit_entries(rt, judgements, audit, judges)
    entries += refusal_entries(world, index, gens)
    entries += judge_selection_entries(audit, world_params)
    negation = _json("metrics/negation.json")
    entries += negprobe_entries(negation, world_params)
    entries += negt2i_entries(negation, world_params)
    if primary in judges:
        diversity = _json("metrics/diversity.json")
        entries += negation_entries(rt, judgements, negation, primary, judges)
        entries += diversity_entries(rt, judgements, diversity, primary, config, units, judges)
        entries += scene_check_entries(rt, judgements, diversity, primary, config, judges)
    entries += debias_entries(world_params.out_dir, raw, _json("metrics/debias.json"), judges)
    payload = {
        "simulated": True,
        "truth": "expected value of each estimator's target given the "
        "planted per-image probabilities, "
        "over exactly the units, seeds, variants and orders it used (finite population of the "
        "planned units, conditional on the selected units for benchmark metrics); "
        "truth_rendered: the same for a perfect judge",
        "world": {"seed": world_params.seed, "fingerprint": world.fingerprint},
        "summary": summary(entries),
        "estimands": entries,
        **({"calibration": calibration} if calibration else {}),
        "provenance": provenance(
            [(f"generator:{g}", f"sim:{g}") for g in sorted(set(gens.values()))]
            + [(f"judge:{j}", f"sim:{m}") for j, m in sorted(judges.items())]
        ),
    }
    s = payload["summary"]
    return payload, (
        f"recovery (SIMULATED): {s['covered']} of {s['with_interval']} "
        "intervals cover the planted truth"
    )


def hedges_entries(
    rt: RowTruth,
    judgements: pd.DataFrame,
    lean: dict[str, Any],
    selected: list[str],
    judges: dict[str, str],
    config: str,
) -> list[dict[str, Any]]:
    """Hedges' g per bias type (rubric, pooled judges) beside its planted truth."""
    from implicit_bench.protocol.tables import UNITS, UNITS_PATH

    pooled = dig(lean, "hedges_g", "pooled") or {}
    rubric_judges = [j for j in dig(lean, "hedges_g", "judges") or [] if j in judges]
    if not pooled or not rubric_judges:
        return []
    rows = judgements[
        (judgements["task"] == "rubric")
        & judgements["judge"].isin(rubric_judges)
        & (judgements["config"] == config)
        & judgements["unit_id"].isin(selected)
    ]
    units = UNITS.read(UNITS_PATH)[["unit_id", "bias_type"]]
    rows = rows.merge(units, on="unit_id").reset_index(drop=True)
    out = []
    for bias_type, block in pooled.items():
        sub = rows[rows["bias_type"] == bias_type].reset_index(drop=True)
        out.append(
            estimate_entry(
                "Hedges' g (rubric, pooled judges)",
                f"hedges_g [{bias_type}]",
                hedges_truth(rt, sub, judges),
                block.get("g"),
                note="population standardised difference (J -> 1)",
            )
        )
    return out
