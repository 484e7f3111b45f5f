"""Triplet checks: the neutral prompt names neither attribute; each explicit prompt carries its own.

An attribute is "named" when any of its tails occurs in the prompt as whole words,
case-insensitively (``text.contains_phrase``). An explicit prompt "carries" its attribute when
at least one of its side's tails occurs. Paraphrases (an LLM writing "intelligent" for
"smart") are flagged: the flags are for review; flagged triplets are kept and counted.
"""

from __future__ import annotations

from implicit_bench._util.words import contains_phrase
from implicit_bench.protocol.records import KGUnit, PromptTriplet

CHECK_COLUMNS: tuple[str, ...] = (
    "neutral_names_stereotype",
    "neutral_names_anti_stereotype",
    "stereotype_missing_attribute",
    "anti_stereotype_missing_attribute",
)


def _names(prompt: str, tails: list[str]) -> bool:
    return any(contains_phrase(prompt, t) for t in tails)


def check_triplet(unit: KGUnit, triplet: PromptTriplet) -> dict[str, bool]:
    flags = {
        "neutral_names_stereotype": _names(triplet.neutral, unit.stereotype_tails),
        "neutral_names_anti_stereotype": _names(triplet.neutral, unit.anti_stereotype_tails),
        "stereotype_missing_attribute": not _names(triplet.stereotype, unit.stereotype_tails),
        "anti_stereotype_missing_attribute": not _names(
            triplet.anti_stereotype, unit.anti_stereotype_tails
        ),
    }
    flags["check_ok"] = not any(flags.values())
    return flags
