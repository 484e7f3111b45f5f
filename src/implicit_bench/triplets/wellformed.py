"""The reader's check of written prompts (issue 25; docs/kg.md, "Targets").

A triplet is well-formed when none of its three prompts shows a fault a reader would reject:

- ``country_as_person``: a country name used as the subject ("a photo of Yemen", "a photo of
  jewish Yemen"), i.e. a country not preceded by "from" / "in";
- ``noun_as_adjective``: a plural person noun or a second person noun before the head noun
  ("criminals Ghanaian", "an interns assistant", "a black prisoner person");
- ``bare_demonym``: a demonym with no noun after it ("a photo of Saudi Arabian");
- ``group_as_name``: a group word written as a first name ("a person named Black");
- ``fragment``: a clause word (pronoun, "when", "because", a finite verb) in the prompt;
- ``misspelled``: a word that ``kg.lexicon.correct_word`` would change;
- ``no_person``: no person noun in the prompt.

Over a table, ``shared_neutral``: a neutral prompt used by more than ``max_share`` (2%) of the
table's units (the triplets of those units count as faulty, as one measurement repeated).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pandas as pd

from implicit_bench.kg import lexicon

CLAUSE = frozenset(
    {
        "i",
        "you",
        "he",
        "she",
        "they",
        "we",
        "him",
        "her",
        "them",
        "his",
        "their",
        "my",
        "our",
        "your",
        "me",
        "us",
        "when",
        "because",
        "if",
        "was",
        "were",
        "is",
        "are",
        "had",
        "has",
        "did",
        "does",
        "would",
        "could",
        "will",
        "should",
    }
)
FAULTS = (
    "country_as_person",
    "noun_as_adjective",
    "bare_demonym",
    "group_as_name",
    "fragment",
    "misspelled",
    "no_person",
)
TOKEN = re.compile(r"[A-Za-z]+(?:[-'][A-Za-z]+)*")


@cache
def _country_pattern() -> re.Pattern[str]:
    names = sorted(lexicon.countries(), key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b")


@cache
def prompt_faults(prompt: str) -> tuple[str, ...]:
    """The faults (``FAULTS``) of one prompt."""
    faults = []
    prompt = re.sub(
        r"\bwho is (a|an)\b", r"\1", prompt
    )  # a relative clause on a role is not a fragment
    low = prompt.lower()
    toks = TOKEN.findall(prompt)
    lows = [t.lower() for t in toks]
    for m in _country_pattern().finditer(low):
        name = m.group(0)
        if (
            not re.search(r"\b(from|in|of the people of)\s+$", low[: m.start()])
            and not re.search(rf"\b{re.escape(name)}\s+(person|people|man|woman)", low)
            and not lexicon.is_demonym(name)
        ):
            faults.append("country_as_person")
            break
    nouns = lexicon.person_nouns()
    for a, b in zip(lows, lows[1:], strict=False):
        plural_person = (
            a.endswith("s")
            and lexicon.singular(a) != a
            and lexicon.singular(a) in nouns
            and a not in ("people",)
        )
        noun_only = "ADJ" not in lexicon.parts_of_speech(a) and not lexicon.is_demonym(a)
        if (plural_person and (lexicon.is_demonym(b) or b in nouns)) or (
            a in nouns and noun_only and a != b and b in ("person", "people")
        ):
            faults.append("noun_as_adjective")
            break
    for i in range(len(lows)):
        for n in (2, 1):
            phrase = " ".join(lows[i : i + n])
            if len(lows[i : i + n]) == n and lexicon.is_demonym(phrase):
                nxt = lows[i + n] if i + n < len(lows) else ""
                nxt2 = " ".join(lows[i + n : i + n + 2])
                followed = nxt and (
                    nxt in nouns
                    or lexicon.singular(nxt) in nouns
                    or lexicon.is_demonym(f"{phrase} {nxt}")
                    or lexicon.is_demonym(nxt)
                    or lexicon.is_demonym(nxt2)
                    or nxt == "and"
                    or nxt in ("person", "people")
                )
                if not followed and not (
                    n == 1 and i > 0 and lexicon.is_demonym(f"{lows[i - 1]} {phrase}")
                ):
                    faults.append("bare_demonym")
                break
        if "bare_demonym" in faults:
            break
    m = re.search(r"\bnamed ([A-Za-z]+)", prompt)
    if m and (
        lexicon.is_demonym(m[1])
        or lexicon.is_person_noun(m[1])
        or lexicon.parts_of_speech(m[1].lower())
    ):
        faults.append("group_as_name")
    if any(t in CLAUSE for t in lows):
        faults.append("fragment")
    if any(lexicon.correct_word(t) != t for t in toks if "-" not in t):
        faults.append("misspelled")
    if not any(
        t in nouns
        or lexicon.singular(t) in nouns
        or t.endswith(("man", "woman", "men", "women"))
        or t in ("person", "people")
        for t in lows
    ):
        faults.append("no_person")
    return tuple(faults)


def check_table(table: pd.DataFrame, max_share: float = 0.02) -> dict[str, Any]:
    """Fault counts and the well-formed share of ``table`` (triplets or the subset)."""
    n = len(table)
    if not n:
        return {"triplets": 0}
    counts = dict.fromkeys((*FAULTS, "shared_neutral"), 0)
    ok = 0
    shares = table["prompt_neutral"].value_counts()
    shared = set(shares[shares > max_share * n].index)
    for row in table.itertuples(index=False):
        faults = set()
        for col in ("prompt_neutral", "prompt_stereotype", "prompt_anti_stereotype"):
            faults.update(prompt_faults(str(getattr(row, col))))
        if row.prompt_neutral in shared:
            faults.add("shared_neutral")
        for f in faults:
            counts[f] += 1
        ok += not faults
    return {
        "triplets": n,
        "well_formed": ok,
        "well_formed_pct": round(100 * ok / n, 2),
        "faults": counts,
        "max_neutral_share_pct": round(100 * int(shares.iloc[0]) / n, 2),
        "most_shared_neutral": str(shares.index[0]),
        "neutral_prompts_over_max_share": len(shared),
        "max_share_pct": 100 * max_share,
    }
