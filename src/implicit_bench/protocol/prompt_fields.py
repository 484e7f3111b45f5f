"""Placeholder values of one UNITS row (docs/judging.md, "Prompt fields").

Shared by the judge prompts (``judge_tasks``) and the simulated world (``world.truth``), so it
sits below both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implicit_bench.errors import InputError


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and value != value:  # NaN from pandas
        return None
    text = str(value).strip()
    return text or None


def _tails(unit: dict[str, Any], column: str, fallback: str) -> str | None:
    raw = unit.get(column)
    if isinstance(raw, str) and raw.strip().startswith("["):
        try:
            items = [str(t).strip() for t in json.loads(raw) if str(t).strip()]
        except json.JSONDecodeError:
            items = []
        if items:
            return ", ".join(items)
    elif isinstance(raw, (list, tuple)) or (hasattr(raw, "tolist") and not isinstance(raw, str)):
        items = [str(t).strip() for t in list(raw) if str(t).strip()]
        if items:
            return ", ".join(items)
    return _text(unit.get(fallback))


def unit_fields(unit: dict[str, Any], where: str | Path = "units") -> dict[str, str]:
    """Placeholder values of one UNITS row (docs/judging.md, "Prompt fields").

    ``target`` falls back to ``head`` when the unit has none (CrowS-Pairs units); an absent
    relation is rendered as an empty string, never "nan"; tails come from the JSON list columns
    when present (joined with ", "), else from ``stereotype`` / ``anti_stereotype``.
    """
    unit_id = _text(unit.get("unit_id")) or "?"
    fields: dict[str, str | None] = {
        "head": _text(unit.get("head")),
        "bias_type": _text(unit.get("bias_type")),
        "stereotype_tails": _tails(unit, "stereotype_tails", "stereotype"),
        "anti_stereotype_tails": _tails(unit, "anti_stereotype_tails", "anti_stereotype"),
        "prompt_neutral": _text(unit.get("prompt_neutral")),
    }
    for name, value in fields.items():
        if value is None:
            raise InputError(where, unit_id, name, "missing or empty (needed by the judge prompts)")
    fields["target"] = _text(unit.get("target")) or fields["head"]
    relation = _text(unit.get("relation"))
    fields["relation"] = (
        "" if relation is None or relation.lower() in ("nan", "none", "null") else relation
    )
    return fields  # type: ignore[return-value]
