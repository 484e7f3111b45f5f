"""Typed, validated records: source pair, KG unit and prompt triplet."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from implicit_bench.protocol.schema import BIAS_TYPES

Source = Literal["stereoset", "crows_pairs"]
ConstructionMode = Literal["identity_instantiation", "attribute_substitution", "frame_preserving"]


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _non_empty(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("must not be empty")
    return value


class SourcePair(Record):
    """One stereotype / anti-stereotype sentence pair from StereoSet or CrowS-Pairs."""

    pair_id: str
    source: Source
    split: str
    bias_type: str
    target: str | None = None
    context: str | None = None
    stereotype_sentence: str
    anti_stereotype_sentence: str

    @field_validator("pair_id", "stereotype_sentence", "anti_stereotype_sentence")
    @classmethod
    def _required_text(cls, value: str) -> str:
        return _non_empty(value)

    @field_validator("bias_type")
    @classmethod
    def _known_bias_type(cls, value: str) -> str:
        if value not in BIAS_TYPES:
            raise ValueError(
                f"unknown bias type '{value}'; expected one of {', '.join(BIAS_TYPES)}"
            )
        return value


class KGUnit(Record):
    """A bias knowledge-graph unit (h, r, s, a) with its construction metadata."""

    unit_id: str
    source_pair_id: str
    source: Source
    bias_type: str
    head: str
    relation: str | None = None  # absent for CrowS-Pairs units, never the string "nan"
    stereotype_tails: list[str] = Field(min_length=1)
    anti_stereotype_tails: list[str] = Field(min_length=1)
    axis: str | None = None
    target: str | None = None
    construction_mode: ConstructionMode | None = None
    shared_frame: str | None = None
    frame_sensitive: bool = False
    stereotype_evidence: list[str] = Field(default_factory=list)
    anti_stereotype_evidence: list[str] = Field(default_factory=list)
    extractor: str

    @field_validator("head")
    @classmethod
    def _head(cls, value: str) -> str:
        return _non_empty(value)

    @field_validator("relation")
    @classmethod
    def _relation(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        return None if value.lower() in ("", "nan", "none", "null") else value

    @field_validator("stereotype_tails", "anti_stereotype_tails")
    @classmethod
    def _tails(cls, value: list[str]) -> list[str]:
        tails = [t.strip() for t in value if t and t.strip()]
        if not tails:
            raise ValueError("needs at least one non-empty tail")
        return tails

    @property
    def stereotype(self) -> str:
        return ", ".join(self.stereotype_tails)

    @property
    def anti_stereotype(self) -> str:
        return ", ".join(self.anti_stereotype_tails)


class PromptTriplet(Record):
    """Neutral, stereotype and anti-stereotype prompts of one unit, in one scene."""

    unit_id: str
    neutral: str
    stereotype: str
    anti_stereotype: str
    writer: str

    @field_validator("neutral", "stereotype", "anti_stereotype")
    @classmethod
    def _prompt(cls, value: str) -> str:
        return _non_empty(value)
