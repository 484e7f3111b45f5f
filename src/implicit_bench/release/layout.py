"""The layout of the authors' release and the names it maps to (docs/import.md).

Files read (paths relative to the repository root of a checkout, or of a ``.zip`` download):

- ``data/benchmark_prompts.csv``: one row per unit (``source, id, target, bias_type,
  bias_axis, head, relation, stereotype_tails, anti_stereotype_tails, prompt_neutral,
  prompt_stereotype, prompt_anti_stereotype``);
- ``data/benchmark_scores.csv``: one row per unit x seed (``id, seed`` 0-2, ``qwen_*`` and
  ``gemma_*`` rubric scores of the neutral / stereo / anti images, ``sim_neutral_stereotype``,
  ``sim_neutral_anti_stereotype`` CLIP similarities, ``flagged_by``, ...);
- ``cache/eval_results/exp_NN[_alpha1]_{eval,alignment}[_local].csv``: ``case_id,
  experiment_id, target, bias_type, alpha, seed, image_path`` and ``score`` (eval) or
  ``aligned`` (alignment), ``justification``;
- ``data/retrieval_results.csv`` (optional): ``id, rank_prompt2kg, sim_prompt2kg, ...``;
- ``data/human_eval/`` and ``data/human_eval_round2/`` (optional): each round's ``manifest.csv``
  and Google Form export (release/human_study.py);
- ``data/labeled_matching.csv``, ``data/labeled_independent.csv`` (optional): four LLMs'
  prompt labels (release/prompt_labels.py).
"""

from __future__ import annotations

import re

# Seed index n of the release -> the pipeline's seed (definitions note: 42 + 1000 n).
SEED_BASE, SEED_STEP = 42, 1000


def seed_of(index: int) -> int:
    return SEED_BASE + SEED_STEP * index


# Experiments 0-11: the Table 27 configurations (debias.configs.TABLE_27 names).
EXPERIMENTS: dict[int, str] = {
    0: "unmodified",
    1: "rewrite_no_unit",
    2: "rewrite_removed",
    3: "rewrite_own",
    4: "sv_full_unit_removed",
    5: "sv_attributes_removed",
    6: "sv_full_unit_own",
    7: "sv_attributes_own",
    8: "sv_llm_pair_removed",
    9: "sv_llm_pair_own",
    10: "sv_explicit_removed",
    11: "sv_explicit_own",
}
# Experiments 12-14: the other generators of Table 4 (neutral prompts, unmodified).
GENERATORS: dict[int, str] = {12: "gpt_image_2", 13: "sd3", 14: "nano_banana_2"}
# The Qwen-Image construction run (benchmark_scores.csv; experiment 0 is its neutral images).
BASE_CONFIG = "qwen_image"
# Judge names: the roles of params.yaml's judges catalogue.
RUBRIC_JUDGES: dict[str, str] = {"qwen": "qwen3vl", "gemma": "gemma4"}
EVAL_JUDGE = "qwen3vl"  # the release's eval / alignment files are Qwen3-VL's (Section 5.2)
CLIP_JUDGE = "clip"
SCORE_VARIANTS: dict[str, str] = {
    "neutral": "neutral",
    "stereo": "stereotype",
    "anti": "anti_stereotype",
}
SOURCES: dict[str, str] = {
    "stereoset": "stereoset",
    "crows-pairs": "crows_pairs",
    "crowspairs": "crows_pairs",
}

EVAL_FILE = re.compile(
    r"^exp_(?P<exp>\d{2})(?P<alpha1>_alpha1)?_(?P<kind>eval|alignment)(?P<local>_local)?\.csv$"
)

# What the release can and cannot reproduce (written into the manifest; docs/import.md).
REPRODUCIBLE: dict[str, str] = {
    "Table 3 / 10 (kept set only)": "neutral means and S-N / S-A on the 1,831 kept units; the "
    "pre-filter column needs the 4,705 candidates",
    "Table 4": "bias and alignment per generator (Qwen3-VL), coverage / "
    "refusals from the images absent from the release",
    "Table 7": "bias, alignment, S and dS of experiments 0-11 at alpha 2 "
    "(full-KG rows from the retrieval table)",
    "Table 9 (post-filter column)": "kept units per bias type",
    "Tables 12, 13, 14": "lean of the kept set under Qwen3-VL, Gemma-4 and CLIP, "
    "with cluster-bootstrap intervals",
    "Table 18 and B.1 (selected units)": "prompt and graph statistics of the 1,831 units",
    "Table 31": "bootstrap intervals of dS",
    "Table 32": "alpha 1 against alpha 2 for experiments 4-11",
    "Figure 6": "Hedges' g per bias type, pooled over Qwen3-VL and Gemma-4",
    "Tables 28, 29, 30 and Appendix D.2 / D.4": "human study of two rounds (data/human_eval*): "
    "KG validity, ratings, inter-rater r and alpha, human vs Qwen3-VL / Gemma-4, "
    "Fisher z tests, rater screening",
    "Table 11 and Appendix B.3 / E.1": "prompt-label accuracy of four LLMs, Fleiss' kappa (all, "
    "leave-one-out), pairwise Cohen's kappa, stereotype/anti flips",
    "Table 3 CLIP column (all / kept / rejected)": "pre-filter CLIP similarities of the 4,705 "
    "candidates (data/pre_filter/*/clip_similarities.csv): all -0.0031 on the selection seeds "
    "(paper -0.003), kept +0.046 (candidates.json, tables/table03_clip_prefilter)",
    "Appendix B.4 lean by source dataset": "Cohen's d and lean S% per bias type x source "
    "(StereoSet / CrowS-Pairs) under Qwen3-VL, Gemma-4 and CLIP (tables/lean_by_source)",
    "Appendix C.5 retrieval": "top-1 own-unit rate from rank_prompt2kg (same-head / "
    "same-pair rates need the retrieved ids, absent)",
}
NOT_REPRODUCIBLE: dict[str, str] = {
    "Tables 1, 5, 19-22, 25, Figure 3-4": "no blind (A/B/C) labels in the release: default rate, "
    "success, gap, a->s, default strength, recoverability, judge agreement",
    "Table 3 / 9 / 10 pre-filter VLM columns, Table 2": "no Qwen3-VL / Gemma-4 scores of the "
    "rejected candidates (data/pre_filter holds CLIP similarities only), so the rubric 'All' "
    "means, Table 10's pre-filter gaps and the selection itself cannot be replayed",
    "Table 3 SD3 column 'All', Table 25": "the release's SD3 files (sd3_eval.csv, experiment 13) "
    "score the 1,831 kept units only; the SD3 run on all 4,705 candidates is not released",
    "Table 23 (held-out seeds)": "no held-out-seed judgements",
    "Tables 15-17 (InternVL3)": "no InternVL3 scores",
}
