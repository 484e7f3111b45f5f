"""Word knowledge for offline construction: spelling, countries and demonyms, parts of speech,
person nouns. Each answer comes from a maintained library where one exists:

- spelling: ``pyspellchecker`` (English word frequencies) plus the reviewed exception list
  ``assets/spelling_exceptions.tsv`` (a correction the library gets wrong, ``Eriteria`` ->
  ``Eritrea`` not ``criteria``; a word it does not know but that is right, ``abled``);
- countries and demonyms: ``countryinfo`` (``Yemen`` -> ``Yemeni``), plus the exception list;
- parts of speech: ``lemminflect``'s lexicon (``getAllLemmas``: NOUN / ADJ / VERB ...);
- person nouns: ``assets/person_nouns.txt`` (reviewed list: roles, occupations, kin, groups);
- first names: ``gender-guesser``'s name dictionary ("Jerome", "Shaniqua"; "Eskimo" and
  "Baptists" are not names, so never "a person named Eskimo");
- capitalisation: demonyms and the exception list's ``proper:`` words (religions, groups) are
  capitalised ("muslim" -> "Muslim"), other capitalised adjectives are not ("Poor" -> "poor").
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

LOWER_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
MIN_CORRECTED_LEN = 5  # shorter unknown words are left alone (abbreviations, slang: "bro", "gf")


@cache
def _exceptions() -> tuple[dict[str, str], frozenset[str]]:
    """(corrections, keep): ``from<TAB>to`` lines and single words the library must not touch."""
    fixes: dict[str, str] = {}
    keep: set[str] = set()
    text = (
        resources.files("implicit_bench.assets")
        .joinpath("spelling_exceptions.tsv")
        .read_text(encoding="utf-8")
    )
    for line in text.splitlines():
        line = line.split("#", 1)[0].rstrip()
        if not line:
            continue
        parts = line.split("\t")
        if len(parts) == 2 and parts[1].strip():
            fixes[parts[0].strip().lower()] = parts[1].strip()
        else:
            keep.add(parts[0].strip().lower())
    return fixes, frozenset(keep)


@cache
def _speller():  # noqa: ANN202 - spellchecker.SpellChecker, imported lazily
    from spellchecker import SpellChecker

    return SpellChecker(distance=2)


@cache
def countries() -> dict[str, str]:
    """Lower-cased country name (and alternative spellings) -> demonym."""
    from countryinfo import all_countries

    out: dict[str, str] = {}
    for c in all_countries():
        try:
            demonym, name = c.demonym(), c.name()
        except Exception:  # noqa: BLE001 - a country without a demonym entry
            continue
        if not demonym or not name:
            continue
        for spelling in [name, *(c.alt_spellings() or [])]:
            if spelling and len(spelling) > 3 and not spelling.isupper():
                out.setdefault(spelling.lower(), demonym)
    fixes, _ = _exceptions()
    for k, v in fixes.items():
        if k.startswith("country:"):
            out[k[len("country:") :]] = v
    return out


@cache
def demonyms() -> frozenset[str]:
    """Lower-cased demonyms (``yemeni``, ``saudi arabian``) and the shipped group adjectives."""
    fixes, _ = _exceptions()
    extra = {v.lower() for k, v in fixes.items() if k.startswith("demonym:")}
    return frozenset({d.lower() for d in countries().values()} | extra)


def demonym_of(phrase: str) -> str | None:
    """The demonym of a country name (``Yemen`` -> ``Yemeni``), else None."""
    return countries().get(phrase.strip().lower())


def is_demonym(phrase: str) -> bool:
    return phrase.strip().lower() in demonyms()


def demonym_singular(phrase: str) -> str | None:
    """The demonym a plural group word names ("Latinos" -> "Latino", "Puerto Ricans" ->
    "Puerto Rican"), else None."""
    low = phrase.strip().lower()
    if low.endswith("s") and low[:-1] in demonyms():
        return case_text(phrase.strip()[:-1])
    return None


@cache
def proper_words() -> dict[str, str]:
    """Lower-cased word -> its capitalised form: demonyms and the ``proper:`` exceptions."""
    fixes, _ = _exceptions()
    out = {d.lower(): d for d in countries().values() if " " not in d}
    out.update(  # "Saudi Arabian": words no dictionary knows ("Cook Islander": not "cook")
        {
            w.lower(): w
            for d in countries().values()
            if len(d.split()) == 2
            for w in d.split()
            if not parts_of_speech(w.lower())
        }
    )
    out.update(  # "Cape Verdean", "Native American": the reviewed list, every word
        {w.lower(): w for k, v in fixes.items() if k.startswith("demonym:") for w in v.split()}
    )
    out.update({k[len("proper:") :]: v for k, v in fixes.items() if k.startswith("proper:")})
    return out


@cache
def _names():  # noqa: ANN202 - gender_guesser.detector.Detector, imported lazily
    from gender_guesser.detector import Detector

    return Detector(case_sensitive=False)


@cache
def is_first_name(word: str) -> bool:
    """A capitalised first name in gender-guesser's dictionary that is not a group word, a
    person noun or an adjective ("Jerome", "Juan's"; not "Christian", "Rich", "Eskimo")."""
    word = re.sub(r"'s$", "", word)
    low = word.lower()
    return (
        word[:1].isupper()
        and word.isalpha()
        and low not in proper_words()
        and not is_demonym(word)
        and not demonym_of(word)
        and not is_person_noun(word)
        and "ADJ" not in parts_of_speech(low)
        and _names().get_gender(word) != "unknown"
    )


def case_word(word: str) -> str:
    """``word`` capitalised as in running text: a demonym or ``proper:`` word capitalised
    ("muslim" -> "Muslim", "christians" -> "Christians"), a capitalised adjective or person
    noun that is not one lower-cased ("Poor" -> "poor", "White" -> "white", "People" ->
    "people"), anything else (names) as it is."""
    low = word.lower()
    proper = proper_words()
    if "-" in word:  # "Afro-American", "open-minded"
        parts = word.split("-")
        return word if parts[-1].lower() in proper else "-".join(case_word(p) for p in parts)
    if low in proper:
        return proper[low]
    one = singular(low)
    if one in proper and proper[one].startswith(one[:1].upper()):
        return low[:1].upper() + low[1:]
    if (
        word[:1].isupper()
        and not word.isupper()
        and (parts_of_speech(low) or low in person_nouns() or one in person_nouns())
        and not is_first_name(word)
    ):
        return low
    return word


def degree(word: str) -> str:
    """``superlative`` ("best", "smartest"), ``comparative`` ("dumber", "friendlier") or ``""``
    for an adjective, by lemminflect's lemma ("best" -> "good")."""
    from lemminflect import getAllLemmas

    low = word.lower()
    lemma = (getAllLemmas(low).get("ADJ") or (low,))[0]
    if lemma == low:
        return ""
    if low.endswith("est") or low in ("best", "worst", "most", "least"):
        return "superlative"
    return "comparative" if low.endswith("er") or low in ("better", "worse") else ""


