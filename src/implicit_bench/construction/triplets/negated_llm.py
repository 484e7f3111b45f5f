"""The LLM writer of negated prompts: one cached JSON request per unit through the LLM client.

Invalid answers (unparsable, missing a field, or a failed call) give null prompts whose
reason starts with ``llm_invalid``; they are counted with ``InvalidCounter`` and never
replaced by a guess. The checks of ``triplets.negated.check_negated`` then apply as for the
deterministic writer.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd
from pydantic import BaseModel

from implicit_bench.backends.llm import InvalidCounter, LLMClient, chat_json_many
from implicit_bench.construction.triplets.negated import NegatedPrompts


class NegatedAnswer(BaseModel):
    negated_0_1: str
    negated_1_1: str


def negation_template() -> str:
    return (
        resources.files("implicit_bench")
        .joinpath("prompts/negation.txt")
        .read_text(encoding="utf-8")
    )


def llm_negated(
    units: pd.DataFrame, client: LLMClient, counter: InvalidCounter | None = None
) -> dict[str, NegatedPrompts]:
    """``unit_id -> NegatedPrompts`` written by ``client`` (cached by the client's DiskCache)."""
    template = negation_template()
    ids = units["unit_id"].astype(str).tolist()
    requests = [
        [
            {
                "role": "user",
                "content": template.format(
                    neutral=r.prompt_neutral,
                    stereotype=r.stereotype,
                    anti_stereotype=r.anti_stereotype,
                ),
            }
        ]
        for r in units.itertuples(index=False)
    ]
    answers = chat_json_many(client, requests, NegatedAnswer, desc="triplets: negated prompts")
    out: dict[str, NegatedPrompts] = {}
    writer = f"llm:{client.model}"
    for unit_id, answer in zip(ids, answers, strict=True):
        if counter is not None:
            counter.add(answer)
        if not answer.valid:
            out[unit_id] = NegatedPrompts(None, None, writer, f"llm_invalid: {answer.error}")
            continue
        value = (
            answer.value
            if isinstance(answer.value, NegatedAnswer)
            else NegatedAnswer.model_validate(answer.value)
        )
        out[unit_id] = NegatedPrompts(value.negated_0_1.strip(), value.negated_1_1.strip(), writer)
    return out
