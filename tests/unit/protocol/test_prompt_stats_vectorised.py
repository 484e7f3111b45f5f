"""Table 18's vectorised prompt statistics against a per-token reference written out here."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from implicit_bench._util.words import stop_words
from implicit_bench.protocol.prompt_stats import (
    PUNCT,
    VARIANT_COLUMNS,
    Tokenised,
    prompt_stats,
    text_stats,
)

WORDS = ["a", "B", "the", "of", ".", ",", '"x"', "it's", "Nurse", "nurse.", "(a)", "“q”", "i", "!"]


def reference(prompts: list[str]) -> dict:
    """The module docstring's rules, token by token."""
    if not prompts:
        return {"prompts": 0}
    lengths, types, content = [], [], []
    for prompt in prompts:
        words = prompt.split()
        lengths.append(len(words))
        kept = [t for t in (w.strip(PUNCT).lower() for w in words) if t]
        types.append(kept)
        content.append([t for t in kept if t not in stop_words() and len(t) > 1])
    total, n_content = sum(lengths), sum(map(len, content))
    unique = len({t for ts in types for t in ts})
    content_unique = len({t for cs in content for t in cs})
    p25, p50, p75 = np.percentile(lengths, [25, 50, 75])
    return {
        "prompts": len(prompts),
        "mean_tokens": round(float(np.mean(lengths)), 4),
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


def random_prompt(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 7)))


def test_text_stats_equals_the_per_token_reference():
    rng = random.Random(7)
    for _ in range(200):
        prompts = [random_prompt(rng) for _ in range(rng.randint(1, 6))]
        assert text_stats(prompts) == reference(prompts), prompts
    assert text_stats([]) == {"prompts": 0}


def test_prompt_stats_shares_one_tokenisation_and_counts_repeats():
    rng = random.Random(3)
    frame = pd.DataFrame(
        {c: [random_prompt(rng) for _ in range(40)] for c in VARIANT_COLUMNS.values()}
    )
    subset = frame.iloc[[0, 0, 5, 9, 9, 9]]  # a prompt repeated counts each time
    shared = Tokenised.of_frame(frame)
    for part in (frame, subset):
        got = prompt_stats(part, shared)
        assert got == prompt_stats(part)  # built here when not given
        for variant, column in VARIANT_COLUMNS.items():
            assert got[variant] == reference(part[column].tolist())
        assert got["all"] == reference(
            [p for column in VARIANT_COLUMNS.values() for p in part[column].tolist()]
        )
    other = pd.DataFrame({c: ["an unseen prompt"] for c in VARIANT_COLUMNS.values()})
    assert prompt_stats(other, shared)["neutral"] == reference(["an unseen prompt"])
