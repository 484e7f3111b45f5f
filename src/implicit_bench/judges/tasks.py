"""Judge task specs: the Appendix F prompt, the allowed answers, the parser and the score map.

A task is data (``src/implicit_bench/prompts/judges/<name>.yaml``), validated on load. The
parser reads the model's answer strictly, then leniently (docs/judging.md, "Parsing"):

1. :func:`implicit_bench.jsonparse.parse_json_answer`: the whole answer as JSON, else the first
   fenced code block, else the first balanced ``{...}`` object; the object must hold the
   task's key with an allowed value (after the value normalisation below);
2. :func:`implicit_bench.jsonparse.scan_key`: the scalar after the first ``"key":`` (answers
   cut off after their key); the same value check;
3. a bare answer: the whole answer, stripped of whitespace, quotes and a trailing period, is
   one allowed value (``A``, ``3``, ``true``).

Value normalisation (also counted as lenient): ``integer`` accepts ``3``, ``3.0`` and ``"3"``;
``letter`` accepts ``"a"``, ``"A:"``, ``"(A)"``, ``"A) ..."``, ``"Option A"``; ``boolean``
accepts ``true`` and the strings ``"true"`` / ``"false"`` in any case. Anything else is an
invalid answer: value null, raw text kept, reason recorded.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, model_validator

from implicit_bench.errors import ConfigError, InputError
from implicit_bench.hashing import derive_seed
from implicit_bench.jsonparse import parse_json_answer, scan_key
from implicit_bench.params import StrictModel, format_validation_errors

TASK_NAMES: tuple[str, ...] = ("rubric", "blind", "alignment")
ORDERS: tuple[str, ...] = ("sa", "as")
# Three cyclic option orders (When the Judge Acts): the candidates sorted by id (a, neither, s)
# and their rotations; letter i is the candidate in slot A, B, C (n = neither).
CYCLIC_ORDERS: tuple[str, ...] = ("ans", "nsa", "san")
CANDIDATE_LABELS: dict[str, str] = {"s": "s", "a": "a", "n": "neither"}
NEITHER_OPTION = "Neither of the other two descriptions is shown, or the image does not allow a judgement."
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_LETTER = re.compile(r"^(?:option\s+)?\(?([A-Za-z])\)?(?:[:.)]\s*.*)?$", re.DOTALL | re.IGNORECASE)


class AnswerSpec(StrictModel):
    key: str
    kind: Literal["integer", "letter", "boolean"]
    allowed: list[Any]


class TaskSpec(StrictModel):
    """One judge task, as written in its YAML file."""

    name: Literal["rubric", "blind", "alignment"]
    source: str
    placeholders: list[str]
    prompt: str
    answer: AnswerSpec
    score_map: dict[Any, str]
    _answer_model: type[BaseModel] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self) -> TaskSpec:
        used = set(_PLACEHOLDER.findall(self.prompt))
        if used != set(self.placeholders):
            raise ValueError(
                f"prompt placeholders {sorted(used)} differ from declared {sorted(self.placeholders)}"
            )
        kinds = {"integer": int, "letter": str, "boolean": bool}
        for value in self.answer.allowed:
            if type(value) is not kinds[self.answer.kind]:
                raise ValueError(f"allowed answer {value!r} is not of kind {self.answer.kind}")
        if set(self.score_map) != set(self.answer.allowed) or len(self.score_map) != len(self.answer.allowed):
            raise ValueError("score_map keys must be exactly the allowed answers")
        if self.name == "blind" and set(self.score_map.values()) != {"option_a", "option_b", "neither"}:
            raise ValueError("blind score_map values must be option_a, option_b and neither")
        return self

    # ----- prompts -------------------------------------------------------------------------
    def render(self, fields: dict[str, str]) -> str:
        """The prompt with every placeholder filled (JSON braces in the text are left alone)."""
        missing = [p for p in self.placeholders if p not in fields]
        if missing:
            raise KeyError(f"task {self.name}: no value for {', '.join(missing)}")
        return _PLACEHOLDER.sub(
            lambda m: str(fields[m.group(1)]) if m.group(1) in self.placeholders else m.group(0),
            self.prompt,
        )

    # ----- answers -------------------------------------------------------------------------
    def normalise(self, value: Any) -> tuple[Any, bool]:
        """``(allowed value, coerced)``; raises ValueError when ``value`` is not allowed."""
        allowed = self.answer.allowed
        kind = self.answer.kind
        if kind == "integer":
            if type(value) is int and value in allowed:
                return value, False
            if isinstance(value, float) and value.is_integer() and int(value) in allowed:
                return int(value), True
            if isinstance(value, str) and value.strip().lstrip("+").isdigit():
                number = int(value.strip())
                if number in allowed:
                    return number, True
        elif kind == "letter":
            if isinstance(value, str):
                if value in allowed:
                    return value, False
                match = _LETTER.match(value.strip())
                if match and match.group(1).upper() in allowed:
                    return match.group(1).upper(), True
        elif kind == "boolean":
            if type(value) is bool and value in allowed:
                return value, False
            if isinstance(value, str) and value.strip().lower() in ("true", "false"):
                flag = value.strip().lower() == "true"
                if flag in allowed:
                    return flag, True
        raise ValueError(f"'{self.answer.key}' = {value!r} is not one of {allowed}")

    def json_schema(self) -> dict[str, Any]:
        """The answer as a named JSON schema for ``response_format`` (structured output): one
        required key whose value is one of the allowed answers."""
        kinds = {"integer": "integer", "letter": "string", "boolean": "boolean"}
        return {
            "name": f"{self.name}_answer",
            "schema": {
                "type": "object",
                "properties": {self.answer.key: {"type": kinds[self.answer.kind], "enum": list(self.answer.allowed)}},
                "required": [self.answer.key],
                "additionalProperties": False,
            },
        }

    @property
    def answer_model(self) -> type[BaseModel]:
        if self._answer_model is None:
            self._answer_model = _make_answer_model(self)
        return self._answer_model

    def parse(self, raw: str | None) -> ParsedJudgement:
        """Read the answer: strict, then lenient; the parsed value before the order is applied."""
        first = parse_json_answer(raw, self.answer_model)
        if first.valid:
            mode = "lenient" if first.value.coerced or first.mode == "lenient" else "strict"
            return ParsedJudgement(first.value.value, True, mode, None)
        found, value, _ = scan_key(raw, self.answer.key)
        if found:
            try:
                answer, _ = self.normalise(value)
                return ParsedJudgement(answer, True, "lenient", None)
            except ValueError as exc:
                return ParsedJudgement(None, False, "invalid", str(exc))
        bare = (raw or "").strip().strip("\"'`").rstrip(".").strip()
        if bare:
            try:
                candidate = json.loads(bare.lower()) if self.answer.kind != "letter" else bare
            except json.JSONDecodeError:
                candidate = None
            if candidate is not None and not isinstance(candidate, (dict, list)):
                if self.answer.kind == "letter" and len(bare) != 1:
                    candidate = None
                if candidate is not None:
                    try:
                        answer, _ = self.normalise(candidate)
                        return ParsedJudgement(answer, True, "lenient", None)
                    except ValueError:
                        pass
        error = (first.error or "unreadable").replace("schema: : Value error, ", "schema: ")
        return ParsedJudgement(None, False, "invalid", error)

    def stored_value(self, answer: Any, order: str | None = None) -> str:
        """The JUDGEMENTS value of a parsed answer: "0".."5", s / a / neither, true / false.

        A blind answer is stored as the attribute chosen, never the letter: under a two-letter
        order the slot A / B is s or a and C is neither; under a cyclic order (three letters)
        the slot's candidate is read from the order."""
        mapped = self.score_map[answer]
        if self.name != "blind":
            return mapped
        if order in CYCLIC_ORDERS:
            slot = {"option_a": 0, "option_b": 1, "neither": 2}[mapped]
            return CANDIDATE_LABELS[order[slot]]
        if order not in ORDERS:
            raise ValueError(f"blind answers need an order in {ORDERS}, got {order!r}")
        if mapped == "neither":
            return "neither"
        first, second = order[0], order[1]
        return first if mapped == "option_a" else second


