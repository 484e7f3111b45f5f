"""Person subjects and scenes for the template writer (docs/kg.md, "Minimal-pair rules").

A prompt's subject is always a person. From the unit:

- the head as a person: a country becomes its demonym ("Yemen" -> "a Yemeni person"), a demonym
  gets a noun ("Saudi Arabian" -> "a Saudi Arabian person"), a person noun stays ("a chess
  player"), a reflexive or sex word becomes "a man" / "a woman"; a head that names no person
  ("Bible") is rejected (``head_not_a_person``);
- each side's tails by kind: an adjective goes before the noun ("a friendly Norwegian person");
  a person noun becomes the role ("a Ghanaian criminal"; on a head that is already a person
  noun: "an assistant who is an intern"); a concrete non-person noun ("oil", "sweatshops")
  becomes part of the scene ("..., with sweatshops in the background"); an abstract noun, a
  verb or a function word is rejected (``attribute_not_visual``, ``attribute_not_a_word``);
- CrowS-Pairs (the contrast is the group, the head the shared predicate): the group is the
  subject (``template.person_subject``), an adjectival head goes before it ("a fast and
  athletic person named Jerome"), a participle or prepositional head after it ("a teenager
  sitting on a couch"); any other head is a clause and is not drawn;
- the scene: a CrowS-Pairs head that is a participle or prepositional phrase is the scene;
  otherwise one of ``assets/scenes.txt`` (everyday settings that name no group or attribute),
  chosen per unit by a hash of its id, skipping scenes that share a word with the unit's
  attributes and, where possible, scenes that would repeat another unit's neutral prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

from implicit_bench._util.hashing import derive_seed
from implicit_bench._util.words import stop_words, words
from implicit_bench.construction.kg import lexicon
from implicit_bench.construction.kg.wordkinds import (  # noqa: F401 - crows_head_form, tail_kind re-exported
    ACTIVITY_PARTICIPLES,
    COLOURS,
    DROPPED_INTENSIFIERS,
    INTENSIFIERS,
    MASS_NOUNS,
    NOT_OF_A_PERSON,
    REFLEXIVE,
    SEX_ADJECTIVE,
    crows_head_form,
    tail_kind,
)
from implicit_bench.protocol.records import KGUnit

HEDGES = frozenset({"also", "usually", "always", "often", "probably", "maybe", "mostly", "mainly"})
"""Adverbs dropped before a noun: "probably peaceful Muslims" -> "a peaceful Muslim"."""


class Rejected(Exception):  # noqa: N818 - a reason, not an error
    """The unit cannot be written as prompts about a person; ``reason`` is counted."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Subject:
    """A person noun phrase: determiner, pre-modifiers, noun, post-modifier."""

    noun: str
    adjectives: tuple[str, ...] = ()
    plural: bool = False
    post: str = ""
    doing: str = ""  # an activity attribute ("sleeping"): the scene is then a place only

    def render(self) -> str:
        core = " ".join([*self.adjectives, self.noun])
        if not self.plural:
            first = core.split()[0].lower()
            superlative = lexicon.degree(first) == "superlative"  # "the best player"
            core = f"the {core}" if superlative else lexicon.with_article(core)
        return " ".join(x for x in (core, self.doing, self.post) if x)


def _lines(name: str) -> tuple[str, ...]:
    text = resources.files("implicit_bench.assets").joinpath(name).read_text(encoding="utf-8")
    return tuple(s.strip() for s in text.splitlines() if s.strip() and not s.startswith("#"))


def _columns(name: str) -> list[tuple[str, set[str]]]:
    out = []
    for line in _lines(name):
        text, _, kinds = line.partition("\t")
        out.append((text.strip(), set(kinds.split()) or {"all"}))
    return out


@cache
def places() -> tuple[str, ...]:
    """Every place of ``assets/scenes.txt`` ("at a bus stop")."""
    return tuple(p for p, _ in _columns("scenes.txt"))


@cache
def scenes() -> tuple[str, ...]:
    """Every scene: an activity of ``assets/activities.txt`` at a place of ``assets/scenes.txt``
    whose kind suits it (no "walking at a kitchen table")."""
    acts, where = _columns("activities.txt"), _columns("scenes.txt")
    return tuple(f"{a} {p}" for a, ok in acts for p, kinds in where if "all" in ok or kinds & ok)


@cache
def activity_places() -> dict[str, set[str]]:
    """Activity -> the kinds of place it suits; place -> ``{kind}`` (for the checker)."""
    out = {a: ok for a, ok in _columns("activities.txt")}
    out.update({p: kinds for p, kinds in _columns("scenes.txt")})
    return out


def head_subject(head: str) -> Subject:
    """The person a StereoSet target names (see the module docstring)."""
    text = head.strip()
    low = text.lower()
    if low in REFLEXIVE:
        return Subject(REFLEXIVE[low])
    demonym = lexicon.demonym_of(text)
    if demonym:
        return Subject("person", (demonym,))
    if low.endswith(" people") and lexicon.is_demonym(text[: -len(" people")]):
        return Subject("person", (text[: -len(" people")],))
    if lexicon.is_demonym(text):
        return Subject("person", (text,))
    if low in ("people", "persons", "folks", "individuals"):
        return Subject("person")
    if lexicon.is_person_noun(text):
        toks = text.split()
        return Subject(" ".join([*toks[:-1], singular_person(toks[-1])]))
    raise Rejected("head_not_a_person", text)


