"""Kinds of words and phrases for offline construction (docs/kg.md, "Minimal-pair rules"):
what kind of attribute a tail is, and how a CrowS-Pairs head (the shared predicate) can be drawn.
Used by ``kg.normalise`` (relations, fragment heads) and ``triplets.phrasing`` (prompts)."""

from __future__ import annotations

from functools import cache
from importlib import resources

from implicit_bench._util.words import stop_words, words
from implicit_bench.construction.kg import lexicon

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


@cache
def _reviewed(name: str) -> frozenset[str]:
    """One ``[name]`` list of ``assets/word_lists.txt`` (reviewed lists)."""
    text = resources.files("implicit_bench.assets").joinpath("word_lists.txt").read_text("utf-8")
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = line.strip("[]")
            continue
        out.setdefault(current, []).append(line.lower())
    return frozenset(out[name])


NOT_OF_A_PERSON = _reviewed("not_of_a_person")
"""Words tagged adjective that do not describe a person ("a far Yemeni person", "a
mountainous Norwegian person") or cannot stand before a noun ("an afraid person")."""
ACTIVITY_PARTICIPLES = _reviewed("activity_participles")
"""-ing attributes that are what the person does: written after the noun and instead of the
scene's activity ("a grandfather sleeping on a park bench", not "a sleeping grandfather
reading a book on a park bench")."""
COLOURS = _reviewed("colours")
PERSON_ADJECTIVES = _reviewed("person_adjectives")
"""Colours that describe clothing, not a person: "a woman dressed in pink"."""
NOT_VISUAL = _reviewed("not_visual")
"""Nouns that name no thing a photo can show ("with weddings nearby", "with truth nearby")."""
DROPPED_INTENSIFIERS = frozenset({"so", "too", "such"})
"""Intensifiers that cannot follow "a": "a so nerdy engineer" -> "a nerdy engineer"."""
INCOMPLETE = frozenset({"eye", "piece", "edge", "number", "presence", "part", "lot", "kind"})
"""Nouns that need a complement ("keeping an eye", "fighting for a piece"): a head ending in
one is a fragment."""


FINITE = frozenset({"comes", "came", "goes", "went", "ignored", "gets", "got"})
ADJECTIVE_PARTICIPLES = frozenset({"devastating", "increasing", "amazing", "annoying"})
SUBORDINATORS = frozenset({"since", "although", "though", "while", "than", "as", "such", "just"})


def _pos(word: str) -> frozenset[str]:
    return lexicon.parts_of_speech(word)


def tail_kind(tail: str) -> str:
    """``adjective``, ``group`` (demonym / country), ``role`` (person noun), ``object``
    (concrete non-person noun), ``abstract``, or ``other``."""
    toks = words(tail)
    if not toks:
        return "other"
    last = toks[-1].lower()
    if lexicon.is_demonym(tail) or lexicon.demonym_of(tail) or lexicon.demonym_singular(tail):
        return "group"
    if last in NOT_VISUAL:
        return "abstract"
    if last in PERSON_ADJECTIVES:
        return "adjective"  # "a transgender man", not "a man who is a transgender"
    if lexicon.is_person_noun(tail):
        # a word that is also an adjective ("gay", "elderly") describes the person: "a gay person"
        return (
            "adjective"
            if "ADJ" in _pos(last)
            and lexicon.singular(last) == last
            and all(t.lower() in INTENSIFIERS or t.lower().endswith("ly") for t in toks[:-1])
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
    ``none`` (a clause or a fragment, not drawn: "surprising since he's", "keeping an eye",
    "shot like", "increasing number")."""
    toks = [t.lower() for t in words(head)]
    bare = [t.split("'")[0] for t in toks]  # "he's" -> "he"
    if (
        not toks
        or len(toks) > 6
        or any(t in CLAUSE_WORDS or t in SUBORDINATORS for t in bare)
        or toks[-1] in INCOMPLETE
        or toks[-1] in stop_words()
        or toks[-1] in PREPOSITIONS
    ):
        return "none"
    if len(toks) >= 2 and toks[0] in PREPOSITIONS:
        return "after"
    if len(toks) >= 2 and len(toks[0]) > 4 and toks[0].endswith("ing") and "VERB" in _pos(toks[0]):
        second = toks[1]
        finite = any(
            t in FINITE or (_pos(t) == frozenset({"VERB"}) and t.endswith("s")) for t in toks[1:]
        )  # "building muscle comes easy"
        adjective_noun = (
            "ADJ" in _pos(toks[0]) or toks[0] in ADJECTIVE_PARTICIPLES
        ) and second not in PREPOSITIONS
        if not finite and not adjective_noun:  # "devastating fastball", "increasing number"
            return "after"
        return "none"
    content = [t for t in toks if t not in INTENSIFIERS]
    if (
        content
        and all(
            ("ADJ" in _pos(t) or (t.endswith("ly") and len(t) > 4)) and t not in NOT_OF_A_PERSON
            for t in content
        )
        and "ADJ" in _pos(content[-1])
    ):
        return "before"
    return "none"
