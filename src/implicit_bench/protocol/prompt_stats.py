"""Prompt length and lexical diversity per variant (paper Appendix B.7, Table 18).

- Tokens: whitespace tokens of the prompt (``str.split()``); length statistics (mean, p25, p50,
  p75 with numpy's linear interpolation) and the total count use them as they are.
- Types: tokens lower-cased and stripped of surrounding punctuation (``.,;:!?"'()[]``),
  empty ones dropped. ``unique`` = distinct types; ``ttr`` = unique / total tokens.
- Content TTR: after removing the shipped stop words (assets/stopwords_en.txt, NLTK's 179
  English words) and single-character types: distinct content types / content tokens.
- "all" pools the three variants.
"""

from __future__ import annotations

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


def _tokens(prompt: str) -> tuple[int, list[str], list[str]]:
    """Whitespace token count, types and content types of one prompt."""
    words = prompt.split()
    types = [t for t in (w.strip(PUNCT).lower() for w in words) if t]
    stops = stop_words()
    return len(words), types, [t for t in types if t not in stops and len(t) > 1]


def text_stats(prompts: list[str]) -> dict[str, Any]:
    return _stats([_tokens(p) for p in prompts])


def _stats(tokenised: list[tuple[int, list[str], list[str]]]) -> dict[str, Any]:
    if not tokenised:
        return {"prompts": 0}
    lengths = np.array([n for n, _, _ in tokenised])
    # counts and distinct sets without flattening every token into one list
    unique = len(set().union(*(ts for _, ts, _ in tokenised)))
    n_content = sum(len(cs) for _, _, cs in tokenised)
    content_unique = len(set().union(*(cs for _, _, cs in tokenised)))
    total = int(lengths.sum())
    p25, p50, p75 = np.percentile(lengths, [25, 50, 75])
    return {
        "prompts": len(tokenised),
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


def prompt_stats(
    frame: pd.DataFrame, cache: dict[str, tuple[int, list[str], list[str]]] | None = None
) -> dict[str, Any]:
    """Table 18 rows for a frame with the prompt_* columns (each distinct prompt tokenised
    once; ``cache``: prompt -> tokens, shared by calls on overlapping frames, e.g. the
    candidates and the selected units)."""
    cache = {} if cache is None else cache

    def tokens(prompt: str) -> tuple[int, list[str], list[str]]:
        found = cache.get(prompt)
        if found is None:
            found = cache[prompt] = _tokens(prompt)
        return found

    tokenised = {
        v: [tokens(p) for p in frame[c].astype(str).tolist()] for v, c in VARIANT_COLUMNS.items()
    }
    out = {v: _stats(t) for v, t in tokenised.items()}
    out["all"] = _stats([t for v in VARIANT_COLUMNS for t in tokenised[v]])
    return out
