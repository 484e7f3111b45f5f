"""The template writer: the subject-only arm of paper Appendix C.1 (no model).

- neutral: ``neutral`` with ``{subject}`` = the head ("a photo of {subject}" by default, the
  paper's "a photo of h");
- explicit: the same template with ``{subject}`` = ``explicit_subject`` filled with
  ``{attribute}`` (the side's tails joined with " and ") and ``{head}``: by default
  "{attribute} {head}", e.g. "a photo of a smart chess player".
- ``article: auto`` puts "a" / "an" (by the first letter of the subject) in front of the subject
  when the head looks like one singular common noun phrase: 1-3 words, none a stop word, first
  letter lower case, last word not ending in "s" ("chess player" -> "a chess player";
  "Ethiopian", "chess players", "fast and athletic" get none). ``article: none`` never adds one.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd

from implicit_bench.params import StrictModel
from implicit_bench.records import KGUnit, PromptTriplet
from implicit_bench.text import stop_words, words
from implicit_bench.triplets.base import WriteResult


class TemplateWriterParams(StrictModel):
    neutral: str = "a photo of {subject}"
    explicit_subject: str = "{attribute} {head}"
    article: Literal["auto", "none"] = "auto"


def takes_article(head: str) -> bool:
    tokens = words(head)
    stops = stop_words()
    return (
        1 <= len(tokens) <= 3
        and head[:1].islower()
        and not any(t.lower() in stops for t in tokens)
        and not tokens[-1].lower().endswith("s")
    )


def _with_article(subject: str) -> str:
    return ("an " if subject[:1].lower() in "aeiou" else "a ") + subject


def write_one(unit: KGUnit, params: TemplateWriterParams) -> PromptTriplet:
    article = params.article == "auto" and takes_article(unit.head)

    def prompt(subject: str) -> str:
        return params.neutral.format(subject=_with_article(subject) if article else subject)

    def explicit(tails: list[str]) -> str:
        return prompt(params.explicit_subject.format(attribute=" and ".join(tails), head=unit.head))

    return PromptTriplet(
        unit_id=unit.unit_id,
        neutral=prompt(unit.head),
        stereotype=explicit(unit.stereotype_tails),
        anti_stereotype=explicit(unit.anti_stereotype_tails),
        writer="template",
    )


def write(units: list[KGUnit], pairs: pd.DataFrame | None, params: dict[str, Any]) -> list[WriteResult]:
    config = TemplateWriterParams.model_validate(params or {})
    return [WriteResult(u.unit_id, write_one(u, config)) for u in units]
