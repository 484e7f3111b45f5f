"""The LLM writer: paper Appendix F.3 prompt through any LLM backend.

One user message per unit. Fields: ``target`` (the StereoSet target, or the target group the
extractor named; empty when neither), tails joined with ", ", ``relation`` empty when absent,
``frame_sensitive`` as true / false, and the unit's source sentences from the pairs table.
An answer that does not parse into the three prompts is an invalid record (raw text kept).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, field_validator

from implicit_bench.backends.llm import build_llm, chat_json_many
from implicit_bench.construction.triplets.base import WriteResult
from implicit_bench.errors import ConfigError
from implicit_bench.protocol.prompt_templates import load_prompt
from implicit_bench.protocol.records import KGUnit, PromptTriplet

PROMPT = "triplet_generation"


class TripletAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    neutral: str
    stereotype_trigger: str
    anti_stereotype_trigger: str

    @field_validator("neutral", "stereotype_trigger", "anti_stereotype_trigger")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("empty prompt")
        return value.strip()


def messages_for(unit: KGUnit, sentences: tuple[str, str]) -> list[dict[str, str]]:
    text = load_prompt(PROMPT).render(
        target=unit.target or "",
        bias_type=unit.bias_type,
        axis=unit.axis or "",
        head=unit.head,
        relation=unit.relation or "",
        construction_mode=unit.construction_mode or "",
        shared_frame=unit.shared_frame or "",
        frame_sensitive=unit.frame_sensitive,
        stereotype_tails=", ".join(unit.stereotype_tails),
        anti_stereotype_tails=", ".join(unit.anti_stereotype_tails),
        stereotype_sentence=sentences[0],
        anti_stereotype_sentence=sentences[1],
    )
    return [{"role": "user", "content": text}]


def write(
    units: list[KGUnit], pairs: pd.DataFrame | None, params: dict[str, Any]
) -> list[WriteResult]:
    config = dict(params or {})
    where = config.pop("_where", "triplets.llm")
    if not config:
        raise ConfigError("params.yaml: triplets.writer is 'llm' but no LLM is configured")
    client = build_llm(config, where=where)
    sentences: dict[str, tuple[str, str]] = {}
    if pairs is not None and len(pairs):
        sentences = dict(
            zip(
                pairs["pair_id"],
                zip(pairs["stereotype_sentence"], pairs["anti_stereotype_sentence"], strict=True),
                strict=True,
            )
        )
    requests = [messages_for(u, sentences.get(u.source_pair_id, ("", ""))) for u in units]
    results = []
    for unit, answer in zip(
        units,
        chat_json_many(client, requests, TripletAnswer, desc="triplets: LLM writer"),
        strict=True,
    ):
        if not answer.valid:
            results.append(
                WriteResult(
                    unit.unit_id,
                    None,
                    answer.as_invalid_record(unit_id=unit.unit_id, bias_type=unit.bias_type),
                    answer,
                )
            )
            continue
        value: TripletAnswer = answer.value
        triplet = PromptTriplet(
            unit_id=unit.unit_id,
            neutral=value.neutral,
            stereotype=value.stereotype_trigger,
            anti_stereotype=value.anti_stereotype_trigger,
            writer=f"llm:{client.model}",
        )
        results.append(WriteResult(unit.unit_id, triplet, None, answer))
    return results
