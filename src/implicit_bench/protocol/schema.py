"""The protocol's constants: variants, bias types, judge tasks, blind option orders and labels,
and the column names of the tables that flow between stages (their paths, dtypes and
validation: ``implicit_bench.protocol.tables``).

The units and judgements tables are also the "bring your own judgements" formats of
``implicit-bench analyze`` (see docs/byo-judgements.md). Every module reads these constants
from here (never from ``judges/``): ``blind_order`` and the cyclic orders are part of the
protocol, not of a judge backend.
"""

from __future__ import annotations

from implicit_bench._util.hashing import derive_seed

VARIANTS: tuple[str, ...] = ("neutral", "stereotype", "anti_stereotype")
# Extra variants written by the negated-prompt writer (NegT2IBench settings 0:1 and 1:1).
NEGATED_VARIANTS: tuple[str, ...] = ("negated_0_1", "negated_1_1")
# The subject-only template prompt ("a photo of a {subject}"),
# HoloFair's ID prompts (docs/audits.md).
TEMPLATE_VARIANTS: tuple[str, ...] = ("subject",)
# The direct arm of App. C.1's construction ablation: a triplet written directly from the
# sentence pair, without the KG unit (triplets hooks direct / direct_llm; docs/audits.md).
DIRECT_VARIANTS: tuple[str, ...] = ("direct_neutral", "direct_stereotype", "direct_anti_stereotype")
# Every variant a JUDGEMENTS row may carry (the analysis reads VARIANTS + NEGATED_VARIANTS).
ALL_VARIANTS: tuple[str, ...] = (
    *VARIANTS,
    *NEGATED_VARIANTS,
    *TEMPLATE_VARIANTS,
    *DIRECT_VARIANTS,
)

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


def normalise_bias_type(value: object) -> str | None:
    """``"Race_color"`` / ``"race color"`` -> ``"race-color"``: the spelling of BIAS_TYPES."""
    if value is None:
        return None
    return str(value).strip().lower().replace("_", "-").replace(" ", "-")


# Bias types whose contrasts images rarely show (paper Table 5): reported apart.
DIAGNOSTIC_BIAS_TYPES: tuple[str, ...] = (
    "socioeconomic",
    "disability",
    "sexual-orientation",
    "nationality",
)


# Table columns are not listed here: each table's are named once, in its spec
# (protocol/tables: PAIR_COLUMNS, UNIT_COLUMNS, JUDGEMENT_COLUMNS, ... derive from the specs).
# The judge tasks are not listed here: every task is one YAML file under prompts/judges/
# (judge_tasks.task_names(), the registry; docs/extending.md "Extending").
# The stored blind value: the attribute chosen (s = stereotype,
# a = anti-stereotype), never a letter.
BLIND_LABELS: tuple[str, ...] = ("s", "a", "neither")
# Blind option orders: "sa" (s is option A, a is option B) or "as".
ORDERS: tuple[str, ...] = ("sa", "as")
# Three cyclic option orders (When the Judge Acts): the candidates sorted by id (a, neither, s)
# and their rotations; letter i is the candidate in slot A, B, C (n = neither).
CYCLIC_ORDERS: tuple[str, ...] = ("ans", "nsa", "san")
CANDIDATE_LABELS: dict[str, str] = {"s": "s", "a": "a", "n": "neither"}
# The key of a JUDGEMENTS row (a blind image asked under several orders adds ``order``).
JUDGEMENT_KEY: tuple[str, ...] = ("unit_id", "variant", "seed", "config", "judge", "task")


def blind_order(unit_id: str, seed: int, variant: str) -> str:
    """The option order of one image: "sa" (s is option A) or "as", from a hash of
    (unit, seed, image type), so s is option A for about half of the images."""
    return ORDERS[derive_seed("blind_order", str(unit_id), int(seed), str(variant)) % 2]


def cyclic_order(unit_id: str, seed: int, variant: str) -> str:
    """The primary ("order 1") of the three cyclic orders of one image: the rotation offset is
    drawn from a hash of (unit, seed, image type) (definitions note)."""
    return CYCLIC_ORDERS[derive_seed("cyclic_order", str(unit_id), int(seed), str(variant)) % 3]


def primary_order(unit_id: str, seed: int, variant: str, order: str | None) -> str:
    """The primary order of an image whose blind rows carry ``order``: the cyclic primary for a
    cyclic order, else the two-order hash order."""
    if order in CYCLIC_ORDERS:
        return cyclic_order(unit_id, seed, variant)
    return blind_order(unit_id, seed, variant)
