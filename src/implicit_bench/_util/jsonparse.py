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
# the whitespace after the opening fence is taken possessively (``\s*+``): backtracking into it
# rescanned the rest of the answer once per whitespace character when the fence never closes
# (quadratic: an unclosed fence and 20,000 newlines took 3.2 s, a million would take hours)
_FENCE = re.compile(r"```(?:json|JSON)?\s*+(.*?)```", re.DOTALL)
_TOKENS = re.compile(
    r'\\.|[{}"]', re.DOTALL
)  # what the object scan looks at: an escape pair, a brace, a quote


@dataclass(frozen=True)
class ParsedAnswer:
    raw: str
    value: Any | None
    valid: bool
    mode: str  # strict | lenient | invalid
    error: str | None = None


MAX_ANSWER_CHARS = 1_000_000  # longer answers are invalid unparsed (docs/errors.md)


class DuplicateKeyError(ValueError):
    """A JSON object names one key twice (``{"score": 0, "score": 5}``): ambiguous, invalid."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"duplicate key {key[:40]!r}")
        out[key] = value
    return out


def loads_strict(text: str | bytes) -> Any:
    """``json.loads`` of a model's or an API's answer, with an object naming a key twice an
    error (json would keep the last value) and nesting too deep a ValueError (not a
    RecursionError). Every answer body and answer text is read through it."""
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _first_object(text: str) -> str | None:
    """The first balanced ``{...}`` in one pass (linear: 40,000 ``{`` took 52.6 s when every
    ``{`` started a scan of its own): braces inside strings are skipped; when the first ``{``
    never closes, the object with the earliest start among those that do is returned."""
    stack: list[int] = []
    best: tuple[int, int] | None = None
    in_string = saw_quote = False
    for match in _TOKENS.finditer(text, max(text.find("{"), 0)):
        char, pos = match.group(), match.start()
        if in_string:
            in_string = char != '"'  # an escape pair never closes the string
            continue
        if char[0] == "\\":  # outside a string a backslash is plain text: look at what follows
            char, pos = char[1:], pos + 1
        if char == '"':
            in_string = saw_quote = bool(stack)  # a quote before any open brace starts no string
        elif char == "{":
            stack.append(pos)
        elif char == "}" and stack:
            start = stack.pop()
            if not stack:
                return text[start : pos + 1]
            if best is None or start < best[0]:
                best = (start, pos + 1)
    if best:
        return text[best[0] : best[1]]
    if saw_quote:  # where strings start depends on the start: retry from the next few "{"
        return _rescan(text, RESCAN_STARTS)
    return None


RESCAN_STARTS = 16  # bounded: 16 linear scans at most, never one per "{"


def _rescan(text: str, starts: int) -> str | None:
    start = text.find("{", text.find("{") + 1)
    while start != -1 and starts > 0:
        starts -= 1
        depth, in_string = 0, False
        for match in _TOKENS.finditer(text, start):
            char, pos = match.group(), match.start()
            if in_string:
                in_string = char != '"'
                continue
            if char[0] == "\\":
                char, pos = char[1:], pos + 1
            if char == '"':
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
    if len(raw) > MAX_ANSWER_CHARS:
        return ParsedAnswer(
            raw,
            None,
            False,
            "invalid",
            f"answer of {len(raw)} characters, longer than {MAX_ANSWER_CHARS}: not parsed",
        )
    last_error = "no JSON object found"
    for mode, candidate in _candidates(raw):
        try:
            value = loads_strict(candidate)
        except json.JSONDecodeError as exc:
            last_error = f"not JSON: {exc.msg}"
            continue
        except DuplicateKeyError as exc:
            last_error = f"ambiguous JSON: {exc}"
            continue
        except ValueError as exc:  # nested too deeply, or an integer of more than 4300 digits
            last_error = f"not JSON: {str(exc)[:80]}"
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
        except ValueError:  # not JSON, or an integer too long to convert
            continue
    if not values:
        return False, None, f"no '{key}' value found"
    if any(v != values[0] or type(v) is not type(values[0]) for v in values[1:]):
        return False, None, f"ambiguous: '{key}' given {len(values)} different values"
    return True, values[0], None
