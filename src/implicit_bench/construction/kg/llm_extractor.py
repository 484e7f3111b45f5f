"""The LLM extractor: paper Appendix F.2 prompt through any LLM backend, JSON -> KGUnit rows.

One user message per pair (the rendered template). For CrowS-Pairs the StereoSet-only (†)
lines ``target_group`` and ``context`` are omitted. The answer is parsed against
:class:`ExtractionAnswer`; an unparsable answer, or a unit that fails ``KGUnit`` validation
(empty head or tails), is an invalid record kept with its raw text. An answer with an empty
``units`` list is valid: the pair yields no unit (reason ``llm_no_unit``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from implicit_bench.backends.llm import LLMClient, StructuredAnswer, chat_json_many
from implicit_bench.construction.kg.minimal_pair import Extraction
from implicit_bench.protocol.prompt_templates import load_prompt
from implicit_bench.protocol.records import KGUnit, SourcePair

PROMPT = "kg_extraction"
MODES = ("identity_instantiation", "attribute_substitution", "frame_preserving")


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Concept(_Loose):
    tail: str
    evidence: str | None = ""


class Side(_Loose):
    concepts: list[Concept]


class UnitAnswer(_Loose):
    axis: str | None = None
    relation: str | None = None
    head: str
    construction_mode: str | None = None
    shared_frame: str | None = None
    frame_sensitive: bool | None = False
    stereotype_side: Side
    anti_stereotype_side: Side


class ExtractionAnswer(_Loose):
    target_group: str | None = None
    bias_category: str | None = None
    units: list[UnitAnswer]


def messages_for(pair: SourcePair) -> list[dict[str, str]]:
    """The F.2 prompt for one pair (StereoSet-only lines dropped for CrowS-Pairs)."""
    stereoset = pair.source == "stereoset"
    text = load_prompt(PROMPT).render(
        target=pair.target if stereoset else None,
        bias_category=pair.bias_type,
        context=pair.context if stereoset else None,
        stereotype=pair.stereotype_sentence,
        anti_stereotype=pair.anti_stereotype_sentence,
    )
    return [{"role": "user", "content": text}]


def units_from_answer(
    pair: SourcePair, answer: ExtractionAnswer, extractor: str
) -> tuple[list[KGUnit], list[str]]:
    """Turn a parsed answer into KGUnits; returns (units, reasons of the units that failed)."""
    units, problems = [], []
    for k, unit in enumerate(answer.units):
        mode = (unit.construction_mode or "").strip()
        try:
            units.append(
                KGUnit(
                    unit_id=f"{pair.pair_id}-u{k}",
                    source_pair_id=pair.pair_id,
                    source=pair.source,
                    bias_type=pair.bias_type,
                    head=unit.head,
                    relation=unit.relation,
                    stereotype_tails=[c.tail for c in unit.stereotype_side.concepts],
                    anti_stereotype_tails=[c.tail for c in unit.anti_stereotype_side.concepts],
                    axis=(unit.axis or None),
                    target=pair.target or (answer.target_group or None),
                    construction_mode=mode if mode in MODES else None,
                    shared_frame=(unit.shared_frame or None),
                    frame_sensitive=bool(unit.frame_sensitive),
                    stereotype_evidence=[
                        c.evidence or "" for c in unit.stereotype_side.concepts if c.tail.strip()
                    ],
                    anti_stereotype_evidence=[
                        c.evidence or ""
                        for c in unit.anti_stereotype_side.concepts
                        if c.tail.strip()
                    ],
                    extractor=extractor,
                )
            )
        except ValidationError as exc:
            err = exc.errors()[0]
            problems.append(f"unit {k}: {'.'.join(str(p) for p in err['loc'])}: {err['msg']}")
    return units, problems


def extract_all(
    pairs: list[SourcePair], client: LLMClient
) -> tuple[list[Extraction], list[StructuredAnswer], list[dict[str, Any]]]:
    """Ask the LLM for every pair. Returns extractions, the raw structured answers (for the
    counts) and the invalid records (answer-level and unit-level)."""
    answers = chat_json_many(
        client, [messages_for(p) for p in pairs], ExtractionAnswer, desc="kg: LLM extraction"
    )
    extractor = f"llm:{client.model}"
    results, invalid = [], []
    for pair, answer in zip(pairs, answers, strict=True):
        if not answer.valid:
            invalid.append(
                answer.as_invalid_record(
                    pair_id=pair.pair_id,
                    source=pair.source,
                    bias_type=pair.bias_type,
                    level="answer",
                )
            )
            results.append(Extraction(pair.pair_id, (), "llm_invalid_answer"))
            continue
        units, problems = units_from_answer(pair, answer.value, extractor)
        for problem in problems:
            invalid.append(
                {
                    "pair_id": pair.pair_id,
                    "source": pair.source,
                    "bias_type": pair.bias_type,
                    "level": "unit",
                    "raw": answer.raw,
                    "mode": "invalid",
                    "error": problem,
                }
            )
        reason = None if units else ("llm_invalid_units" if problems else "llm_no_unit")
        results.append(Extraction(pair.pair_id, tuple(units), reason))
    return results, answers, invalid
