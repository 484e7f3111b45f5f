"""The direct arm of IMPLICIT-Bench App. C.1's construction ablation as rendered variants: a
triplet written straight from the unit's source sentence pair, without the KG unit's fields.

Variant hooks (``triplets.variant_hooks``; columns ``prompt_direct_neutral``,
``prompt_direct_stereotype``, ``prompt_direct_anti_stereotype`` and their ``*_check``; render
them as the variants ``direct_neutral``, ``direct_stereotype``, ``direct_anti_stereotype``):

- ``direct_llm``: the paper's arm. The ``construction_ablation.writer`` LLM gets the Stage 2
  instructions, the sentence pair and its dataset labels
  (``direct_triplets``, the prompts ``implicit-bench construction-rating`` rates);
  an invalid answer leaves the unit's three prompts null (check ``llm_invalid``), counted.
- ``direct``: a no-model stand-in for offline runs (as the ``template`` writer stands in for the
  F.3 LLM): the explicit prompts are the two sentences themselves ("A photo illustrating: ...")
  and the neutral prompt is the stereotype sentence with the words that differ from the
  anti-stereotype sentence left out (Python's difflib on lower-cased words). A pair whose
  sentences share no word, or a unit without its pair, gets null prompts and a check reason.

The hooks read the sentence pairs from ``data/interim/pairs.parquet`` (a dependency of the
triplets stage), joined on ``source_pair_id``.
"""

from __future__ import annotations

import difflib
from typing import Any

import pandas as pd
from pydantic import BaseModel

from implicit_bench.params import PositiveInt, StrictModel
from implicit_bench.protocol.tables import PAIRS, PAIRS_PATH

DIRECT_COLUMNS: tuple[str, ...] = (
    "prompt_direct_neutral",
    "prompt_direct_stereotype",
    "prompt_direct_anti_stereotype",
)


class ConstructionAblationParams(StrictModel):
    """params.yaml section ``construction_ablation`` (opt-in): read by the command
    ``construction-rating``; ``writer`` (and ``max_tokens``) also by the ``direct_llm`` hook."""

    writer: str | None = None  # llms entry writing the direct arm
    raters: list[str] = []  # llms entries rating both arms (the paper: two)
    seed: int = 42
    max_tokens: PositiveInt = 300


class DirectAnswer(BaseModel):
    neutral: str
    stereotype_trigger: str
    anti_stereotype_trigger: str


def _template(name: str) -> str:
    from importlib import resources

    return resources.files("implicit_bench").joinpath(f"prompts/{name}").read_text("utf-8")


def direct_triplets(
    units: pd.DataFrame, pairs: pd.DataFrame, client: Any, counter: Any = None
) -> pd.DataFrame:
    """``units`` with the direct arm's three prompt columns (``pairs``: the PAIRS table, joined
    on ``source_pair_id``)."""
    from implicit_bench.backends.llm import chat_json_many

    template = _template("direct_triplet_writer.txt")
    by_id = pairs.set_index(pairs["pair_id"].astype(str))
    requests = []
    for r in units.itertuples(index=False):
        pair = by_id.loc[str(r.source_pair_id)]
        requests.append(
            [
                {
                    "role": "user",
                    "content": template.format(
                        bias_type=pair["bias_type"],
                        target=pair.get("target"),
                        stereotype_sentence=pair["stereotype_sentence"],
                        anti_stereotype_sentence=pair["anti_stereotype_sentence"],
                    ),
                }
            ]
        )
    answers = chat_json_many(client, requests, DirectAnswer, desc="construction: direct arm")
    cols: dict[str, list[str | None]] = {c: [] for c in DIRECT_COLUMNS}
    for answer in answers:
        if counter is not None:
            counter.add(answer)
        value = None
        if answer.valid:
            value = (
                answer.value
                if isinstance(answer.value, DirectAnswer)
                else DirectAnswer.model_validate(answer.value)
            )
        texts = (
            (value.neutral, value.stereotype_trigger, value.anti_stereotype_trigger)
            if value
            else (None, None, None)
        )
        for c, t in zip(DIRECT_COLUMNS, texts, strict=True):
            cols[c].append(t.strip() if t and t.strip() else None)
    return units.assign(**cols)


PREFIX = "A photo illustrating: "
CHECK_COLUMNS: tuple[str, ...] = tuple(f"{c}_check" for c in DIRECT_COLUMNS)


