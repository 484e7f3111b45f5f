"""Kinds of words and phrases for offline construction (docs/kg.md, "Minimal-pair rules"):
what kind of attribute a tail is, and how a CrowS-Pairs head (the shared predicate) can be drawn.
Used by ``kg.normalise`` (relations, fragment heads) and ``triplets.phrasing`` (prompts)."""

from __future__ import annotations

from implicit_bench.kg import lexicon
from implicit_bench.text import stop_words, words

ADJ_SUFFIXES = (
    "ed",
    "ful",
    "ous",
    "ive",
    "ic",
    "al",
    "able",
    "ible",
    "less",
    "ish",
    "ant",
    "ent",
    "y",
    "ly",
    "er",
    "est",
)
ABSTRACT_SUFFIXES = (
    "ness",
    "ity",
    "ism",
    "ment",
    "tion",
    "sion",
    "ance",
    "ence",
    "ship",
    "dom",
    "hood",
    "ty",
    "cy",
)
INTENSIFIERS = frozenset(
    {
        "very",
        "really",
        "so",
        "too",
        "quite",
        "extremely",
        "always",
        "often",
        "usually",
        "more",
        "most",
        "less",
        "not",
        "rather",
        "pretty",
        "incredibly",
        "highly",
        "well",
        "and",
        "or",
        "emotionally",
        "needlessly",
        "overly",
    }
)
REFLEXIVE = {
    "himself": "man",
    "herself": "woman",
    "male": "man",
    "female": "woman",
    "males": "man",
    "females": "woman",
}
SEX_ADJECTIVE = {
    w: "female" for w in ("woman", "women", "girl", "girls", "lady", "ladies", "female", "females")
} | {w: "male" for w in ("man", "men", "boy", "boys", "guy", "guys", "gentleman", "male", "males")}
MASS_NOUNS = frozenset(
    {
        "oil",
        "water",
        "money",
        "food",
        "trash",
        "garbage",
        "dirt",
        "sand",
        "snow",
        "grass",
        "gold",
        "rice",
        "coffee",
        "tea",
        "alcohol",
        "beer",
        "wine",
        "smoke",
        "mud",
        "fire",
        "famine",
        "war",
    }
)
PREPOSITIONS = frozenset(
    {
        "at",
        "in",
        "on",
        "with",
        "near",
        "by",
        "under",
        "inside",
        "outside",
        "behind",
        "around",
        "into",
        "during",
        "across",
        "through",
    }
)
CLAUSE_WORDS = frozenset(
    {
        "i",
        "you",
        "he",
        "she",
        "they",
        "we",
        "it",
        "him",
        "her",
        "them",
        "his",
        "their",
        "my",
        "our",
        "your",
        "its",
        "me",
        "us",
        "when",
        "because",
        "that",
        "which",
        "who",
        "if",
        "was",
        "were",
        "is",
        "are",
        "had",
        "has",
        "have",
        "did",
        "do",
        "does",
        "would",
        "could",
        "will",
        "can",
        "should",
        "be",
        "been",
        "to",
    }
)


def _pos(word: str) -> frozenset[str]:
    return lexicon.parts_of_speech(word)


def tail_kind(tail: str) -> str:
    """``adjective``, ``group`` (demonym / country), ``role`` (person noun), ``object``
    (concrete non-person noun), ``abstract``, or ``other``."""
    toks = words(tail)
    if not toks:
        return "other"
    last = toks[-1].lower()
    if lexicon.is_demonym(tail) or lexicon.demonym_of(tail):
        return "group"
    if lexicon.is_person_noun(tail):
        # a word that is also an adjective ("gay", "elderly") describes the person: "a gay person"
        return (
            "adjective"
            if len(toks) == 1 and "ADJ" in _pos(last) and lexicon.singular(last) == last
            else "role"
        )
    if any(t.lower() in CLAUSE_WORDS or t.lower() in stop_words() - INTENSIFIERS for t in toks):
        return "other"
    pos = _pos(last)
    if "VERB" in pos and last.endswith(("ing", "ed")) and "NOUN" not in pos:
        return "adjective"  # a participle: "caring", "organized"
    if "ADJ" in pos or (not pos and last.endswith(ADJ_SUFFIXES)) or "-" in last:
        return "adjective"
    if "NOUN" in pos or "PROPN" in pos or (not pos and last.endswith("s")):
        if last.endswith(ABSTRACT_SUFFIXES) or "VERB" in pos:
            return "abstract"
        return "object"
    if not pos and toks[-1][:1].isupper():
        return "group"  # a capitalised word the lexicon lacks: a group name ("Amish")
    return "other"


def crows_head_form(head: str) -> str:
    """How a CrowS-Pairs head (the shared predicate) enters the prompt: ``before`` (adjectival:
    "fast and athletic"), ``after`` (participle / prepositional: "sitting on a couch"), or
    ``none`` (a clause, not drawn)."""
    toks = [t.lower() for t in words(head)]
    if not toks or len(toks) > 6 or any(t in CLAUSE_WORDS for t in toks):
        return "none"
    if len(toks) >= 2 and (
        toks[0].endswith("ing") and "VERB" in _pos(toks[0]) or toks[0] in PREPOSITIONS
    ):
        return "after"
    content = [t for t in toks if t not in INTENSIFIERS]
    if (
        content
        and all("ADJ" in _pos(t) or (t.endswith("ly") and len(t) > 4) for t in content)
        and "ADJ" in _pos(content[-1])
    ):
        return "before"
    return "none"