def base_adjective(word: str) -> str:
    """The plain form of a comparative ("dumber" -> "dumb"); other words as they are."""
    from lemminflect import getAllLemmas

    if degree(word) != "comparative":
        return word
    return (getAllLemmas(word.lower()).get("ADJ") or (word,))[0]


def case_text(text: str) -> str:
    """Every word of ``text`` through ``case_word``, except a run of capitalised words, which is
    a name ("New York", "Middle Eastern") and keeps its case."""
    word = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
    found = list(word.finditer(text))
    out, last = [], 0
    for i, m in enumerate(found):
        w = m.group(0)
        run = (
            any(0 <= j < len(found) and found[j].group(0)[:1].isupper() for j in (i - 1, i + 1))
            and w[:1].isupper()
        )
        out.append(text[last : m.start()] + (w if run else case_word(w)))
        last = m.end()
    return "".join(out) + text[last:]


@cache
def person_nouns() -> frozenset[str]:
    text = (
        resources.files("implicit_bench.assets")
        .joinpath("person_nouns.txt")
        .read_text(encoding="utf-8")
    )
    return frozenset(
        w.strip().lower() for w in text.splitlines() if w.strip() and not w.startswith("#")
    )


@cache
def parts_of_speech(word: str) -> frozenset[str]:
    """The universal POS tags lemminflect's lexicon knows for ``word`` (empty when unknown)."""
    from lemminflect import getAllLemmas

    return frozenset(getAllLemmas(word)) | frozenset(getAllLemmas(word.lower()))


@cache
def singular(word: str) -> str:
    """``criminals`` -> ``criminal`` (lemminflect's noun lemma; the word itself otherwise)."""
    from lemminflect import getAllLemmas

    low = word.lower()
    lemmas = getAllLemmas(low).get("NOUN")
    if lemmas:
        return lemmas[0]
    if (
        low.endswith("s")
        and not low.endswith("ss")
        and (low[:-1] in person_nouns() or low[:-1] in demonyms() or low in person_nouns())
    ):  # "muslims", "Americans": not in lemminflect's lexicon
        return word[:-1]
    return word


@cache
def _inflect():  # noqa: ANN202 - inflect.engine, imported lazily
    import inflect

    return inflect.engine()


