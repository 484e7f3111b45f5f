"""Answers that must be JSON: parsed against a pydantic schema, invalid ones kept and counted.

``chat_json_many`` never raises on a bad answer: an unparsable or schema-violating answer, or a
failed call, becomes a :class:`StructuredAnswer` with ``valid = False``, its raw text and the
reason; :class:`InvalidCounter` tallies them per stage for the metrics JSON.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from implicit_bench._util.jsonparse import parse_json_answer
from implicit_bench.backends.llm.base import LLMClient, Messages
from implicit_bench.runtime.failures import LLMUnavailableError, check_failure_rate  # noqa: F401 (re-exported)


@dataclass(frozen=True)
class StructuredAnswer:
    raw: str
    value: Any | None
    valid: bool
    mode: str  # strict | lenient | invalid | call_failed
    error: str | None
    cached: bool

    def as_invalid_record(self, **context: Any) -> dict[str, Any]:
        return {**context, "raw": self.raw, "mode": self.mode, "error": self.error}


def chat_json_many(
    client: LLMClient,
    requests: list[Messages],
    schema: type[BaseModel] | None = None,
    *,
    max_tokens: int | None = None,
    desc: str | None = None,
) -> list[StructuredAnswer]:
    """Ask every request and parse each answer as JSON against ``schema``
    (``desc``: progress label)."""
    out = []
    json_schema = answer_schema(schema) if schema is not None else None
    for answer in client.chat_many(
        requests, max_tokens=max_tokens, desc=desc, json_schema=json_schema
    ):
        if answer.error is not None:
            out.append(
                StructuredAnswer(
                    answer.text, None, False, "call_failed", answer.error, answer.cached
                )
            )
            continue
        parsed = parse_json_answer(answer.text, schema)
        out.append(
            StructuredAnswer(
                parsed.raw, parsed.value, parsed.valid, parsed.mode, parsed.error, answer.cached
            )
        )
    return out


_RETRY_PREFIX = re.compile(
    r"^(gave up after \d+ attempts?|deadline of [^;]* reached after \d+ attempt\(s\)); last: "
)


def reason_key(error: str | None) -> str:
    """A short category of an invalid answer's error, for counting: ``HTTP 503``,
    ``transport error``, ``malformed response``, ``json`` ... (the full text is kept apart)."""
    text = _RETRY_PREFIX.sub("", error or "unknown")
    return text.split(":")[0].strip() or "unknown"


def answer_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of an answer model, named for ``response_format`` (the lenient parser
    still reads the answer: a backend may ignore the schema)."""
    return {"name": model.__name__, "schema": model.model_json_schema()}


@dataclass
class InvalidCounter:
    """Counts answers per stage: total, valid (strict / lenient), invalid by reason."""

    stage: str
    total: int = 0
    modes: Counter = field(default_factory=Counter)
    reasons: Counter = field(default_factory=Counter)
    cached: int = 0

    examples: list[str] = field(default_factory=list)  # the first few failed calls' full errors

    def add(self, answer: StructuredAnswer) -> None:
        self.total += 1
        self.modes[answer.mode] += 1
        self.cached += int(answer.cached)
        if not answer.valid:
            self.reasons[reason_key(answer.error)] += 1
            if answer.mode == "call_failed" and len(self.examples) < 3:
                self.examples.append(answer.error or "unknown")

    def check_calls(self, max_failure_rate: float = 1.0) -> None:
        """Raise ``LLMUnavailableError`` when there were calls and every one of them failed
        (endpoint down, wrong URL or key), or more than ``max_failure_rate`` of them did: a
        stage must not write outputs and exit 0, or DVC would record the failed run."""
        check_failure_rate(
            self.stage,
            self.modes["call_failed"],
            self.total,
            max_failure_rate,
            self.examples[0] if self.examples else None,
        )

    @property
    def invalid(self) -> int:
        return self.total - self.modes["strict"] - self.modes["lenient"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "answers": self.total,
            "valid": self.total - self.invalid,
            "invalid": self.invalid,
            "lenient_parses": self.modes["lenient"],
            "call_failures": self.modes["call_failed"],
            "invalid_by_reason": dict(sorted(self.reasons.items())),
            "call_failure_examples": list(self.examples),
            "cache_hits": self.cached,
        }
