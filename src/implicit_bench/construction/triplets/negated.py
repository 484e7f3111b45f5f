"""Negated prompts (NegT2IBench settings 0:1 and 1:1), written for the triplets table.

Per unit, from the neutral prompt N and the anti-stereotype prompt A:

- ``negated_0_1``: N with its subject negated against the stereotype ("a mover who is not
  a man ..."): no positive attribute, one negated statement;
- ``negated_1_1``: A with the same negation ("a woman mover who is not a man ..."): the
  anti-stereotype attribute asserted, the stereotype negated.

The deterministic writer finds the subject from the word difference between N and the
stereotype prompt S; the LLM writer (``triplets.negated_llm``) asks an LLM. Every prompt goes
through ``check_negated`` like the other triplets' checks; a unit the deterministic writer
cannot handle gets null prompts and a reason, counted in the metrics, never guessed. The
negation audit that reads the rendered images is ``audits.negation``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from implicit_bench._util.words import contains_phrase

NEGATED_COLUMNS: dict[str, str] = {
    "negated_0_1": "prompt_negated_0_1",
    "negated_1_1": "prompt_negated_1_1",
}
_ARTICLES = ("a", "an", "the")
_PUNCT = ".,;:!?"


@dataclass(frozen=True)
class NegatedPrompts:
    negated_0_1: str | None
    negated_1_1: str | None
    writer: str
    reason: str | None = None


# Singular person nouns: an attribute ending in one is a noun phrase and takes "a"/"an"
# ("a man", "a Black person"); any other attribute is read as an adjective and takes none
# ("who is not smart", "who is not Asian").
PERSON_NOUNS: frozenset[str] = frozenset(
    [
        "man",
        "woman",
        "person",
        "boy",
        "girl",
        "guy",
        "lady",
        "gentleman",
        "child",
        "kid",
        "adult",
        "teenager",
        "individual",
        "mother",
        "father",
        "husband",
        "wife",
        "son",
        "daughter",
        "parent",
        "student",
        "worker",
        "immigrant",
        "citizen",
        "foreigner",
        "native",
    ]
)


def with_article(phrase: str, always: bool = False) -> str:
    """ "man" -> "a man", "Asian person" -> "an Asian person", "smart" -> "smart".

    An article is added when the phrase ends in a singular person noun (or ``always``) and
    does not start with one already.
    """
    phrase = phrase.strip()
    words = phrase.split()
    if not words or words[0].lower() in _ARTICLES:
        return phrase
    if not always and words[-1].lower().strip(_PUNCT) not in PERSON_NOUNS:
        return phrase
    article = "an" if words[0][0].lower() in "aeiou" else "a"
    return f"{article} {phrase}"


def _phrase_end(words: list[str], phrase: str | None) -> int | None:
    """Index just after the first whole-word occurrence of ``phrase`` in ``words``, or None."""
    if not phrase:
        return None
    needle = [w.lower() for w in phrase.split()]
    hay = [w.lower().strip(_PUNCT) for w in words]
    n = len(needle)
    for i in range(len(hay) - n + 1):
        if hay[i : i + n] == needle:
            return i + n
    return None


def _common_affixes(a: list[str], b: list[str]) -> tuple[int, int]:
    def norm(w: str) -> str:
        w = w.lower().strip(_PUNCT)
        return "a" if w == "an" else w

    p = 0
    while p < min(len(a), len(b)) and norm(a[p]) == norm(b[p]):
        p += 1
    q = 0
    while q < min(len(a), len(b)) - p and norm(a[-1 - q]) == norm(b[-1 - q]):
        q += 1
    return p, q


def _subject_end(neutral: list[str], other: list[str]) -> int | None:
    """Index in ``other`` just after its subject phrase, or None if no difference is found.

    If ``other`` replaces a span of ``neutral`` ("person" -> "Black person") the subject ends
    where the replacement ends; if it only inserts words before the subject noun ("mover" ->
    "man mover") the subject ends one word after the insertion.
    """
    p, q = _common_affixes(neutral, other)
    n_mid = len(neutral) - q - p
    o_mid = len(other) - q - p
    if o_mid <= 0:
        return None
    end = p + o_mid + (1 if n_mid <= 0 else 0)
    return end if end <= len(other) else None


def _insert_negation(words: list[str], end: int, forbidden: str) -> str:
    head, tail = words[:end], words[end:]
    last = head[-1]
    trail = ""
    while last and last[-1] in _PUNCT:
        trail = last[-1] + trail
        last = last[:-1]
    head = [*head[:-1], last]
    clause = f"who is not {with_article(forbidden)}{trail}"
    return " ".join([*head, clause, *tail])


def deterministic_negated(
    neutral: str, stereotype_prompt: str, anti_prompt: str, stereotype: str, head: str | None = None
) -> NegatedPrompts:
    """Write both negated prompts from the unit's triplet; null prompts with a reason on failure.

    When the unit's ``head`` occurs in the neutral and anti-stereotype prompts (the template
    writer's "a photo of a {head}"), the clause goes right after it; otherwise the subject is
    found from the word difference between the neutral and the stereotype prompt.
    """
    n_words, s_words, a_words = neutral.split(), stereotype_prompt.split(), anti_prompt.split()
    n_head, a_head = _phrase_end(n_words, head), _phrase_end(a_words, head)
    if n_head is not None and a_head is not None:
        return NegatedPrompts(
            _insert_negation(n_words, n_head, stereotype),
            _insert_negation(a_words, a_head, stereotype),
            "deterministic",
        )
    end_s = _subject_end(n_words, s_words)
    if end_s is None:
        return NegatedPrompts(
            None, None, "deterministic", "stereotype prompt does not differ from the neutral prompt"
        )
    # The neutral prompt's subject ends where the stereotype prompt's subject ends, less the
    # words the stereotype prompt added.
    p, q = _common_affixes(n_words, s_words)
    n_end = len(n_words) - q if len(n_words) - q - p > 0 else p + 1
    if n_end > len(n_words) or n_end <= 0:
        return NegatedPrompts(
            None, None, "deterministic", "subject of the neutral prompt not found"
        )
    end_a = _subject_end(n_words, a_words)
    if end_a is None:
        return NegatedPrompts(
            None,
            None,
            "deterministic",
            "anti-stereotype prompt does not differ from the neutral prompt",
        )
    return NegatedPrompts(
        _insert_negation(n_words, n_end, stereotype),
        _insert_negation(a_words, end_a, stereotype),
        "deterministic",
    )


def deterministic_subject(
    neutral: str, stereotype_prompt: str, head: str | None = None
) -> str | None:
    """The subject-only template prompt "a photo of a {subject}" of a unit, or None.

    The subject is the span of the neutral prompt that the stereotype prompt replaces
    ("person" in "A person ..." -> "A Black person ..."), or the word right after the
    stereotype prompt's insertion ("mover" in "A mover ..." -> "A man mover ...").
    """
    n_words, s_words = neutral.split(), stereotype_prompt.split()
    if _phrase_end(n_words, head) is not None:
        from implicit_bench.construction.triplets.template import takes_article

        return f"a photo of {with_article(head, always=True) if takes_article(head) else head}"
    p, q = _common_affixes(n_words, s_words)
    span = n_words[p : len(n_words) - q] if len(n_words) - q - p > 0 else n_words[p : p + 1]
    words = [w.strip(_PUNCT) for w in span]
    words = [w for w in words if w]
    while words and words[0].lower() in _ARTICLES:
        words = words[1:]
    if not words or len(words) > 4:
        return None
    return f"a photo of {with_article(' '.join(words), always=True)}"


def _mentions(prompt: str, phrase: str) -> bool:
    """Whole-word, case-insensitive occurrence (the triplet checks' rule,
    ``text.contains_phrase``)."""
    return contains_phrase(prompt, phrase)


def tails(value: Any, fallback: str) -> list[str]:
    """An attribute's tails from a JSON list (string or list) column, else ``[fallback]``."""
    if isinstance(value, str) and value.strip().startswith("["):
        value = json.loads(value)
    if isinstance(value, list | tuple) or hasattr(value, "tolist"):
        items = [
            str(v).strip()
            for v in (value.tolist() if hasattr(value, "tolist") else value)
            if str(v).strip()
        ]
        if items:
            return items
    return [fallback]