def singular_person(word: str) -> str:
    """One person of a person noun: "fathers" -> "father", "children" -> "child",
    "townspeople" -> "townsperson", "gentlemen" -> "gentleman", "police" -> "police officer"."""
    low = word.lower()
    if low == "police":
        return "police officer"
    if low.endswith("people"):
        return word[: -len("people")] + "person"
    if low.endswith("women"):
        return word[:-5] + "woman"
    if low.endswith("men") and low not in ("semen",):
        return word[:-3] + "man"
    one = lexicon.singular(word)
    return word if one.lower() == low else lexicon.case_word(one)


def explicit_subject(base: Subject, tails: list[str]) -> Subject:
    """``base`` with one side's tails (see the module docstring)."""
    adjectives: list[str] = []
    roles: list[str] = []
    objects: list[str] = []
    doing: list[str] = []
    colours: list[str] = []
    names: list[str] = []
    for tail in tails:
        tail = " ".join(t for t in tail.split() if t.lower() not in DROPPED_INTENSIFIERS) or tail
        tail = re.sub(r"^(looked|looks|looking)\s+(?!like)", "", tail)  # "looked scruffy"
        tail = " ".join(lexicon.base_adjective(w) for w in lexicon.case_text(tail).split())
        kind = tail_kind(tail)
        low = tail.lower()
        if any(w in NOT_OF_A_PERSON for w in low.split()):
            raise Rejected("attribute_not_of_a_person", tail)
        if low in ACTIVITY_PARTICIPLES:
            doing.append(low)
        elif low in COLOURS:
            colours.append(low)
        elif lexicon.is_first_name(tail):  # "James" / "Samuel" -> "a tailor named Samuel"
            names.append(tail)
        elif kind in ("adjective", "group"):
            adjectives.append(lexicon.demonym_of(tail) or lexicon.demonym_singular(tail) or tail)
        elif (
            kind == "role"
            and base.noun != "person"
            and lexicon.singular(low) in lexicon.proper_words()
            and lexicon.singular(low) != "jew"
        ):  # "a Muslim bartender", "a Christian man"
            adjectives.append(lexicon.proper_words()[lexicon.singular(low)])
        elif kind == "role" and base.noun != "person" and tail.lower() in SEX_ADJECTIVE:
            adjectives.append(
                SEX_ADJECTIVE[tail.lower()]
            )  # "a female doctor", not "a doctor who is a woman"
        elif kind == "role":
            toks = [t for t in tail.split() if t.lower() not in INTENSIFIERS | HEDGES]
            noun = singular_person(toks[-1])
            noun = "person" if noun.lower() in ("people", "persons") else noun
            if lexicon.is_demonym(noun):  # "White Americans" -> "a White American person"
                adjectives.append(" ".join([*toks[:-1], noun]))
                continue
            if base.noun != "person" or len(roles):
                roles.append(" ".join([*toks[:-1], noun]))
            else:  # "loud man" on "a Ukrainian person": "a loud Ukrainian man"
                if toks[:-1]:
                    adjectives.append(" ".join(toks[:-1]))
                roles.append(noun)
        elif kind == "object":
            objects.append(tail)
        elif kind == "abstract":
            raise Rejected("attribute_not_visual", tail)
        else:
            raise Rejected("attribute_not_a_word", tail)
    out = base
    if adjectives:
        adjectives = [
            " ".join(t for t in a.split() if t.lower() not in HEDGES) or a for a in adjectives
        ]
        items = [x.strip() for a in adjectives for x in a.split(" and ") if x.strip()]
        joined = (
            items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
        )  # "black, tall and shy"
        out = replace(out, adjectives=(joined, *out.adjectives))
    if roles:
        role = " and ".join(roles)
        if out.noun == "person":
            out = replace(out, noun=role)
        else:
            out = replace(out, post=f"who is {lexicon.with_article(role)}")
    if names:
        out = replace(out, post=f"{out.post} named {' and '.join(names)}".strip())
    if doing:
        out = replace(out, doing=" and ".join(doing))
    if colours:
        dressed = f"dressed in {' and '.join(colours)}"
        out = replace(out, post=f"{out.post} {dressed}".strip())
    if objects:
        thing = " and ".join(
            o if o.lower() in MASS_NOUNS or o.lower().endswith("s") else lexicon.with_article(o)
            for o in objects
        )
        out = replace(out, post=(out.post + ", " if out.post else "") + f"with {thing} nearby")
    return out


def pick_scene(  # type: ignore[valid-type]
    unit: KGUnit, seed: int, taken: set[str], prompt_of: callable, place_only: bool = False
) -> str:
    """A scene from the bank for ``unit``: hashed start, no word shared with its attributes,
    the first whose neutral prompt (``prompt_of(scene)``) is not ``taken``; a place without an
    activity when ``place_only`` (an attribute is itself an activity: "sleeping")."""
    bank = places() if place_only else scenes()
    banned = {
        w.lower()
        for t in unit.stereotype_tails + unit.anti_stereotype_tails + [unit.head]
        for w in words(t)
    } - stop_words()
    start = derive_seed(seed, unit.unit_id) % len(bank)
    words_of = _place_words() if place_only else _scene_words()
    fallback = None
    for k in range(len(bank)):
        i = (start + k) % len(bank)
        if words_of[i] & banned:
            continue
        if prompt_of(bank[i]) not in taken:
            return bank[i]
        fallback = fallback or bank[i]
    return fallback or bank[start]


@cache
def _scene_words() -> tuple[frozenset[str], ...]:
    return tuple(frozenset(re.findall(r"[a-z]+", s.lower())) for s in scenes())


@cache
def _place_words() -> tuple[frozenset[str], ...]:
    return tuple(frozenset(re.findall(r"[a-z]+", s.lower())) for s in places())
