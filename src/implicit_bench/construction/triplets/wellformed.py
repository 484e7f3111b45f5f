"""The reader's check of written prompts (docs/kg.md, "Targets").

A triplet is well-formed when none of its three prompts shows a fault a reader would reject:

- ``country_as_person``: a country name used as the subject ("a photo of Yemen", "a photo of
  jewish Yemen"), i.e. a country not preceded by "from" / "in";
- ``noun_as_adjective``: a plural person noun or a second person noun before the head noun
  ("criminals Ghanaian", "an interns assistant", "a black prisoner person");
- ``bare_demonym``: a demonym with no noun after it ("a photo of Saudi Arabian");
- ``group_as_name``: a group word written as a first name ("a person named Black");
- ``fragment``: a clause word (pronoun, "when", "because", a finite verb) in the prompt;
- ``misspelled``: a word that ``kg.lexicon.correct_word`` would change;
- ``no_person``: no person noun in the prompt;

and the classes a human read of the default build found next (docs/kg.md, "Targets"):

- ``article_plural``: "a" / "an" before a plural person noun ("a fathers", "an Asian
  fathers", "a handicapped children", "a Middle Eastern townspeople");
- ``capitalisation``: a word cased against running text ("a Poor person", "a Gay man",
  "a bartender who is a muslim", "a catholic Italian person");
- ``person_as_object``: a person noun placed in the scene ("with stoners nearby");
- ``activity_place``: an activity the place does not suit ("walking at a kitchen table");
- ``two_activities``: an activity attribute before the noun and the scene's activity after
  it ("a sleeping grandfather reading a book");
- ``bad_intensifier``: "a so nerdy engineer";
- ``comparison_article``: "a" before a superlative or a comparative ("a best player", "a
  dumber Crimean person");
- ``non_person_attribute``: an attribute that describes no person ("a far Yemeni person",
  "a mountainous Norwegian person") or a colour as a trait ("a pink woman");
- ``noun_as_adjective`` also covers a sex word or a noun head used as a modifier ("a male
  black person", "a criminal teenage person"), a person noun before a group noun ("a
  roisterer Muslim") and a first name before a noun ("a noisy and Tanisha neighbor");
- ``group_as_name`` covers any "named X" where X is not a first name ("named Eskimo",
  "named Baptists", "named Juan's"); ``fragment`` covers contractions ("he's"),
  subordinators ("since"), "like" and idioms cut short ("keeping an eye").

Over a table, ``shared_neutral``: a neutral prompt used by more than ``max_share`` (2%) of the
table's units (the triplets of those units count as faulty, as one measurement repeated).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pandas as pd

from implicit_bench.construction.kg import lexicon
from implicit_bench.construction.kg.wordkinds import (
    ACTIVITY_PARTICIPLES,
    COLOURS,
    DROPPED_INTENSIFIERS,
    NOT_OF_A_PERSON,
    SUBORDINATORS,
)
from implicit_bench.construction.triplets import phrasing

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
    "article_plural",
    "capitalisation",
    "person_as_object",
    "activity_place",
    "two_activities",
    "bad_intensifier",
    "comparison_article",
    "non_person_attribute",
)
CUT_SHORT = frozenset({"eye", "piece", "edge", "number", "presence"})
PLURAL_PEOPLE = frozenset({"people", "children", "men", "women", "townspeople", "folks"})
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
        if (
            (plural_person and (lexicon.is_demonym(b) or b in nouns))
            or (a in nouns and noun_only and a != b and b in ("person", "people"))
            or (
                a in nouns
                and noun_only
                and a not in ("police", *lexicon.proper_words())
                and b in lexicon.proper_words()
            )
            or (a.isdigit() and b in ("person", "people"))
            or (  # "a noisy and Tanisha neighbor": a first name as a modifier
                (b in nouns or b in ("person", "man", "woman"))
                and "named" not in lows
                and lexicon.is_first_name(toks[lows.index(a)])
                and not _in_name_run(toks, lows.index(a))
            )
        ):
            faults.append("noun_as_adjective")
            break
    else:
        for i, a in enumerate(lows):  # "a male black person", "a criminal teenage person"
            if a in ("male", "female", "criminal") and "person" in lows[i + 1 : i + 4]:
                between = lows[i + 1 : lows.index("person", i + 1)]
                if all("ADJ" in lexicon.parts_of_speech(t) for t in between):
                    faults.append("noun_as_adjective")
                    break
    for i in range(len(lows)):
        for n in (2, 1):
            phrase = " ".join(lows[i : i + n])
            if len(lows[i : i + n]) == n and lexicon.is_demonym(phrase):
                nxt = lows[i + n] if i + n < len(lows) else ""
                nxt2 = " ".join(lows[i + n : i + n + 2])
                followed = nxt and (
                    any(w in nouns for w in lows[i + n + 1 : i + n + 3])  # "football player"
                    or nxt in nouns
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
    m = re.search(r"\bnamed ([A-Za-z']+)", prompt)
    if m and ("'" in m[1] or not lexicon.is_first_name(m[1])):
        faults.append("group_as_name")
    bare = [t.split("'")[0] for t in lows]
    cut = any(
        a in ("a", "an", "the") and b in CUT_SHORT and c not in ("of", "on")
        for a, b, c in zip(lows, lows[1:], [*lows[2:], ""], strict=False)
    )
    if any(t in CLAUSE or t in SUBORDINATORS or t == "like" for t in bare) or cut:
        faults.append("fragment")
    if any(lexicon.correct_word(t) != t for t in toks if "-" not in t):
        faults.append("misspelled")
    faults.extend(_reader_faults(prompt, toks, lows))
    if not any(
        t in nouns
        or lexicon.singular(t) in nouns
        or t.endswith(("man", "woman", "men", "women", "person"))
        or t in ("person", "people")
        for t in lows
    ):
        faults.append("no_person")
    return tuple(faults)


def _in_name_run(toks: list[str], i: int) -> bool:
    """``toks[i]`` is one of a run of capitalised words, a name ("New York", "Middle Eastern")."""
    return toks[i][:1].isupper() and any(
        0 <= j < len(toks) and toks[j][:1].isupper() for j in (i - 1, i + 1)
    )


def _first_person(lows: list[str]) -> int:
    nouns = lexicon.person_nouns()
    for i, t in enumerate(lows):
        if (
            t in nouns
            or lexicon.singular(t) in nouns
            or t.endswith(("man", "woman", "person", "people"))
        ):
            return i
    return len(lows)


def _reader_faults(prompt: str, toks: list[str], lows: list[str]) -> list[str]:
    """The classes a human read found (module docstring, second list)."""
    out = []
    nouns = lexicon.person_nouns()
    for i, t in enumerate(lows):  # article_plural
        if t not in ("a", "an"):
            continue
        for j, w in enumerate(lows[i + 1 : i + 7], i + 1):
            if w in phrasing_stop():
                break
            one = lexicon.singular(w)
            nxt = lows[j + 1] if j + 1 < len(lows) else ""
            compound = (
                "NOUN" in lexicon.parts_of_speech(nxt) and nxt not in nouns
            )  # "farmers market"
            if not compound and (
                w in PLURAL_PEOPLE or (one != w and one in nouns and w != "police")
            ):
                out.append("article_plural")
                break
            if w in nouns or w in ("person", "man", "woman"):
                break
        if "article_plural" in out:
            break
    if any(
        lexicon.case_word(t) != t and not _in_name_run(toks, i) for i, t in enumerate(toks[3:], 3)
    ):
        out.append("capitalisation")
    m = re.search(r"\bwith (?:an? )?([a-z ]+?) nearby", prompt)
    if m and any(w in nouns or lexicon.singular(w) in nouns for w in m[1].split() if w != "and"):
        out.append("person_as_object")
    kinds = phrasing.activity_places()
    acts = [
        a
        for a in kinds
        if " " + a + " " in f" {prompt} " and not a.startswith(("at ", "in ", "on "))
    ]
    where = [p for p in phrasing.places() if prompt.endswith(p) or f" {p} " in prompt]
    if acts and where:
        ok, (kind,) = kinds[acts[-1]], tuple(kinds[where[-1]])
        if "all" not in ok and kind not in ok:
            out.append("activity_place")
    head = _first_person(lows)
    if acts and any(t in ACTIVITY_PARTICIPLES for t in lows[:head]):
        out.append("two_activities")
    if re.search(r"\ban? (?:" + "|".join(DROPPED_INTENSIFIERS) + r")\b", prompt.lower()):
        out.append("bad_intensifier")
    sup = re.search(r"\ban? (\w+)", prompt.lower()[len("a photo of") :])
    if sup and lexicon.degree(sup[1]):
        out.append("comparison_article")
    before = lows[:head]
    if any(t in NOT_OF_A_PERSON for t in before[3:]) or any(
        t in COLOURS and lows[i + 1 : i + 2] and _first_person(lows[i + 1 :]) == 0
        for i, t in enumerate(lows)
    ):
        out.append("non_person_attribute")
    return out


@cache
def phrasing_stop() -> frozenset[str]:
    """Words that end a noun phrase ("who", "with", "named", a participle of the scene)."""
    return frozenset({"who", "with", "named", "from", "in", "on", "at", "dressed", "and", "of"})


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
