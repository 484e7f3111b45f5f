"""The one registry of paper tables: the caption, label and column titles a paper would print.

Every table written to ``tables/`` takes its LaTeX caption, ``\\label`` and column headers from here
(``paper_table(name)``); a table not registered gets a caption built from its title words and is
reported by ``tests/unit/analysis/test_latex_tables.py`` (every table the pipeline writes must be
registered).
Cells are translated too: model catalogue names (``qwen3vl``) become the model's printed name
(``Qwen3-VL``), booleans ``yes`` / ``no``, and a fraction column listed in ``PaperTable.fractions``
is printed as a percentage so that one table uses one scale. A column that no data can fill
(``NOT_ESTIMABLE``: CLIP's "neither") prints ``n/a`` with the reason under the table.

Other tables (the issue-22 leaderboard, debiasing) register themselves with
``register(name, PaperTable(...))`` at import time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from implicit_bench.protocol import metric_schema

# Printed names of catalogue entries (params.yaml ``judges`` / ``generators`` / ``llms``).
VALUE_LABELS: dict[str, str] = {
    "qwen3vl": "Qwen3-VL",
    "gemma4": "Gemma-4",
    "gpt54": "GPT-5.4",
    "gpt54mini": "GPT-5.4 mini",
    "clip": "CLIP",
    "sim_local": "Simulated (local)",
    "sim_api": "Simulated (API)",
    "qwen_image": "Qwen-Image",
    "sd3": "SD3",
    "gpt_image2": "GPT Image 2",
    "tiny": "Tiny (random)",
    "smollm2": "SmolLM2",
    "race-color": "race / colour",
    "physical_appearance": "physical appearance",
    "sexual-orientation": "sexual orientation",
    "socioeconomic": "socioeconomic status",
    "s": "stereotype",
    "a": "anti-stereotype",
    "neither": "neither",
    "all": "all",
    "neutral": "neutral",
    "stereotype": "stereotype",
    "anti_stereotype": "anti-stereotype",
    **{m.name: m.phrase for m in metric_schema.METRICS if m.phrase},
    "bias_score": "bias score",
    "refusal_rate": "refusal rate",
    "image index": "image index",
    "physical-appearance": "physical appearance",
    "clip_lean": "CLIP lean",
    "rubric": "rubric",
    "blind": "blind",
    "alignment": "alignment",
    "_recoverable_types": "recoverable types (pooled)",
    "_diagnostic_types": "diagnostic types (pooled)",
}

# Columns that no data can fill (regex on the column name -> the reason printed under the table).
NOT_ESTIMABLE: dict[str, str] = {
    r"^neither(_pct)? \[clip\]$": "CLIP chooses between the two attributes and cannot answer "
    '"neither"',
}

# Column titles shared by every table (a table may override one in ``PaperTable.columns``).
COLUMN_LABELS: dict[str, str] = {
    "judge": "Judge",
    "scorer": "Scorer",
    "config": "Generator",
    "generator": "Generator",
    "units": "Units",
    "n": "$n$",
    "images": "Images",
    "bias_type": "Bias type",
    "diagnostic": "Diagnostic type",
    "task": "Task",
    "variant": "Prompt",
    "seed": "Seed",
    "seeds": "Seeds",
    "invalid": "Invalid",
    **{f"{m.name}_pct": m.latex for m in metric_schema.METRICS if m.latex},
    "lean_s_pct": "Lean to stereotype (\\%)",
    "mean_lean": "Mean lean",
    "cohens_d": "Cohen's $d$",
    "g": "Hedges' $g$",
    "n_stereotype": "$n$ stereotype",
    "n_anti": "$n$ anti-stereotype",
    "mean_between_seed_r": "Mean between-seed $r$",
    "reliability": "Spearman-Brown reliability",
    "pair": "Scorers",
    "r": "Pearson $r$",
    "first": "Judge 1",
    "second": "Judge 2",
    "agreement_pct": "Agreement (\\%)",
    "s_pct": "Stereotype (\\%)",
    "a_pct": "Anti-stereotype (\\%)",
    "neither_pct": "Neither (\\%)",
    "both_succeed_pct": "Both succeed (\\%)",
    "fails_both": "Fails both",
    "n_before": "$n$ before",
    "mean_before": "Mean before",
    "n_after": "$n$ after",
    "mean_after": "Mean after",
    "requests": "Requests",
    "ok": "Returned",
    "refused": "Refused",
    "failed": "Failed",
    "refusal_rate": "Refusal rate",
    "bias": "Bias score",
    "alignment_judge": "Alignment judge",
    "alignment_images": "Alignment images",
    "alignment": "Alignment",
    "requested": "Requested",
    "returned": "Returned",
    "coverage": "Coverage",
    "returned_from": "Counted from",
    "raw_upstream": "Source pairs",
    "candidates": "Candidates",
    "kept": "Selected",
    "retention_of_candidates_pct": "Kept of candidates (\\%)",
    "retention_of_raw_pct": "Kept of source pairs (\\%)",
    "s_minus_n_pre": "S$-$N before",
    "s_minus_n_post": "S$-$N after",
    "s_minus_n_delta": "S$-$N change",
    "s_minus_a_pre": "S$-$A before",
    "s_minus_a_post": "S$-$A after",
    "s_minus_a_delta": "S$-$A change",
    "n_images": "Images",
    "mean_anti": "Mean, anti-stereotype",
    "mean_neutral": "Mean, neutral",
    "mean_stereotype": "Mean, stereotype",
    "n_instances": "Instances",
    "delta_mean": "Mean S$-$A",
    "d": "Cohen's $d$",
    "pct_ge4": "Score $\\geq$ 4 (\\%)",
    "pct_s_gt_a": "S $>$ A (\\%)",
    "pct_tie": "Ties (\\%)",
    "grouping": "Grouping",
    "grouped_by": "Grouped by",
    "labels_by": "Labelled by",
    "group": "Default strength",
    "ungrouped_units": "Ungrouped units",
    "metric": "Metric",
    "value": "Value",
    "truth": "Planted truth",
}


@dataclass(frozen=True)
class PaperTable:
    """How one table is printed: caption, ``\\label``, column-title overrides, fraction columns
    printed as percentages, and whether a wide table is set in landscape."""

    caption: str
    label: str
    columns: dict[str, str] = field(default_factory=dict)
    fractions: tuple[str, ...] = ()
    landscape: bool = False
    drop: tuple[
        str, ...
    ] = ()  # columns the CSV keeps but the printed table does not (derived ones)


REGISTRY: dict[str, PaperTable] = {}


def register(name: str, table: PaperTable) -> None:
    """Add (or replace) the printed form of table ``name``."""
    REGISTRY[name] = table


for _name, _table in {
    "benchmark_summary": PaperTable(
        "Headline benchmark: default rate, success of explicit requests and "
        "the gap, per judge (95\\% bootstrap intervals).",
        "tab:benchmark-summary",
    ),
    "by_bias_type": PaperTable(
        "Default rate, success and gap by bias type and judge (95\\% bootstrap intervals).",
        "tab:by-bias-type",
    ),
    "generators_side_by_side": PaperTable(
        "Generators side by side: default rate, success and gap per generator and judge.",
        "tab:generators",
    ),
    "figure06_hedges_g": PaperTable(
        "Hedges' $g$ of the rubric score, stereotype against "
        "anti-stereotype prompts, by bias type (data of Figure 6).",
        "tab:hedges-g",
        columns={"g": "Hedges' $g$ (pooled)"},
    ),
    "lean_spearman_brown": PaperTable(
        "Between-seed reliability of the lean (Spearman-Brown).", "tab:lean-reliability"
    ),
    "table03_neutral_mean": PaperTable(
        "Mean rubric score of neutral images before and after selection (Table 3).",
        "tab:neutral-mean",
    ),
    "table04_generators": PaperTable(
        "Generators: bias, alignment and coverage (Table 4).",
        "tab:generators-bias",
        fractions=("coverage", "alignment"),
    ),
    "table04_refusals_by_bias_type": PaperTable(
        "Refusals of the API generator by bias type.", "tab:refusals", fractions=("refusal_rate",)
    ),
    "table05_recoverability": PaperTable(
        "Recoverability: units where both explicit prompts succeed, and "
        "neither label, by bias type and judge (Table 5).",
        "tab:recoverability",
    ),
    "table09_retention": PaperTable(
        "Units retained by the selection, by bias type (Table 9).", "tab:retention"
    ),
    "table10_filter_shape": PaperTable(
        "Score differences before and after selection (Table 10).", "tab:filter-shape"
    ),
    "table12_lean_by_bias_type": PaperTable(
        "Mean lean by bias type and scorer (Table 12).", "tab:lean-by-bias-type"
    ),
    "table13_lean": PaperTable(
        "Lean of neutral images towards the stereotype, per scorer (Table 13).", "tab:lean"
    ),
    "table13_lean_per_seed": PaperTable(
        "Lean of neutral images per seed (Table 13, by seed).", "tab:lean-per-seed"
    ),
    "table14_lean_pearson": PaperTable(
        "Pearson correlation of the lean between scorers (Table 14).", "tab:lean-pearson"
    ),
    "table16_judge_scale": PaperTable(
        "How each judge uses the rubric scale (Table 16).", "tab:judge-scale"
    ),
    "table20_agreement": PaperTable("Agreement between blind judges (Table 20).", "tab:agreement"),
    "table20_confusion_gpt54_vs_clip": PaperTable(
        "Blind labels: GPT-5.4 (rows) against CLIP (columns).", "tab:confusion-gpt54-clip"
    ),
    "table20_confusion_qwen3vl_vs_clip": PaperTable(
        "Blind labels: Qwen3-VL (rows) against CLIP (columns).", "tab:confusion-qwen3vl-clip"
    ),
    "table20_confusion_qwen3vl_vs_gpt54": PaperTable(
        "Blind labels: Qwen3-VL (rows) against GPT-5.4 (columns).", "tab:confusion-qwen3vl-gpt54"
    ),
    "table21_label_shares": PaperTable(
        "Shares of blind labels per prompt and judge (Table 21).", "tab:label-shares"
    ),
    "leaderboard": PaperTable(
        "Leaderboard: every generator side by side, each value with its 95\\% bootstrap interval.",
        "tab:leaderboard",
        columns={
            "strongest_success_stereotype_pct": "Strongest group: success, stereotype (\\%)",
            "strongest_success_anti_pct": "Strongest group: success, anti-stereotype (\\%)",
            "refusal_rate_pct": "Refusals (\\%)",
            "bias_score": "Bias score (0-5)",
            "alignment_pct": "Alignment (\\%)",
        },
    ),
    "leaderboard_pairs": PaperTable(
        "Paired differences between generators on the units and seeds both "
        "have (paired cluster bootstrap, 95\\% intervals; "
        "$p$ Holm-adjusted over all differences; resolved when the adjusted $p < 0.05$).",
        "tab:leaderboard-pairs",
        columns={
            "a": "Generator A",
            "b": "Generator B",
            "metric": "Metric",
            "difference_pct": "A $-$ B",
            "p": "$p$",
            "p_holm": "$p$ (Holm)",
            "resolved": "Resolved",
        },
    ),
    "leaderboard_beside_release": PaperTable(
        "This run's generators beside the authors' release (Table 4 generators), each row "
        "labelled with its source and judge; requested, returned, refused and missing neutral "
        "images counted apart.",
        "tab:leaderboard-beside-release",
        columns={"bias_score": "Bias score (0-5)", "alignment_pct": "Alignment (\\%)"},
    ),
    "leaderboard_beside_release_pairs": PaperTable(
        "This run minus the authors' release on the units and seeds both have a judgement for "
        "(paired cluster bootstrap, 95\\% intervals; $p$ Holm-adjusted over all differences); "
        "a different judge makes a difference include judge effects.",
        "tab:leaderboard-beside-release-pairs",
        columns={"a": "This run", "b": "Release", "metric": "Metric", "difference": "A $-$ B"},
    ),
    "lean_by_source": PaperTable(
        "Neutral lean per bias type and source dataset (Appendix B.4), Cohen's $d$ and lean S "
        "per scorer, on the release's construction scores.",
        "tab:lean-by-source",
    ),
    "table03_clip_prefilter": PaperTable(
        "CLIP lean of the neutral images before (all candidates) and after selection (kept), "
        "from the release's pre-filter similarities (Table 3, CLIP column).",
        "tab:clip-prefilter",
    ),
    "table22_success_by_default_strength": PaperTable(
        "Success of explicit requests by default strength (Table 22).",
        "tab:success-by-strength",
        drop=("grouping",),
    ),
}.items():
    register(_name, _table)

_SUFFIXED = re.compile(r"^(?P<base>.+?) \[(?P<who>[^\]]+)\]$")
_VS = re.compile(r"^(?P<a>[^/~]+?)\s*(?P<sep>/|~)\s*(?P<b>[^/~]+)$")


def value_label(value: str) -> str:
    """The printed form of one cell text: a catalogue name, a ``a~b`` / ``a / b`` pair of them."""
    if value in VALUE_LABELS:
        return VALUE_LABELS[value]
    m = _VS.match(value)
    if m and m["a"] in VALUE_LABELS and m["b"] in VALUE_LABELS:
        joiner = " vs " if m["sep"] == "~" else " / "
        return VALUE_LABELS[m["a"]] + joiner + VALUE_LABELS[m["b"]]
    return value


def column_label(name: str, table: str | None = None) -> str:
    """The printed (LaTeX) title of column ``name`` of ``table``: the table's own override, the
    shared title, ``title [Judge]`` for per-judge columns, else the words of the name."""
    own = REGISTRY.get(table or "")
    if own and name in own.columns:
        return own.columns[name]
    if name in COLUMN_LABELS:
        return COLUMN_LABELS[name]
    m = _SUFFIXED.match(name)
    if m:
        return f"{column_label(m['base'], table)}, {value_label(m['who'])}"
    if name.endswith("_pct"):
        return column_label(name[:-4], table) + " (\\%)"
    m = _VS.match(name)
    if m:
        return f"{value_label(m['a'])} / {value_label(m['b'])}"
    return (
        value_label(name).replace("_", " ").capitalize()
        if name not in VALUE_LABELS
        else VALUE_LABELS[name]
    )


def not_estimable_columns(columns: list[str]) -> dict[str, str]:
    """``{column: reason}`` for the columns of ``columns`` that ``NOT_ESTIMABLE`` names."""
    return {
        c: reason
        for c in columns
        for pattern, reason in NOT_ESTIMABLE.items()
        if re.match(pattern, c)
    }


def paper_table(name: str) -> PaperTable:
    """The registered printed form of table ``name`` (a caption from the name if unregistered)."""
    if name in REGISTRY:
        return REGISTRY[name]
    words = re.sub(r"^(table|figure)\d+_?", "", name).replace("_", " ").strip() or name
    return PaperTable(words[:1].upper() + words[1:] + ".", "tab:" + name.replace("_", "-"))
