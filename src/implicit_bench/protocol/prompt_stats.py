"""Prompt length and lexical diversity per variant (paper Appendix B.7, Table 18).

- Tokens: whitespace tokens of the prompt (``str.split()``); length statistics (mean, p25, p50,
  p75 with numpy's linear interpolation) and the total count use them as they are.
- Types: tokens lower-cased and stripped of surrounding punctuation (``.,;:!?"'()[]``),
  empty ones dropped. ``unique`` = distinct types; ``ttr`` = unique / total tokens.
- Content TTR: after removing the shipped stop words (assets/stopwords_en.txt, NLTK's 179
  English words) and single-character types: distinct content types / content tokens.
- "all" pools the three variants.

Vectorised: the distinct prompts are split once (:class:`Tokenised`), each distinct word is
stripped and lower-cased once, and a set of prompts' figures are array reductions over the
tokens' type codes (no per-token Python; docs/analysis.md, "Speed").
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.words import stop_words

PUNCT = ".,;:!?\"'()[]{}“”‘’"
VARIANT_COLUMNS = {
    "neutral": "prompt_neutral",
    "stereotype": "prompt_stereotype",
    "anti_stereotype": "prompt_anti_stereotype",
}


class Tokenised:
    """Distinct prompts split into whitespace tokens, each token's type code (-1: empty after
    stripping) and whether that type is a content type."""

    def __init__(self, prompts: Sequence[str]) -> None:
        distinct = list(dict.fromkeys(prompts))
        self.index = {p: i for i, p in enumerate(distinct)}
        split = [p.split() for p in distinct]
        self.n_tokens = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
        vocabulary: dict[str, int] = {}  # word -> code, in order of first appearance
        code = vocabulary.setdefault
        word_codes = np.array(
            [code(w, len(vocabulary)) for words in split for w in words], dtype=np.int64
        )
        types = [w.strip(PUNCT).lower() for w in vocabulary]
        type_codes, uniques = pd.factorize(pd.Series(types, dtype=object))
        stops = stop_words()
        content = np.array([bool(t) and t not in stops and len(t) > 1 for t in uniques], bool)
        empty = np.array([not t for t in types], bool)
        word_type = np.where(empty, -1, type_codes)
        self.token_type = word_type[word_codes]
        self.token_prompt = np.repeat(np.arange(len(distinct)), self.n_tokens)
        self.n_types = len(uniques)
        self.typed = self.token_type >= 0
        self.token_content = self.typed & np.append(content, False)[self.token_type]
        self.n_content = np.bincount(self.token_prompt[self.token_content], minlength=len(distinct))

    @classmethod
    def of_frame(cls, frame: pd.DataFrame) -> Tokenised:
        """The prompts of every variant of a frame with the prompt_* columns."""
        return cls(list(chain.from_iterable(frame_prompts(frame).values())))

    def ids(self, prompts: Sequence[str]) -> np.ndarray | None:
        """The prompts' positions (None when one was not tokenised here)."""
        found = [self.index.get(p) for p in prompts]
        if any(i is None for i in found):
            return None
        return np.array(found, dtype=np.int64)

    def _distinct_types(self, present: np.ndarray, mask: np.ndarray) -> int:
        seen = np.zeros(self.n_types, bool)
        seen[self.token_type[present[self.token_prompt] & mask]] = True
        return int(seen.sum())

    def stats(self, ids: np.ndarray) -> dict[str, Any]:
        """Table 18's figures of the prompts at ``ids`` (repeats count as often as they occur)."""
        if not len(ids):
            return {"prompts": 0}
        lengths = self.n_tokens[ids]
        present = np.zeros(len(self.n_tokens), bool)
        present[ids] = True
        unique = self._distinct_types(present, self.typed)
        content_unique = self._distinct_types(present, self.token_content)
        n_content = int(self.n_content[ids].sum())
        total = int(lengths.sum())
        p25, p50, p75 = np.percentile(lengths, [25, 50, 75])
        return {
            "prompts": len(ids),
            "mean_tokens": round(float(lengths.mean()), 4),
            "p25": float(p25),
            "p50": float(p50),
            "p75": float(p75),
            "total_tokens": total,
            "unique_tokens": unique,
            "ttr": round(unique / total, 4) if total else None,
            "content_tokens": n_content,
            "content_unique": content_unique,
            "content_ttr": round(content_unique / n_content, 4) if n_content else None,
        }


def text_stats(prompts: list[str]) -> dict[str, Any]:
    tokenised = Tokenised(prompts)
    return tokenised.stats(np.array([tokenised.index[p] for p in prompts], dtype=np.int64))


def frame_prompts(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Each variant's prompts of a frame with the prompt_* columns, as text."""
    return {v: frame[c].astype(str).tolist() for v, c in VARIANT_COLUMNS.items()}


def prompt_stats(frame: pd.DataFrame, tokenised: Tokenised | None = None) -> dict[str, Any]:
    """Table 18 rows for a frame with the prompt_* columns; ``tokenised``: the prompts split
    already (shared by calls on overlapping frames, e.g. the candidates and the selected units;
    built here when it lacks one of the frame's prompts)."""
    prompts = frame_prompts(frame)
    ids = {v: tokenised.ids(p) for v, p in prompts.items()} if tokenised else {}
    if tokenised is None or any(i is None for i in ids.values()):
        tokenised = Tokenised(list(chain.from_iterable(prompts.values())))
        ids = {v: tokenised.ids(p) for v, p in prompts.items()}
    out = {v: tokenised.stats(i) for v, i in ids.items()}
    out["all"] = tokenised.stats(np.concatenate([ids[v] for v in VARIANT_COLUMNS]))
    return out
