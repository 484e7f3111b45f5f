"""Reading JSON answers from models: strict first, then a documented lenient fallback.

Strict: the whole answer (surrounding whitespace stripped) is one JSON value.
Lenient (in this order, first success wins):
  1. the content of the first fenced code block (```json ... ``` or ``` ... ```);
  2. the first balanced ``{...}`` object in the text (braces inside strings respected).
Opt-in third fallback, :func:`scan_key` (used by the judge tasks, docs/judging.md): the JSON
scalar after the first ``"key":`` in the text, which recovers answers cut off after their key
(``{"score": 4, "justification": "The ima``); if the key occurs with different values the
answer is ambiguous and stays invalid.
The parsed value is then validated against a pydantic model when one is given. An answer
that still cannot be read is an invalid result: kept with its raw text and the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

_SCALAR = r'("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)'
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class ParsedAnswer:
    raw: str
    value: Any | None
    valid: bool
    mode: str  # strict | lenient | invalid
    error: str | None = None


def _first_object(text: str) -> str | None:
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for pos in range(start, len(text)):
            char = text[pos]
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return text[start : pos + 1]
        start = text.find("{", start + 1)
    return None


def _candidates(text: str) -> list[tuple[str, str]]:
    found = [("strict", text.strip())]
    fence = _FENCE.search(text)
    if fence:
        found.append(("lenient", fence.group(1).strip()))
    obj = _first_object(text)
    if obj is not None:
        found.append(("lenient", obj))
    return found


def parse_json_answer(raw: str | None, model: type[BaseModel] | None = None) -> ParsedAnswer:
    """Parse ``raw`` as JSON (strict, then lenient) and validate it against ``model``."""
    if raw is None or not raw.strip():
        return ParsedAnswer(raw or "", None, False, "invalid", "empty answer")
    last_error = "no JSON object found"
    for mode, candidate in _candidates(raw):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError as exc:
            last_error = f"not JSON: {exc.msg}"
            continue
        if model is not None:
            try:
                value = model.model_validate(value)
            except ValidationError as exc:
                err = exc.errors()[0]
                last_error = f"schema: {'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                continue
        return ParsedAnswer(raw, value, True, mode)
    return ParsedAnswer(raw, None, False, "invalid", last_error)


def scan_key(raw: str | None, key: str) -> tuple[bool, Any, str | None]:
    """The JSON scalar after ``"key":`` in ``raw``: ``(found, value, error)``.

    Not found -> ``(False, None, reason)``; the key occurring with different values ->
    ``(False, None, "ambiguous ...")``.
    """
    if not raw:
        return False, None, "empty answer"
    pattern = re.compile(r'"' + re.escape(key) + r'"\s*:\s*' + _SCALAR)
    values = []
    for match in pattern.finditer(raw):
        try:
            values.append(json.loads(match.group(1)))
        except json.JSONDecodeError:
            continue
    if not values:
        return False, None, f"no '{key}' value found"
    if any(v != values[0] or type(v) is not type(values[0]) for v in values[1:]):
        return False, None, f"ambiguous: '{key}' given {len(values)} different values"
    return True, values[0], None