@cache
def with_article(phrase: str) -> str:
    """``phrase`` with "a" / "an" as pronounced (inflect: "a Ukrainian man", "an honest person")."""
    return _inflect().a(phrase)


def is_person_noun(phrase: str) -> bool:
    """A noun phrase naming a person or people: its last word (or its singular) is a person noun."""
    last = phrase.strip().lower().split()[-1] if phrase.strip() else ""
    return bool(last) and (
        last in person_nouns()
        or singular(last) in person_nouns()
        or last.endswith(("man", "men", "woman", "women", "person", "people"))
    )


@cache
def correct_word(word: str) -> str:
    """``word`` spelled right: the exception list first, then pyspellchecker for unknown lower-
    case words of at least ``MIN_CORRECTED_LEN`` letters; a capitalised word is corrected only
    to a close country name or demonym (``difflib``, ratio >= 0.85; names are not words of the
    dictionary)."""
    fixes, keep = _exceptions()
    low = word.lower()
    if low in fixes:
        return _case_like(fixes[low], word)
    if (
        low in keep
        or len(low) < MIN_CORRECTED_LEN
        or not low.replace("'", "").isalpha()
        or "'" in low
    ):
        return word
    speller = _speller()
    if low in speller or low in demonyms() or low in countries() or low in person_nouns():
        return word
    if word[:1].isupper():  # a name unless it is close to a country or a demonym ("Norweigan")
        import difflib

        close = difflib.get_close_matches(low, [*demonyms(), *countries()], n=1, cutoff=0.85)
        return _case_like(close[0], word) if close else word
    fix = spelling_correction(speller, low)
    if not fix or fix == low:
        return word
    return _case_like(fix, word)


def spelling_correction(speller, word: str) -> str | None:  # noqa: ANN001 - a SpellChecker
    """``speller.correction(word)`` (pyspellchecker at distance 2): the most frequent dictionary
    word at the smallest edit distance (0, then 1, then 2; deletes, inserts, replacements and
    adjacent transpositions, i.e. Damerau-Levenshtein), ties going to the first in alphabetical
    order (the library's pick among equals follows set iteration order, which varies with the
    process's string hashing). Distances come from ``rapidfuzz`` over the dictionary words of
    about the right length; the library generates every string two edits away instead (about
    3 s a word, against milliseconds here)."""
    from rapidfuzz import process
    from rapidfuzz.distance import DamerauLevenshtein

    word = word if speller._case_sensitive else word.lower()
    should_check = speller._check_if_should_check
    if word in speller.word_frequency.dictionary or not should_check(word):
        return word
    near = [
        w
        for n in range(len(word) - speller.distance, len(word) + speller.distance + 1)
        for w in _dictionary_by_length(speller).get(n, ())
    ]
    found = process.extract(
        word,
        near,
        scorer=DamerauLevenshtein.distance,
        score_cutoff=speller.distance,
        limit=None,
    )
    found = [(w, d) for w, d, _ in found if should_check(w)]
    if not found:
        return None
    closest = min(d for _, d in found)
    candidates = sorted(w for w, d in found if d == closest)
    plain = speller._remove_diacritics(word)
    same_letters = [c for c in candidates if speller._remove_diacritics(c) == plain]
    return max(same_letters or candidates, key=speller.__getitem__)


@cache
def _dictionary_by_length(speller) -> dict[int, list[str]]:  # noqa: ANN001 - a SpellChecker
    """The speller's dictionary words, grouped by length."""
    by_length: dict[int, list[str]] = {}
    for w in speller.word_frequency.dictionary:
        by_length.setdefault(len(w), []).append(w)
    return by_length


def _case_like(fix: str, word: str) -> str:
    if fix[:1].isupper() or not word[:1].isupper():
        return fix
    return fix[:1].upper() + fix[1:]


def correct_text(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` with every misspelled word corrected, and the ``(from, to)`` corrections made.
    A multi-word exception (``Sierra Leon`` -> ``Sierra Leone``) is applied first."""
    fixes, _ = _exceptions()
    made: list[tuple[str, str]] = []
    for wrong, right in fixes.items():
        if (
            " " in wrong
            and re.search(rf"\b{re.escape(wrong)}\b", text, flags=re.IGNORECASE)
            and not re.search(rf"\b{re.escape(right)}\b", text, flags=re.IGNORECASE)
        ):
            text = re.sub(rf"\b{re.escape(wrong)}\b", right, text, flags=re.IGNORECASE)
            made.append((wrong, right))

    def one(m: re.Match[str]) -> str:
        fixed = correct_word(m.group(0))
        if fixed != m.group(0):
            made.append((m.group(0), fixed))
        return fixed

    return re.sub(r"[A-Za-z]+(?:'[A-Za-z]+)?", one, text), made