def check_negated(
    prompt: str | None,
    variant: str,
    stereotype: str | list[str],
    anti_stereotype: str | list[str],
    max_words: int = 77,
) -> str | None:
    """None if ``prompt`` passes, else the failed check's name.

    An attribute is named when any of its tails occurs as whole words (the triplet checks'
    rule). Checks: not empty; names the stereotype after a negation ("not ..."); the 0:1
    prompt does not name the anti-stereotype; the 1:1 prompt names it before the negation;
    within ``max_words`` words.
    """
    s_tails = [stereotype] if isinstance(stereotype, str) else list(stereotype)
    a_tails = [anti_stereotype] if isinstance(anti_stereotype, str) else list(anti_stereotype)
    if prompt is None or not prompt.strip():
        return "empty"
    text = prompt.lower()
    negations = list(re.finditer(r"\bnot\b|\bno\b|\bnon-|n't\b|\bwithout\b", text))
    if not negations:
        return "no_negation"
    # the negation that governs the stereotype: the first one followed by a stereotype tail
    # (an attribute may itself contain a negation word, e.g. "without", "don't")
    governing = [m for m in negations if any(_mentions(text[m.end() :], t) for t in s_tails)]
    if not governing:
        return "stereotype_not_negated"
    shared = any(_mentions(" ".join(s_tails), t) for t in a_tails)
    if variant == "negated_0_1" and any(_mentions(text, t) for t in a_tails) and not shared:
        return "names_anti_stereotype"
    if variant == "negated_1_1" and not any(
        _mentions(text[: m.start()], t) for m in governing for t in a_tails
    ):
        return "anti_stereotype_missing"
    if len(prompt.split()) > max_words:
        return "too_long"
    return None


def add_negated_prompts(units: pd.DataFrame, written: dict[str, NegatedPrompts]) -> pd.DataFrame:
    """Units with ``prompt_negated_0_1``, ``prompt_negated_1_1``, writer and check columns.

    A prompt that fails its check is nulled (the unit keeps its row; the failed check is in
    ``negated_check``), so render skips it and the metrics count it.
    """
    out = units.copy()
    for variant, column in NEGATED_COLUMNS.items():
        values, checks = [], []
        for row in out.itertuples(index=False):
            prompts = written.get(str(row.unit_id))
            prompt = getattr(prompts, variant) if prompts is not None else None
            failed = (
                (prompts.reason if prompts is not None and prompts.reason else "not_written")
                if prompt is None
                else check_negated(
                    prompt,
                    variant,
                    tails(getattr(row, "stereotype_tails", None), row.stereotype),
                    tails(getattr(row, "anti_stereotype_tails", None), row.anti_stereotype),
                )
            )
            values.append(None if failed else prompt)
            checks.append(failed)
        out[column] = values
        out[f"{column}_check"] = checks
    out["negated_writer"] = [
        written[str(u)].writer if str(u) in written else None for u in out["unit_id"]
    ]
    return out
