"""What every triplet writer returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from implicit_bench.backends.llm.structured import StructuredAnswer
from implicit_bench.protocol.records import PromptTriplet


@dataclass(frozen=True)
class WriteResult:
    unit_id: str
    triplet: PromptTriplet | None  # None: the writer could not write it (see ``invalid``)
    invalid: dict[str, Any] | None = None
    answer: StructuredAnswer | None = None  # the model's answer, for LLM writers (counted)
