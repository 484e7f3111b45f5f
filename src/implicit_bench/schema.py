"""Column names shared by every stage: the tables that flow between stages.

The units and judgements tables are also the "bring your own judgements" formats of
``implicit-bench analyze`` (see docs/byo-judgements.md).
"""

from __future__ import annotations

VARIANTS: tuple[str, ...] = ("neutral", "stereotype", "anti_stereotype")
# Extra variants written by the negated-prompt writer (NegT2IBench settings 0:1 and 1:1).
NEGATED_VARIANTS: tuple[str, ...] = ("negated_0_1", "negated_1_1")
# The subject-only template prompt ("a photo of a {subject}"), HoloFair's ID prompts (docs/audits.md).
TEMPLATE_VARIANTS: tuple[str, ...] = ("subject",)

BIAS_TYPES: tuple[str, ...] = (
    "profession",
    "race",
    "gender",
    "socioeconomic",
    "religion",
    "race-color",
    "age",
    "nationality",
    "sexual-orientation",
    "disability",
    "physical-appearance",
)
# Bias types whose contrasts images rarely show (paper Table 5): reported apart.
DIAGNOSTIC_BIAS_TYPES: tuple[str, ...] = (
    "socioeconomic",
    "disability",
    "sexual-orientation",
    "nationality",
)

# One row per source sentence pair (sources stage).
PAIR_COLUMNS: tuple[str, ...] = (
    "pair_id",
    "source",
    "split",
    "bias_type",
    "target",
    "context",
    "stereotype_sentence",
    "anti_stereotype_sentence",
)

# One row per unit with its prompt triplet: the UNITS table of `implicit-bench analyze`.
UNIT_COLUMNS: tuple[str, ...] = (
    "unit_id",
    "source",
    "bias_type",
    "head",
    "relation",
    "stereotype",
    "anti_stereotype",
    "prompt_neutral",
    "prompt_stereotype",
    "prompt_anti_stereotype",
)

# One row per judged image: the JUDGEMENTS table of `implicit-bench analyze`.
JUDGEMENT_COLUMNS: tuple[str, ...] = ("unit_id", "variant", "seed", "config", "judge", "task", "value")
# The judge tasks are not listed here: every task is one YAML file under prompts/judges/
# (judges.tasks.task_names(), the registry; docs/architecture.md "Extending").
BLIND_LABELS: tuple[str, ...] = ("s", "a", "neither")
# Extra columns the pipeline's judge stage records next to the JUDGEMENT_COLUMNS.
JUDGEMENT_EXTRA_COLUMNS: tuple[str, ...] = (
    "model",
    "prompt_hash",
    "image_sha256",
    "raw",
    "valid",
    "error",
    "order",
)