def _sentence(text: str) -> str:
    text = " ".join(str(text).split())
    return text if text.endswith((".", "!", "?")) else f"{text}."


def deterministic_direct(
    stereotype_sentence: str, anti_stereotype_sentence: str
) -> tuple[str | None, str | None, str | None, str | None]:
    """(neutral, stereotype, anti-stereotype, reason): the stand-in writer of the module
    docstring; the reason is None when the three prompts were written."""
    s_words, a_words = str(stereotype_sentence).split(), str(anti_stereotype_sentence).split()
    if not s_words or not a_words:
        return None, None, None, "empty_sentence"
    matcher = difflib.SequenceMatcher(
        a=[w.lower() for w in s_words], b=[w.lower() for w in a_words], autojunk=False
    )
    shared = [
        w for tag, i1, i2, _, _ in matcher.get_opcodes() if tag == "equal" for w in s_words[i1:i2]
    ]
    if not shared or len(shared) == len(s_words):
        return None, None, None, "no_shared_words" if not shared else "no_difference"
    neutral = _sentence(" ".join(shared).rstrip(".,;:!?"))
    return (
        PREFIX + neutral,
        PREFIX + _sentence(" ".join(s_words)),
        PREFIX + _sentence(" ".join(a_words)),
        None,
    )


def _pairs(path: str = PAIRS_PATH) -> pd.DataFrame:
    pairs = PAIRS.read(
        path, require=("pair_id", "bias_type", "stereotype_sentence", "anti_stereotype_sentence")
    )
    return pairs.assign(pair_id=pairs["pair_id"].astype(str))


def add_direct_prompts(table: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the direct arm written by the stand-in writer."""
    by_id = pairs.set_index("pair_id")
    cols: dict[str, list[Any]] = {c: [] for c in (*DIRECT_COLUMNS, *CHECK_COLUMNS)}
    for pair_id in table["source_pair_id"].astype(str):
        if pair_id in by_id.index:
            row = by_id.loc[pair_id]
            *texts, reason = deterministic_direct(
                row["stereotype_sentence"], row["anti_stereotype_sentence"]
            )
        else:
            texts, reason = [None, None, None], "pair_not_found"
        for c, t in zip(DIRECT_COLUMNS, texts, strict=True):
            cols[c].append(t)
            cols[f"{c}_check"].append(reason)
    return table.assign(**cols)


def direct_hook(table: pd.DataFrame, pairs_path: str = PAIRS_PATH) -> pd.DataFrame:
    """Variant hook ``direct``: the no-model stand-in writer."""
    return add_direct_prompts(table, _pairs(pairs_path))


def direct_llm_hook(
    table: pd.DataFrame, params_path: str = "params.yaml", pairs_path: str = PAIRS_PATH
) -> pd.DataFrame:
    """Variant hook ``direct_llm``: ``construction_ablation.writer`` writes the direct arm (the
    hook reads that section and its ``llms`` entry from ``params_path``; the triplets stage
    lists both in its params)."""
    from implicit_bench.backends.llm import InvalidCounter, build_llm, llm_entry
    from implicit_bench.errors import ConfigError
    from implicit_bench.params import catalogue, load_params, section

    raw = load_params(params_path)
    params = section(raw, "construction_ablation", ConstructionAblationParams, params_path)
    if not params.writer:
        raise ConfigError(f"{params_path}: construction_ablation.writer (an llms entry) is unset")
    llms = catalogue(raw, "llms", params_path)
    block = llm_entry(llms, params.writer, "construction_ablation.writer", params.max_tokens)
    counter = InvalidCounter("construction_ablation.writer")
    out = direct_triplets(
        table, _pairs(pairs_path), build_llm(block, f"llms.{params.writer}"), counter
    )
    counter.check_calls()
    complete = out[list(DIRECT_COLUMNS)].notna().all(axis=1)
    for c in DIRECT_COLUMNS:  # an arm is whole or absent: never one prompt of three
        out[c] = out[c].where(complete, None)
        out[f"{c}_check"] = [None if ok else "llm_invalid" for ok in complete]
    return out


__all__ = [
    "DIRECT_COLUMNS",
    "ConstructionAblationParams",
    "DirectAnswer",
    "add_direct_prompts",
    "deterministic_direct",
    "direct_hook",
    "direct_llm_hook",
    "direct_triplets",
]
