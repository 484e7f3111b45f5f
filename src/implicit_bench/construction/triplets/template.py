"""The template writer: the subject-only arm of paper Appendix C.1 (no model).

- neutral: ``neutral`` with ``{subject}`` = the head ("a photo of {subject}" by default, the
  paper's "a photo of h");
- explicit: the same template with ``{subject}`` = ``explicit_subject`` filled with
  ``{attribute}`` (the side's tails joined with " and ") and ``{head}``: by default
  "{attribute} {head}", e.g. "a photo of a smart chess player".
- ``article: auto`` puts "a" / "an" (by the first letter of the subject) in front of the subject
  when the head looks like one singular common noun phrase: 1-3 words, none a stop word, first
  letter lower case, last word not ending in "s" and not an irregular plural ("chess player" ->
  "a chess player"; "Ethiopian", "chess players", "people", "fast and athletic" get none), or
  when it starts with a singular person noun ("man standing at a party" -> "a man standing at a
  party"). ``article: none`` never adds one.
- ``predicate_heads: person`` (default): a CrowS-Pairs unit whose head is the shared predicate
  rather than a subject ("move very fast", from "She couldn't move very fast being so
  [crippled]") gets a person subject built from its tails instead of "a photo of move very
  fast": neutral "a person"; an adjective tail -> "a crippled person" / "an abled person"; a
  person-noun tail -> "a teenager" / "an elderly person"; a gendered word or pronoun (she / he,
  her / his, woman / man) -> "a woman" / "a man"; a first name (capitalised, not a demonym) ->
  "a person named Jerome". ``keep`` writes the head as it is. The KG head itself is unchanged
  (paper Table 2: h = "fast and athletic"); only the prompt's subject is.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Literal

import pandas as pd

from implicit_bench._util.words import stop_words, words
from implicit_bench.construction.kg import lexicon
from implicit_bench.construction.triplets import phrasing
from implicit_bench.construction.triplets.base import WriteResult
from implicit_bench.params import StrictModel
from implicit_bench.protocol.records import KGUnit, PromptTriplet


class TemplateWriterParams(StrictModel):
    neutral: str = "a photo of {subject}"
    explicit_subject: str = "{attribute} {head}"
    article: Literal["auto", "none"] = "auto"
    predicate_heads: Literal["person", "keep"] = "person"
    scene_seed: int = (
        0  # picks each unit's scene from assets/scenes.txt (person mode; triplets/phrasing.py)
    )


SINGULAR_PERSONS = frozenset(
    [
        "man",
        "woman",
        "person",
        "boy",
        "girl",
        "kid",
        "child",
        "guy",
        "lady",
        "gentleman",
        "teenager",
        "teen",
        "baby",
        "father",
        "mother",
        "dad",
        "mom",
        "mommy",
        "daddy",
        "son",
        "daughter",
        "brother",
        "sister",
        "husband",
        "wife",
        "uncle",
        "aunt",
        "grandfather",
        "grandmother",
        "friend",
        "neighbor",
        "neighbour",
        "student",
        "teacher",
        "doctor",
        "nurse",
        "worker",
        "employee",
        "boss",
        "family",
        "parent",
        "couple",
        "male",
        "female",
        "adult",
        "elder",
        "individual",
        "player",
        "driver",
        "officer",
        "cop",
        "customer",
        "patient",
        "stranger",
        "citizen",
        "immigrant",
        "foreigner",
        "native",
        "resident",
        "member",
        "nanny",
        "maid",
        "housekeeper",
        "janitor",
    ]
)
PLURAL_PERSONS = frozenset(
    [
        "people",
        "men",
        "women",
        "persons",
        "boys",
        "girls",
        "kids",
        "children",
        "guys",
        "ladies",
        "gentlemen",
        "teenagers",
        "teens",
        "babies",
        "fathers",
        "mothers",
        "parents",
        "sons",
        "daughters",
        "brothers",
        "sisters",
        "friends",
        "neighbors",
        "neighbours",
        "students",
        "teachers",
        "doctors",
        "nurses",
        "workers",
        "employees",
        "families",
        "couples",
        "males",
        "females",
        "adults",
        "elders",
        "individuals",
        "players",
        "drivers",
        "officers",
        "cops",
        "customers",
        "patients",
        "strangers",
        "citizens",
        "immigrants",
        "foreigners",
        "natives",
        "residents",
        "members",
        "folks",
        "americans",
        "police",
    ]
)
FEMALE = frozenset(
    [
        "she",
        "her",
        "hers",
        "herself",
        "woman",
        "women",
        "girl",
        "girls",
        "lady",
        "ladies",
        "female",
        "mother",
        "mom",
        "wife",
        "daughter",
        "sister",
    ]
)
MALE = frozenset(
    [
        "he",
        "him",
        "his",
        "himself",
        "man",
        "men",
        "boy",
        "boys",
        "guy",
        "guys",
        "gentleman",
        "male",
        "father",
        "dad",
        "husband",
        "son",
        "brother",
    ]
)
DEMONYM_SUFFIXES = ("ian", "ese", "ish", "can", "ean", "ban", "man", "i", "ic")
PREPOSITIONS = frozenset(
    [
        "at",
        "in",
        "on",
        "with",
        "from",
        "near",
        "of",
        "by",
        "under",
        "over",
        "inside",
        "outside",
        "behind",
        "around",
        "for",
        "into",
    ]
)


def takes_article(head: str) -> bool:
    tokens = words(head)
    stops = stop_words()
    if tokens and tokens[0].lower() in SINGULAR_PERSONS and head[:1].islower():
        return True  # "man standing at a party near a window"
    return (
        1 <= len(tokens) <= 3
        and head[:1].islower()
        and not any(t.lower() in stops for t in tokens)
        and not tokens[-1].lower().endswith("s")
        and tokens[-1].lower() not in PLURAL_PERSONS
    )


def _with_article(subject: str) -> str:
    return lexicon.with_article(subject)


def is_predicate_head(unit: KGUnit) -> bool:
    """A CrowS-Pairs head that is the shared predicate, not a subject ("move very fast")."""
    first = (words(unit.head) or [""])[0].lower()
    return (
        unit.construction_mode == "identity_instantiation"
        and first not in SINGULAR_PERSONS | PLURAL_PERSONS
    )


def _is_name(token: str) -> bool:
    """A first name (gender-guesser's dictionary; ``kg.lexicon.is_first_name``)."""
    return lexicon.is_first_name(token)


def person_subject(tails: list[str], bias_type: str | None = None) -> str:
    """A person noun phrase for one side's tails (see the module docstring)."""
    tails = [re.sub(r"'s$", "", t) for t in tails]  # "prostitute's" -> "prostitute"
    tails = [lexicon.demonym_of(t) or lexicon.case_text(t) for t in tails]  # "Russia" -> "Russian"
    toks = [w for t in tails for w in words(t)]
    lowered = [w.lower() for w in toks]
    if lowered and all(w in FEMALE for w in lowered):
        return "a woman"
    if lowered and all(w in MALE for w in lowered):
        return "a man"
    content = [w for w in toks if w.lower() not in FEMALE | MALE]  # "Ryan" and "he" / "him"
    if 1 <= len(content) <= 2 and all(_is_name(w) for w in content) and len(toks) <= 3:
        return f"a person named {' '.join(content)}"
    if len(tails) > 2:
        raise phrasing.Rejected("too_many_differences", " / ".join(tails))
    if (
        len(tails) == 1
        and len(lowered) >= 3
        and lexicon.is_person_noun(lowered[0])
        and lowered[1] in PREPOSITIONS
    ):  # "Minors under 18" -> "a minor under 18"
        rest = " ".join(toks[1:])
        return lexicon.with_article(f"{phrasing.singular_person(lowered[0])} {rest}")
    return phrasing.explicit_subject(phrasing.Subject("person"), tails).render()


def subject_head(head: str) -> str:
    """A person-noun head without its predicate: "people like to talk on the phone" -> "people";
    a participle or a preposition after the noun stays ("man standing at a party near a window")."""
    toks = words(head)
    if len(toks) > 1 and toks[0].lower() in SINGULAR_PERSONS | PLURAL_PERSONS:
        second = toks[1].lower()
        if not (second.endswith("ing") or second in PREPOSITIONS):
            return toks[0]
    return head


def write_one(unit: KGUnit, params: TemplateWriterParams) -> PromptTriplet:
    if params.predicate_heads == "person" and is_predicate_head(unit):
        return PromptTriplet(
            unit_id=unit.unit_id,
            neutral=params.neutral.format(subject="a person"),
            stereotype=params.neutral.format(
                subject=person_subject(unit.stereotype_tails, unit.bias_type)
            ),
            anti_stereotype=params.neutral.format(
                subject=person_subject(unit.anti_stereotype_tails, unit.bias_type)
            ),
            writer="template",
        )
    head = (
        subject_head(unit.head)
        if params.predicate_heads == "person" and unit.construction_mode == "identity_instantiation"
        else unit.head
    )
    article = params.article == "auto" and takes_article(head)

    def prompt(subject: str) -> str:
        return params.neutral.format(subject=_with_article(subject) if article else subject)

    def explicit(tails: list[str]) -> str:
        return prompt(params.explicit_subject.format(attribute=" and ".join(tails), head=head))

    return PromptTriplet(
        unit_id=unit.unit_id,
        neutral=prompt(head),
        stereotype=explicit(unit.stereotype_tails),
        anti_stereotype=explicit(unit.anti_stereotype_tails),
        writer="template",
    )


def write_person(unit: KGUnit, params: TemplateWriterParams, taken: set[str]) -> PromptTriplet:
    """The three prompts of ``unit`` with a person subject and one scene (triplets/phrasing.py);
    raises ``phrasing.Rejected`` with the reason when the unit cannot be written so."""
    unit = unit.model_copy(
        update={
            "stereotype_tails": [lexicon.case_text(t) for t in unit.stereotype_tails],
            "anti_stereotype_tails": [lexicon.case_text(t) for t in unit.anti_stereotype_tails],
        }
    )
    if unit.construction_mode == "identity_instantiation" and unit.source != "stereoset":
        form = phrasing.crows_head_form(unit.head)
        if (
            len(words(unit.head)) == 1
            and unit.head[:1].islower()
            and (lexicon.is_person_noun(unit.head) or unit.head.lower() in phrasing.REFLEXIVE)
        ):
            form = "none"  # "male", "criminal": the person, not a trait ("a black man")
        s_subject = person_subject(unit.stereotype_tails, unit.bias_type)
        a_subject = person_subject(unit.anti_stereotype_tails, unit.bias_type)
        for tails in (unit.stereotype_tails, unit.anti_stereotype_tails):
            for t in tails:
                kind = (
                    "name"
                    if _is_name(t) or t.lower() in FEMALE | MALE
                    else phrasing.tail_kind(re.sub(r"'s$", "", t))
                )
                if kind == "other":
                    raise phrasing.Rejected("attribute_not_a_word", " / ".join(tails))
                if kind in ("object", "abstract"):
                    raise phrasing.Rejected("group_not_a_person", " / ".join(tails))
        if (
            form == "none"
            and (lexicon.is_person_noun(unit.head) or unit.head.lower() in phrasing.REFLEXIVE)
            and unit.head[:1].islower()
        ):
            return _crows_person_head(unit, params, taken)
        if s_subject == a_subject:
            raise phrasing.Rejected("no_contrast", s_subject)

        def crows(subject: str, neutral: bool) -> str:
            if form == "before":
                article, _, rest = subject.partition(" ")
                if article in ("a", "an"):
                    core = f"{unit.head} {rest}"
                    return ("an " if core[:1].lower() in "aeiou" else "a ") + core
                return f"{unit.head} {subject}"
            return subject

        base_neutral = crows("a person", True)
        if form == "after":
            scene = unit.head
        else:
            scene = phrasing.pick_scene(
                unit,
                params.scene_seed,
                taken,
                lambda sc: params.neutral.format(subject=f"{base_neutral} {sc}"),
            )
        neutral = params.neutral.format(subject=f"{base_neutral} {scene}")
        return PromptTriplet(
            unit_id=unit.unit_id,
            neutral=neutral,
            stereotype=params.neutral.format(subject=f"{crows(s_subject, False)} {scene}"),
            anti_stereotype=params.neutral.format(subject=f"{crows(a_subject, False)} {scene}"),
            writer="template",
        )
    base = phrasing.head_subject(unit.head)
    s_subj = phrasing.explicit_subject(base, unit.stereotype_tails)
    a_subj = phrasing.explicit_subject(base, unit.anti_stereotype_tails)
    if s_subj.render() == a_subj.render():
        raise phrasing.Rejected("no_contrast", s_subj.render())

    def with_scene(subject: phrasing.Subject, scene: str) -> str:
        text = subject.render()
        if "," in subject.post or subject.post.startswith(
            "with "
        ):  # "..., with oil nearby": scene first
            core = replace(subject, post="").render()
            return params.neutral.format(
                subject=f"{core} {scene}{' ' + subject.post if subject.post else ''}"
            )
        return params.neutral.format(subject=f"{text} {scene}")

    place_only = bool(s_subj.doing or a_subj.doing)  # "a grandfather sleeping on a park bench"
    scene = phrasing.pick_scene(
        unit, params.scene_seed, taken, lambda sc: with_scene(base, sc), place_only
    )
    return PromptTriplet(
        unit_id=unit.unit_id,
        neutral=with_scene(base, scene),
        stereotype=with_scene(s_subj, scene),
        anti_stereotype=with_scene(a_subj, scene),
        writer="template",
    )


def _side_subject(base: phrasing.Subject, tails: list[str], bias_type: str) -> phrasing.Subject:
    """One side of a CrowS-Pairs unit whose head is a person noun ("student"): names -> "a
    student named Jerome", sex words -> "a female student" ("a woman" for man / woman heads),
    other tails as in ``phrasing.explicit_subject`` ("a Black student")."""
    toks = [w for t in tails for w in words(t)]
    lowered = [w.lower() for w in toks]
    gendered = base.noun.lower() in FEMALE | MALE | {"person", "people"}
    if lowered and all(w in FEMALE for w in lowered):
        return (
            phrasing.Subject("woman")
            if gendered
            else replace(base, adjectives=("female", *base.adjectives))
        )
    if lowered and all(w in MALE for w in lowered):
        return (
            phrasing.Subject("man")
            if gendered
            else replace(base, adjectives=("male", *base.adjectives))
        )
    content = [re.sub(r"'s$", "", w) for w in toks if w.lower() not in FEMALE | MALE]
    if 1 <= len(content) <= 2 and all(_is_name(w) for w in content):
        return replace(base, post=f"named {' '.join(content)}")
    names = [t for t in tails if _is_name(re.sub(r"'s$", "", t))]
    if names and len(names) < len(tails):  # "noisy", "Tanisha" -> "a noisy neighbor named Tanisha"
        rest = [t for t in tails if t not in names]
        named = " ".join(re.sub(r"'s$", "", n) for n in names)
        return replace(phrasing.explicit_subject(base, rest), post=f"named {named}")
    if len(tails) > 2:
        raise phrasing.Rejected("too_many_differences", " / ".join(tails))
    return phrasing.explicit_subject(base, [re.sub(r"'s$", "", t) for t in tails])


def _crows_person_head(
    unit: KGUnit, params: TemplateWriterParams, taken: set[str]
) -> PromptTriplet:
    base = phrasing.head_subject(unit.head)
    s_subj = _side_subject(base, unit.stereotype_tails, unit.bias_type)
    a_subj = _side_subject(base, unit.anti_stereotype_tails, unit.bias_type)
    if s_subj.render() == a_subj.render():
        raise phrasing.Rejected("no_contrast", s_subj.render())

    def prompt(subject: phrasing.Subject, scene: str) -> str:
        if subject.post:
            return params.neutral.format(subject=f"{subject.render()} {scene}")
        return params.neutral.format(subject=f"{subject.render()} {scene}")

    scene = phrasing.pick_scene(unit, params.scene_seed, taken, lambda sc: prompt(base, sc))
    return PromptTriplet(
        unit_id=unit.unit_id,
        neutral=prompt(base, scene),
        stereotype=prompt(s_subj, scene),
        anti_stereotype=prompt(a_subj, scene),
        writer="template",
    )


def write(
    units: list[KGUnit], pairs: pd.DataFrame | None, params: dict[str, Any]
) -> list[WriteResult]:
    config = TemplateWriterParams.model_validate(params or {})
    if config.predicate_heads != "person":
        return [WriteResult(u.unit_id, write_one(u, config)) for u in units]
    taken: set[str] = set()
    out: dict[str, WriteResult] = {}
    for unit in sorted(units, key=lambda u: u.unit_id):  # scene choice independent of row order
        try:
            triplet = write_person(unit, config, taken)
        except phrasing.Rejected as exc:
            out[unit.unit_id] = WriteResult(
                unit.unit_id,
                None,
                {
                    "unit_id": unit.unit_id,
                    "level": "unit",
                    "mode": "rejected",
                    "reason": exc.reason,
                    "error": str(exc),
                    "head": unit.head,
                    "raw": "",
                },
            )
            continue
        taken.add(triplet.neutral)
        out[unit.unit_id] = WriteResult(unit.unit_id, triplet)
    return [out[u.unit_id] for u in units]
