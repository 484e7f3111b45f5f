"""Prompt rewriting and LLM sentence pairs (Section 5.1, Appendix F.6), through the LLM backends.

The instructions are the paper's, verbatim, in ``implicit_bench/prompts/debias/*.yaml``. The
rewriter gets the neutral prompt and, optionally, a unit (the retrieved one with the own unit
removed from the KG, or the prompt's own unit). The LLM pairs are written per KG unit. Every
call is cached by the LLM client; an empty rewrite or a pair answer that does not parse is an
invalid record, kept with its raw text and counted, and its unit is not rendered for that
configuration (never replaced by the neutral prompt).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from implicit_bench.hashing import stable_hash
from implicit_bench.llm import InvalidCounter, LLMClient, Messages, chat_json_many

# whether an answer came from the cache is run state: counted (run log), not a column
PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts" / "debias"
REWRITE_COLUMNS = (
    "unit_id", "info", "source_unit_id", "prompt", "valid", "error", "raw", "request_hash",
)
PAIR_COLUMNS = (
    "unit_id", "stereotype_prompt", "anti_stereotype_prompt", "valid", "error", "raw",
)


@dataclass(frozen=True)
class PromptSpec:
    name: str
    system: str
    user: str
    placeholders: tuple[str, ...]
    optional_lines: tuple[str, ...]

    @property
    def sha256(self) -> str:
        return stable_hash({"system": self.system, "user": self.user})


@cache
def load_prompt(name: str) -> PromptSpec:
    """A prompt file of ``implicit_bench/prompts/debias/``."""
    text = (PROMPT_DIR / f"{name}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    return PromptSpec(
        name=data["name"],
        system=data["system"],
        user=data["user"],
        placeholders=tuple(data["placeholders"]),
        optional_lines=tuple(data.get("optional_lines", ())),
    )


def fill(template: str, values: dict[str, str | None], spec: PromptSpec) -> str:
    """Substitute ``{name}`` for the spec's placeholders only (JSON braces are left alone); a
    line holding an optional placeholder whose value is missing is left out."""
    missing = {k for k in spec.placeholders if values.get(k) is None}
    required = missing - set(spec.optional_lines)
    if required:
        raise ValueError(f"prompt '{spec.name}' needs {', '.join(sorted(required))}")
    lines = [
        line for line in template.split("\n") if not any("{" + k + "}" in line for k in missing)
    ]
    out = "\n".join(lines)
    for key in spec.placeholders:
        if key not in missing:
            out = out.replace("{" + key + "}", str(values[key]))
    return out


def messages(name: str, **values: str | None) -> Messages:
    spec = load_prompt(name)
    return [
        {"role": "system", "content": fill(spec.system, values, spec)},
        {"role": "user", "content": fill(spec.user, values, spec)},
    ]


def _present(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(value).strip()
    return text or None


def unit_fields(unit: dict[str, Any]) -> dict[str, str | None]:
    """The four unit fields of F.6: head, relation (None when absent), the tails (joined with
    ", " as in the units table)."""
    return {
        "head": _present(unit.get("head")),
        "relation": _present(unit.get("relation")),
        "stereo_tails": _present(unit.get("stereotype")),
        "anti_tails": _present(unit.get("anti_stereotype")),
    }


def rewrite_messages(prompt: str, unit: dict[str, Any] | None) -> Messages:
    if unit is None:
        return messages("rewrite_no_unit", prompt=prompt)
    return messages("rewrite_with_unit", prompt=prompt, **unit_fields(unit))


def pair_messages(unit: dict[str, Any]) -> Messages:
    return messages("llm_pair", **unit_fields(unit))


_LABEL = re.compile(r"^\s*(rewritten prompt|prompt)\s*:\s*", re.IGNORECASE)
_QUOTES = ("\"\"", "''", "“”", "``")


def clean_rewrite(text: str) -> tuple[str | None, str | None]:
    """The rewritten prompt from an answer: whitespace, one leading "Rewritten prompt:" label
    and one pair of surrounding quotes removed; an empty answer is invalid."""
    out = _LABEL.sub("", text.strip(), count=1).strip()
    for pair in _QUOTES:
        if len(out) >= 2 and out[0] == pair[0] and out[-1] == pair[1]:
            out = out[1:-1].strip()
            break
    if not out:
        return None, "empty rewrite"
    return out, None


class PairAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    stereotype_prompt: str = Field(min_length=1)
    anti_stereotype_prompt: str = Field(min_length=1)

    @field_validator("stereotype_prompt", "anti_stereotype_prompt")
    @classmethod
    def _non_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


@dataclass(frozen=True)
class RewriteRequest:
    unit_id: str
    info: str  # none | removed | own
    source_unit_id: str | None  # the unit whose fields the instruction lists
    prompt: str  # the neutral prompt


def run_rewrites(
    client: LLMClient, requests: list[RewriteRequest], kg: dict[str, dict[str, Any]], max_tokens: int | None = None
) -> tuple[pd.DataFrame, InvalidCounter]:
    """Ask the rewriter for every request (cached, batched); one row per request."""
    chats = [
        rewrite_messages(r.prompt, None if r.source_unit_id is None else kg[r.source_unit_id])
        for r in requests
    ]
    answers = client.chat_many(chats, max_tokens=max_tokens, desc="rewrite: prompt rewrites")
    counter = InvalidCounter("rewrite")
    rows = []
    for request, answer in zip(requests, answers, strict=True):
        if answer.error is not None:
            prompt, error = None, f"call failed: {answer.error}"
        else:
            prompt, error = clean_rewrite(answer.text)
        counter.total += 1
        counter.cached += int(answer.cached)
        counter.modes["call_failed" if answer.error else ("strict" if prompt else "invalid")] += 1
        if prompt is None:
            counter.reasons[(error or "").split(":")[0]] += 1
        rows.append(
            {
                "unit_id": request.unit_id,
                "info": request.info,
                "source_unit_id": request.source_unit_id,
                "prompt": prompt,
                "valid": prompt is not None,
                "error": error,
                "raw": answer.text,
                "request_hash": answer.request_hash,
            }
        )
    return pd.DataFrame(rows, columns=list(REWRITE_COLUMNS)), counter


def run_pairs(
    client: LLMClient, units: list[dict[str, Any]], max_tokens: int | None = None
) -> tuple[pd.DataFrame, InvalidCounter]:
    """The LLM sentence pair of each unit (JSON answers, invalid ones kept with their raw text)."""
    answers = chat_json_many(client, [pair_messages(u) for u in units], PairAnswer, max_tokens=max_tokens, desc="rewrite: LLM sentence pairs")
    counter = InvalidCounter("llm_pair")
    rows = []
    for unit, answer in zip(units, answers, strict=True):
        counter.add(answer)
        value = answer.value if answer.valid else None
        rows.append(
            {
                "unit_id": str(unit["unit_id"]),
                "stereotype_prompt": value.stereotype_prompt if value else None,
                "anti_stereotype_prompt": value.anti_stereotype_prompt if value else None,
                "valid": answer.valid,
                "error": answer.error,
                "raw": answer.raw,
            }
        )
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS)), counter
