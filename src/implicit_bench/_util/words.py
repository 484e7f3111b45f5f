"""Small text helpers shared by the construction stages: word tokens, stop words, phrase match."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

WORD = re.compile(r"\w+(?:['’\-]\w+)*")


@cache
def stop_words() -> frozenset[str]:
    """The shipped English stop-word list (``assets/stopwords_en.txt``, NLTK's 179 words)."""
    text = (resources.files("implicit_bench") / "assets" / "stopwords_en.txt").read_text("utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip() and not w.startswith("#"))


def words(text: str) -> list[str]:
    """Word tokens (letters, digits, inner apostrophes / hyphens), original case."""
    return WORD.findall(text.replace("’", "'"))


def contains_phrase(text: str, phrase: str) -> bool:
    """True when ``phrase`` occurs in ``text`` as whole words, case-insensitively."""
    needle = [w.lower() for w in words(phrase)]
    if not needle:
        return False
    hay = [w.lower() for w in words(text)]
    n = len(needle)
    return any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))
