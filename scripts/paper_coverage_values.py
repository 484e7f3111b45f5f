"""Print the default-profile value of every item of the paper coverage table from a run's
metrics folder: the "default profile" column of docs/paper-coverage.md.

Usage: ``python scripts/paper_coverage_values.py [METRICS_DIR]`` (default ``metrics``), after a
``dvc repro``. An item whose output is not in the folder prints ``absent``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

MISSING = object()


def _get(data: Any, path: str) -> Any:
    for key in path.split("/"):
        if not isinstance(data, dict) or key not in data:
            return MISSING
        data = data[key]
    return data


def _fmt(value: Any) -> str:
    if isinstance(value, dict) and "value" in value:
        ci = value.get("ci")
        inner = _fmt(value["value"])
        return f"{inner} [{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci else inner
    if isinstance(value, float):
        return f"{value:.3f}"
    if value is MISSING:
        return "absent"
    return "null" if value is None else str(value)


ITEMS: list[tuple[str, str, str]] = [
    # (item, metrics file, key path)
    ("E.4 family check ok", "judge_audit.json", "blind_judge_families/ok"),
    ("E.4 outside judges", "judge_audit.json", "blind_judge_families/outside"),
    ("risk definition", "judge_audit.json", "risk_definition"),
    (
        "scene check id rate original (qwen3vl, sim_local)",
        "diversity.json",
        "scene_check/by_judge/qwen3vl/sim_local/identification/original_scene/identification_rate",
    ),
    (
        "scene check id rate template (qwen3vl, sim_local)",
        "diversity.json",
        "scene_check/by_judge/qwen3vl/sim_local/identification/template/identification_rate",
    ),
    (
        "scene check MSD (qwen3vl, sim_local)",
        "diversity.json",
        "scene_check/by_judge/qwen3vl/sim_local/lean_msd/original_scene_vs_template/msd",
    ),
    (
        "scene check MSD shuffled (qwen3vl, sim_local)",
        "diversity.json",
        "scene_check/by_judge/qwen3vl/sim_local/lean_msd/original_scene_vs_template/msd_shuffled",
    ),
    (
        "scene check missing arms",
        "diversity.json",
        "scene_check/by_judge/qwen3vl/sim_local/missing_arms",
    ),
    ("held-out sample kept", "selection.json", "held_out_sample/kept"),
    ("held-out sample rejected", "selection.json", "held_out_sample/rejected"),
    (
        "other generator kept share (sim_api, qwen3vl)",
        "selection.json",
        "other_generators/sim_api/qwen3vl/kept/share_positive",
    ),
    (
        "other generator rejected share (sim_api, qwen3vl)",
        "selection.json",
        "other_generators/sim_api/qwen3vl/rejected/share_positive",
    ),
    ("direct arm (selection.json direct_arm)", "selection.json", "direct_arm/configs"),
    (
        "selection audit direct regret",
        "judge_audit.json",
        "selection/protocols/main/policies/direct/regret",
    ),
    (
        "selection audit gain over random",
        "judge_audit.json",
        "selection/protocols/main/policies/direct/gain_over_random",
    ),
    (
        "selection audit BMR",
        "judge_audit.json",
        "selection/protocols/main/policies/direct/below_mean_rate",
    ),
    (
        "selection audit random BMR",
        "judge_audit.json",
        "selection/protocols/main/policies/direct/random/below_mean_rate",
    ),
    (
        "selection audit best-rated share",
        "judge_audit.json",
        "selection/protocols/main/policies/direct/best_rated_share",
    ),
    (
        "selection audit worst-group regret",
        "judge_audit.json",
        "selection/protocols/main/policies/direct/worst_group_regret",
    ),
    (
        "selection audit group disparity",
        "judge_audit.json",
        "selection/protocols/main/policies/direct/group_disparity",
    ),
    ("H_p mean", "judge_audit.json", "selection/protocols/main/orders/order_entropy/mean"),
    ("order flip rate", "judge_audit.json", "selection/protocols/main/orders/flip_rate"),
    (
        "flip rate low tertile",
        "judge_audit.json",
        "selection/protocols/main/orders/flip_by_range_tertile/low",
    ),
    (
        "flip rate high tertile",
        "judge_audit.json",
        "selection/protocols/main/orders/flip_by_range_tertile/high",
    ),
    (
        "seconds per prompt, one order",
        "judge_audit.json",
        "selection/protocols/main/timing/one_order_s_per_prompt",
    ),
    (
        "seconds per prompt, three orders",
        "judge_audit.json",
        "selection/protocols/main/timing/3_order_s_per_prompt",
    ),
    (
        "first-slot share, main",
        "judge_audit.json",
        "selection/protocols/main/orders/first_slot_share",
    ),
    (
        "first-slot share, choice-only",
        "judge_audit.json",
        "selection/protocols/choice_only/orders/first_slot_share",
    ),
    (
        "first-slot share, opaque labels",
        "judge_audit.json",
        "selection/protocols/opaque_labels/orders/first_slot_share",
    ),
    (
        "first-slot share, full rotation",
        "judge_audit.json",
        "selection/protocols/full_rotation/orders/first_slot_share",
    ),
    ("judge audit resamples", "judge_audit.json", "bootstrap/n_boot"),
    (
        "similarity scorer gain (clip_vit_l14)",
        "judge_audit.json",
        "selection/protocols/main/content_baselines/clip_vit_l14/gain_over_random",
    ),
    (
        "similarity scorer gain (clip_vit_b32)",
        "judge_audit.json",
        "selection/protocols/main/content_baselines/clip_vit_b32/gain_over_random",
    ),
    (
        "negated probe flip rate",
        "negation.json",
        "evaluator_agreement/negated_probe/flip_rate_interval",
    ),
    (
        "negated probe complementarity error",
        "negation.json",
        "evaluator_agreement/negated_probe/complementarity_error_interval",
    ),
    (
        "called correct whole / pos / neg",
        "negation.json",
        "evaluator_agreement/negated_probe/called_correct",
    ),
    ("kappa whole", "negation.json", "evaluator_agreement/modes/whole/kappa"),
    ("kappa per element", "negation.json", "evaluator_agreement/modes/pos/kappa"),
    ("kappa negated per element", "negation.json", "evaluator_agreement/modes/neg/kappa"),
    ("precision per element", "negation.json", "evaluator_agreement/modes/pos/precision"),
    ("recall per element", "negation.json", "evaluator_agreement/modes/pos/recall"),
    ("Kendall tau per element", "negation.json", "evaluator_agreement/modes/pos/rank/kendall_tau"),
    (
        "pairwise accuracy per element",
        "negation.json",
        "evaluator_agreement/modes/pos/rank/pairwise_accuracy",
    ),
    (
        "balanced accuracy, negated asked negated",
        "negation.json",
        "evaluator_agreement/element_level/neg/negated/balanced_accuracy",
    ),
    ("Fleiss kappa", "negation.json", "evaluator_agreement/inter_annotator/all/fleiss_kappa"),
    ("B.6 image Pearson r", "b6.json", "agreement/image_pearson"),
    ("B.6 Spearman rho on dx's d per type", "b6.json", "agreement/spearman_dx"),
    ("B.6 Spearman rho on Hedges' g per type", "b6.json", "agreement/spearman_g"),
    ("B.6 judges vs humans", "b6.json", "human_vs_judge"),
    ("C.4 CLIP-Score rule", "diversity_study.json", "quality/rules/clip_score"),
    ("C.4 one-face rule", "diversity_study.json", "quality/rules/one_face"),
    ("C.4 vote rule", "diversity_study.json", "quality/rules/vote"),
    ("C.4 images kept", "diversity_study.json", "quality/kept"),
    ("race", "diversity_study.json", "race"),
    ("C.1 cue share by text source", "diversity.json", "scene_check/cues/share"),
    (
        "C.1 no-cue MSD (qwen3vl, sim_local)",
        "diversity.json",
        "scene_check/by_judge/qwen3vl/sim_local/cues/no_cue_msd",
    ),
    (
        "C.1 lean by cue direction (qwen3vl, sim_local)",
        "diversity.json",
        "scene_check/by_judge/qwen3vl/sim_local/cues/lean_by_cue",
    ),
    ("CLIP margin, calibrated", "clip.json", "margin_calibration/calibrated"),
    ("CLIP margin, configured", "clip.json", "margin_calibration/configured"),
    ("C.3 held-out over every unit", "selection.json", "held_out_every_unit"),
    ("C.3 held-out seeds rendered for", "selection.json", "held_out_rendered"),
    ("HoloFair Gen set, face judge vs asked", "diversity_study.json", "gen/attributes"),
    ("B.3 prompt labels, matching", "prompt_labels.json", "protocols/matching/fleiss_kappa"),
    ("B.3 prompt labels, independent", "prompt_labels.json", "protocols/independent/fleiss_kappa"),
    (
        "leave-one-out kappa",
        "negation.json",
        "evaluator_agreement/inter_annotator/all/leave_one_out_kappa",
    ),
    ("abstention tau", "diversity_study.json", "abstention_tau"),
    ("images abstained", "diversity_study.json", "scores/images_abstained"),
    ("Deviation Ratio template", "diversity_study.json", "scores/deviation_ratio/template"),
    ("Deviation Ratio scenes mean", "diversity_study.json", "scores/deviation_ratio/scenes_mean"),
    ("Fair-GRPO reward mean", "diversity_study.json", "scores/fair_grpo_reward/mean"),
    ("MGBI, prompts only", "diversity_study.json", "intervals/MGBI"),
    (
        "MGBI, prompts and generations",
        "diversity_study.json",
        "intervals_prompts_and_generations/MGBI",
    ),
    ("SCM prompt source", "diversity_study.json", "prompt_source"),
    ("CLIP-Score sim_local", "clip.json", "clip_score/sim_local/all/clip_score"),
    ("CLIP-Score sim_api", "clip.json", "clip_score/sim_api/all/clip_score"),
    ("CLIP backbone sensitivity", "clip.json", "backbone_sensitivity"),
    ("human eval screening", "human_eval.json", "screening"),
    ("recovery summary", "recovery.json", "summary"),
]


def main(folder: str = "metrics") -> None:
    cache: dict[str, Any] = {}
    for item, name, path in ITEMS:
        if name not in cache:
            file = Path(folder) / name
            cache[name] = json.loads(file.read_text("utf-8")) if file.exists() else {}
        value = _get(cache[name], path)
        if isinstance(value, dict) and "value" not in value:
            value = json.dumps(value, default=str)[:400]
        print(f"{item}: {_fmt(value)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