@dataclass(frozen=True)
class ParsedJudgement:
    answer: Any | None  # the allowed value (0..5, "A"/"B"/"C", True/False), before the order
    valid: bool
    mode: str  # strict | lenient | invalid
    error: str | None


def _make_answer_model(spec: TaskSpec) -> type[BaseModel]:
    key = spec.answer.key

    class Answer(BaseModel):
        model_config = ConfigDict(extra="forbid")
        value: Any
        coerced: bool

        @model_validator(mode="before")
        @classmethod
        def _read(cls, data: Any) -> Any:
            if not isinstance(data, dict):
                raise ValueError("answer is not a JSON object")
            if key not in data:
                raise ValueError(f"no '{key}' key")
            value, coerced = spec.normalise(data[key])
            return {"value": value, "coerced": coerced}

    Answer.__name__ = f"{spec.name.capitalize()}Answer"
    return Answer


def load_task_file(path: str | Path) -> TaskSpec:
    """Load and validate one task spec file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return TaskSpec.model_validate(data)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read task spec: {exc}") from None
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid task spec: {format_validation_errors(exc)}") from None


@cache
def load_task(name: str) -> TaskSpec:
    """The built-in task ``name`` (rubric | blind | alignment)."""
    if name not in TASK_NAMES:
        raise ConfigError(f"unknown judge task '{name}'; known: {', '.join(TASK_NAMES)}")
    path = resources.files("implicit_bench") / "prompts" / "judges" / f"{name}.yaml"
    return load_task_file(Path(str(path)))


# ----- unit fields -------------------------------------------------------------------------
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
    fields["relation"] = "" if relation is None or relation.lower() in ("nan", "none", "null") else relation
    return fields  # type: ignore[return-value]


def cyclic_order(unit_id: str, seed: int, variant: str) -> str:
    """The primary ("order 1") of the three cyclic orders of one image: the rotation offset is
    drawn from a hash of (unit, seed, image type) (definitions note)."""
    return CYCLIC_ORDERS[derive_seed("cyclic_order", str(unit_id), int(seed), str(variant)) % 3]


def primary_order(unit_id: str, seed: int, variant: str, order: str | None) -> str:
    """The primary order of an image whose blind rows carry ``order``: the cyclic primary for a
    cyclic order, else the two-order hash order."""
    if order in CYCLIC_ORDERS:
        return cyclic_order(unit_id, seed, variant)
    return blind_order(unit_id, seed, variant)


@cache
def load_blind_cyclic() -> TaskSpec:
    """The blind prompt of the three cyclic orders (prompts/judges/blind_cyclic.yaml)."""
    path = resources.files("implicit_bench") / "prompts" / "judges" / "blind_cyclic.yaml"
    return load_task_file(Path(str(path)))


def blind_order(unit_id: str, seed: int, variant: str) -> str:
    """The option order of one image: "sa" (s is option A) or "as", from a hash of
    (unit, seed, image type), so s is option A for about half of the images."""
    return ORDERS[derive_seed("blind_order", str(unit_id), int(seed), str(variant)) % 2]


def task_fields(task: TaskSpec, fields: dict[str, str], order: str | None = None) -> dict[str, str]:
    """The placeholder values of ``task`` for one unit (and, for blind, one option order)."""
    if task.name != "blind":
        return {p: fields[p] for p in task.placeholders}
    options = {"s": fields["stereotype_tails"], "a": fields["anti_stereotype_tails"], "n": NEITHER_OPTION}
    if order in CYCLIC_ORDERS:
        return {"head": fields["head"], "a": options[order[0]], "b": options[order[1]], "c": options[order[2]]}
    if order not in ORDERS:
        raise ValueError(f"blind prompts need an order in {ORDERS} or {CYCLIC_ORDERS}, got {order!r}")
    return {"head": fields["head"], "a": options[order[0]], "b": options[order[1]]}
