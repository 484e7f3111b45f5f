"""Answer kinds of judge tasks: how one answer value is read, checked, stored and validated.

A task YAML names its kind (``answer.kind``, docs/judging.md "Tasks"). A kind is one class
with the decorator :func:`answer_kind`; the built-in kinds are the four below. A kind defined
outside this module is named in the YAML as ``"package.module:Class"`` and imported lazily
(:func:`get_kind`), so a new kind is one module and never an edit here.

Every kind answers four questions:

- ``check_allowed(answer)``: is the task's declared answer space well formed (types, range)?
- ``normalise(value, answer)``: the allowed value of a JSON value, and whether it was coerced
  (``"3"`` -> 3 counts as lenient); ``ValueError`` when the value is not allowed;
- ``bare(text)``: the JSON value a bare answer (``A``, ``3``, ``true``) stands for;
- ``check_stored(values, spec)``: for ``implicit-bench analyze`` (docs/byo-judgements.md),
  which stored JUDGEMENTS values are wrong, with the reason, and the numeric ``score`` of
  each value (NaN where the kind has none).
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from implicit_bench._util.booleans import FALSE_WORDS, TRUE_WORDS
from implicit_bench.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd


class AnswerSpec(Protocol):
    """What a kind reads of a task's declared answer (``judge_tasks.AnswerSpec`` is one; a
    structural type, so this module does not import ``judge_tasks``, which imports it)."""

    key: str
    allowed: list[Any]
    range: tuple[float, float] | None
    note: str | None


class TaskSpec(Protocol):
    """What ``check_stored`` reads of a task (``judge_tasks.TaskSpec`` is one)."""

    name: str
    answer: AnswerSpec

    def stored_values(self) -> Any: ...


# A failing row mask and its reason (one text, or one text per row).
Problem = tuple["pd.Series", "str | pd.Series"]

_LETTER = re.compile(r"^(?:option\s+)?\(?([A-Za-z])\)?(?:[:.)]\s*.*)?$", re.DOTALL | re.IGNORECASE)


class AnswerKind:
    """How the answer of one kind is read and stored (one instance per kind)."""

    name: ClassVar[str]
    json_type: ClassVar[str]  # the JSON schema type of the answer (structured output)

    def check_allowed(self, answer: AnswerSpec) -> None:
        """Raise ValueError when the declared answer space does not fit this kind."""
        if not answer.allowed:
            raise ValueError(f"answer kind {self.name} needs a non-empty 'allowed' list")
        for value in answer.allowed:
            if not self.is_value(value):
                raise ValueError(f"allowed answer {value!r} is not of kind {self.name}")

    def is_value(self, value: Any) -> bool:
        raise NotImplementedError

    def normalise(self, value: Any, answer: AnswerSpec) -> tuple[Any, bool]:
        raise NotImplementedError

    def bare(self, text: str) -> Any | None:
        """The value a bare answer stands for (JSON scalars: ``3``, ``true``), else None."""
        try:
            value = json.loads(text.lower())
        except (ValueError, RecursionError):  # not JSON, an integer of 4300+ digits, deep nesting
            return None
        return None if isinstance(value, (dict, list)) else value

    def stored(self, value: Any) -> str:
        """The JUDGEMENTS ``value`` of an allowed answer when the task has no score map."""
        return str(value)

    def json_schema(self, answer: AnswerSpec) -> dict[str, Any]:
        return {"type": self.json_type, "enum": list(answer.allowed)}

    def check_stored(self, values: pd.Series, spec: TaskSpec) -> tuple[list[Problem], pd.Series]:
        """(problems, score) of stored values (strings) of valid rows of task ``spec``."""
        import numpy as np
        import pandas as pd

        domain = spec.stored_values()
        bad = ~values.isin(domain)
        reason = f"{spec.name} value must be {_one_of(domain)}, got '" + _text(values, bad) + "'"
        return [(bad, reason)], pd.Series(np.nan, index=values.index)


def _text(values: pd.Series, bad: pd.Series) -> pd.Series:
    """The failing cells as text, indexed like ``values`` (a reason is built for them only:
    texts for every valid row of a large table cost more than the check)."""
    return values[bad.to_numpy(dtype=bool)].astype(str)


def _one_of(values: tuple[str, ...]) -> str:
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"


def _number(values: pd.Series) -> pd.Series:
    from implicit_bench._util.text_numbers import text_floats

    return text_floats(values)


_KINDS: dict[str, AnswerKind] = {}


def answer_kind(cls: type[AnswerKind]) -> type[AnswerKind]:
    """Class decorator: register an answer kind under ``cls.name``."""
    if cls.name in _KINDS:
        raise ConfigError(f"answer kind '{cls.name}' is already registered")
    _KINDS[cls.name] = cls()
    return cls


def get_kind(name: str) -> AnswerKind:
    """The kind ``name`` (a registered name, or ``"module:Class"`` imported lazily)."""
    if name in _KINDS:
        return _KINDS[name]
    if ":" in name:
        from implicit_bench.runtime.registry import import_target

        try:
            cls = import_target(name)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"answer kind '{name}' cannot be imported: {exc}") from None
        if not (isinstance(cls, type) and issubclass(cls, AnswerKind)):
            raise ConfigError(f"answer kind '{name}' is not an AnswerKind class")
        _KINDS[name] = cls()
        return _KINDS[name]
    raise ConfigError(f"unknown answer kind '{name}'; known: {', '.join(kind_names())}")


def kind_names() -> list[str]:
    return sorted(n for n in _KINDS if ":" not in n)


# ----- the built-in kinds ------------------------------------------------------------------
@answer_kind
class IntegerKind(AnswerKind):
    """An integer scale (the rubric's 0..5). ``3``, ``3.0`` and ``"3"`` are read as 3."""

    name = "integer"
    json_type = "integer"

    def is_value(self, value: Any) -> bool:
        return type(value) is int

    def normalise(self, value: Any, answer: AnswerSpec) -> tuple[Any, bool]:
        allowed = answer.allowed
        if type(value) is int and value in allowed:
            return value, False
        if isinstance(value, float) and value.is_integer() and int(value) in allowed:
            return int(value), True
        if isinstance(value, str) and value.strip().lstrip("+").isdigit():
            number = int(value.strip())
            if number in allowed:
                return number, True
        raise ValueError(f"'{answer.key}' = {value!r} is not one of {allowed}")

    def check_stored(self, values: pd.Series, spec: TaskSpec) -> tuple[list[Problem], pd.Series]:
        # A real value inside the scale is the mean of repeated judgements (counted apart).
        low, high = min(spec.answer.allowed), max(spec.answer.allowed)
        num = _number(values)
        bad = num.isna() | ~num.between(low, high)
        reason = (
            f"{spec.name} score must be a number in {low}..{high} (an integer, or the mean of "
            "repeated judgements), got '" + _text(values, bad) + "'"
        )
        return [(bad, reason)], num


@answer_kind
class LetterKind(AnswerKind):
    """A lettered choice. ``"a"``, ``"A:"``, ``"(A)"``, ``"A) ..."``, ``"Option A"`` read as A."""

    name = "letter"
    json_type = "string"

    def is_value(self, value: Any) -> bool:
        return type(value) is str

    def normalise(self, value: Any, answer: AnswerSpec) -> tuple[Any, bool]:
        if isinstance(value, str):
            if value in answer.allowed:
                return value, False
            match = _LETTER.match(value.strip())
            if match and match.group(1).upper() in answer.allowed:
                return match.group(1).upper(), True
        raise ValueError(f"'{answer.key}' = {value!r} is not one of {answer.allowed}")

    def bare(self, text: str) -> Any | None:
        return text if len(text) == 1 else None

    def check_stored(self, values: pd.Series, spec: TaskSpec) -> tuple[list[Problem], pd.Series]:
        problems, score = super().check_stored(values, spec)
        domain = spec.stored_values()
        letters = [a for a in spec.answer.allowed if a not in domain]
        if letters:  # a letter stored where the task stores what the letter stood for
            letter = values.isin(letters)
            problems.insert(
                0, (letter, f"{spec.name} value is an option letter; store {_one_of(domain)}")
            )
        return problems, score


@answer_kind
class BooleanKind(AnswerKind):
    """Yes / no. ``true`` and the strings ``"true"`` / ``"false"`` (any case) are read."""

    name = "boolean"
    json_type = "boolean"

    def is_value(self, value: Any) -> bool:
        return type(value) is bool

    def normalise(self, value: Any, answer: AnswerSpec) -> tuple[Any, bool]:
        if type(value) is bool and value in answer.allowed:
            return value, False
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            flag = value.strip().lower() == "true"
            if flag in answer.allowed:
                return flag, True
        raise ValueError(f"'{answer.key}' = {value!r} is not one of {answer.allowed}")

    def stored(self, value: Any) -> str:
        return "true" if value else "false"

    def check_stored(self, values: pd.Series, spec: TaskSpec) -> tuple[list[Problem], pd.Series]:
        # stored true / false; 1 / 0 and yes / no (any case) are
        # read too (booleans.py: one vocabulary)
        text = values.astype(str).str.strip().str.lower()
        true, known = text.isin(TRUE_WORDS), text.isin(TRUE_WORDS | FALSE_WORDS)
        reason = f"{spec.name} value must be true or false, got '" + _text(values, ~known) + "'"
        return [(~known, reason)], true.astype(float).where(known)


@answer_kind
class NumberKind(AnswerKind):
    """A real number in a closed range (``answer.range``), e.g. the CLIP lean in [-2, 2]."""

    name = "number"
    json_type = "number"

    def check_allowed(self, answer: AnswerSpec) -> None:
        if answer.range is None or answer.allowed:
            raise ValueError(
                "answer kind number needs a 'range: [low, high]' and no 'allowed' list"
            )
        low, high = answer.range
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"answer range {answer.range} must be two finite numbers, low < high")

    def normalise(self, value: Any, answer: AnswerSpec) -> tuple[Any, bool]:
        low, high = answer.range or (-math.inf, math.inf)
        coerced = isinstance(value, str)
        try:
            number = float(value) if not isinstance(value, bool) else math.nan
        except (TypeError, ValueError):
            number = math.nan
        if math.isfinite(number) and low <= number <= high:
            return number, coerced
        raise ValueError(f"'{answer.key}' = {value!r} is not a number in [{low:g}, {high:g}]")

    def stored(self, value: Any) -> str:
        return repr(float(value))

    def json_schema(self, answer: AnswerSpec) -> dict[str, Any]:
        low, high = answer.range or (-math.inf, math.inf)
        return {"type": "number", "minimum": low, "maximum": high}

    def check_stored(self, values: pd.Series, spec: TaskSpec) -> tuple[list[Problem], pd.Series]:
        low, high = spec.answer.range or (-math.inf, math.inf)
        num = _number(values)
        bad = num.isna() | ~num.between(low, high)
        note = f" ({spec.answer.note})" if spec.answer.note else ""
        reason = (
            f"{spec.name} value must be a number in [{low:g}, {high:g}]{note}, got '"
            + _text(values, bad)
            + "'"
        )
        return [(bad, reason)], num


__all__ = [
    "AnswerKind",
    "BooleanKind",
    "IntegerKind",
    "LetterKind",
    "NumberKind",
    "answer_kind",
    "get_kind",
    "kind_names",
]
