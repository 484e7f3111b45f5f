"""Judge tasks: a registry of spec files, each a prompt, an answer kind and a score map.

A task is data: one YAML file ``src/implicit_bench/prompts/judges/<name>.yaml``, found by
:class:`TaskRegistry` (no list of task names anywhere else), validated on load. Its answer
kind (``integer``, ``letter``, ``boolean``, ``number``, or a ``"module:Class"`` of one's own)
comes from :mod:`implicit_bench.protocol.answer_kinds`. Adding a task is its YAML file (and, for a
new kind of answer, one module): docs/extending.md, "Extending".

The parser reads the model's answer strictly, then leniently (docs/judging.md, "Parsing"):

1. :func:`implicit_bench._util.jsonparse.parse_json_answer`: the whole answer as JSON, else the
first
   fenced code block, else the first balanced ``{...}`` object; the object must hold the
   task's key with an allowed value (after the kind's value normalisation);
2. :func:`implicit_bench._util.jsonparse.scan_key`: the scalar after the first ``"key":`` (answers
   cut off after their key); the same value check;
3. a bare answer: the whole answer, stripped of whitespace, quotes and a trailing period, is
   one allowed value (``A``, ``3``, ``true``).

Value normalisation (also counted as lenient) is the kind's: ``integer`` accepts ``3``,
``3.0`` and ``"3"``; ``letter`` accepts ``"a"``, ``"A:"``, ``"(A)"``, ``"A) ..."``,
``"Option A"``; ``boolean`` accepts ``true`` and the strings ``"true"`` / ``"false"`` in any
case. Anything else is an invalid answer: value null, raw text kept, reason recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from implicit_bench._util.jsonparse import parse_json_answer, scan_key
from implicit_bench._util.yamlsafe import load_yaml_file
from implicit_bench.errors import ConfigError
from implicit_bench.params import StrictModel, format_validation_errors
from implicit_bench.protocol.answer_kinds import AnswerKind, get_kind
from implicit_bench.protocol.schema import (  # noqa: F401 - the protocol's orders, re-exported for judges/
    BLIND_LABELS,
    CANDIDATE_LABELS,
    CYCLIC_ORDERS,
    ORDERS,
    blind_order,
    cyclic_order,
    primary_order,
)

NEITHER_OPTION = (
    "Neither of the other two descriptions is shown, or the image does not allow a judgement."
)
# The stored values of an option-order task: the attribute chosen, never the letter.
OPTION_LABELS: tuple[str, ...] = BLIND_LABELS
OPTION_SLOTS: frozenset[str] = frozenset({"option_a", "option_b", "neither"})
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class AnswerSpec(StrictModel):
    """The answer of a task: its JSON key, its kind and the values it may take."""

    key: str
    kind: str  # a registered answer kind (answer_kinds.py) or "module:Class"
    allowed: list[Any] = []
    range: tuple[float, float] | None = None  # kind number: the closed interval of values
    note: str | None = None  # what the value means, named in validation messages


class TaskSpec(StrictModel):
    """One judge task, as written in its YAML file."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")  # equals the file's stem
    source: str
    placeholders: list[str] = []
    prompt: str | None = None  # null: not asked of a judge; another stage writes the rows
    producer: str | None = None  # the stage that writes a prompt-less task's rows (clip)
    answer: AnswerSpec
    score_map: dict[Any, str] | None = None  # allowed answer -> stored value (default: the kind's)
    variants: list[str] | None = None  # the image variants a row may describe (null: any)
    # Options A and B are the unit's stereotype s and anti-stereotype a in a per-image order
    # (judge.blind_orders), C is "neither"; the stored value is the attribute, never the letter.
    option_order: bool = False
    cyclic_prompt: str | None = None  # spec file (stem) asked under judge.blind_orders: cyclic3
    _answer_model: type[BaseModel] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self) -> TaskSpec:
        used = set(_PLACEHOLDER.findall(self.prompt or ""))
        if used != set(self.placeholders):
            raise ValueError(
                f"prompt placeholders {sorted(used)} differ from "
                f"declared {sorted(self.placeholders)}"
            )
        if (self.prompt is None) == (self.producer is None):
            raise ValueError(
                "a task has either a prompt (asked of a judge) or a "
                "producer (the stage writing its rows)"
            )
        try:
            self.kind.check_allowed(self.answer)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        if self.score_map is not None and (
            set(self.score_map) != set(self.answer.allowed)
            or len(self.score_map) != len(self.answer.allowed)
        ):
            raise ValueError("score_map keys must be exactly the allowed answers")
        if self.option_order:
            if (
                self.answer.kind != "letter"
                or self.score_map is None
                or set(self.score_map.values()) != OPTION_SLOTS
            ):
                raise ValueError(
                    "an option_order task answers a letter whose score_map "
                    "values are option_a, option_b and neither"
                )
        elif self.cyclic_prompt is not None:
            raise ValueError("cyclic_prompt needs option_order: true")
        if self.variants is not None:
            from implicit_bench.protocol.schema import ALL_VARIANTS

            known = ALL_VARIANTS
            unknown = [v for v in self.variants if v not in known]
            if unknown or not self.variants:
                raise ValueError(
                    f"variants {unknown or '[]'} are not image variants ({', '.join(known)})"
                )
        return self

    @property
    def kind(self) -> AnswerKind:
        return get_kind(self.answer.kind)

    @property
    def asked(self) -> bool:
        """Whether a judge is asked this task (it has a prompt)."""
        return self.prompt is not None

    # ----- prompts -------------------------------------------------------------------------
    def render(self, fields: dict[str, str]) -> str:
        """The prompt with every placeholder filled (JSON braces in the text are left alone)."""
        if self.prompt is None:
            raise ConfigError(
                f"task {self.name} has no prompt: its rows are written by the {self.producer} stage"
            )
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
        return self.kind.normalise(value, self.answer)

    def json_schema(self) -> dict[str, Any]:
        """The answer as a named JSON schema for ``response_format`` (structured output): one
        required key whose value is one of the allowed answers."""
        return {
            "name": f"{self.name}_answer",
            "schema": {
                "type": "object",
                "properties": {self.answer.key: self.kind.json_schema(self.answer)},
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
        candidate = self.kind.bare(bare) if bare else None
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

        An option-order (blind) answer is stored as the attribute chosen, never the letter:
        under a two-letter order the slot A / B is s or a and C is neither; under a cyclic
        order (three letters) the slot's candidate is read from the order."""
        if not self.option_order:
            return (
                self.score_map[answer] if self.score_map is not None else self.kind.stored(answer)
            )
        mapped = self.score_map[answer]  # type: ignore[index]  (checked: option_order has one)
        if order in CYCLIC_ORDERS:
            slot = {"option_a": 0, "option_b": 1, "neither": 2}[mapped]
            return CANDIDATE_LABELS[order[slot]]
        if order not in ORDERS:
            raise ValueError(f"{self.name} answers need an order in {ORDERS}, got {order!r}")
        if mapped == "neither":
            return "neither"
        first, second = order[0], order[1]
        return first if mapped == "option_a" else second

    def stored_values(self) -> tuple[str, ...]:
        """Every value a valid row of this task may store (for a ranged kind: none listed)."""
        if self.option_order:
            return OPTION_LABELS
        if self.score_map is not None:
            return tuple(dict.fromkeys(self.score_map.values()))
        return tuple(dict.fromkeys(self.kind.stored(a) for a in self.answer.allowed))


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
        data = load_yaml_file(path)  # not UTF-8 or not YAML: a ConfigError naming the file
        return TaskSpec.model_validate(data)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read task spec: {exc}") from None
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid task spec: {format_validation_errors(exc)}") from None


# ----- the registry ------------------------------------------------------------------------
class TaskRegistry:
    """The judge tasks of folders of spec files: every ``<name>.yaml`` is the task ``name``;
    a file that another task names as its ``cyclic_prompt`` is a prompt of that task."""

    def __init__(self, folders: Iterable[str | Path]):
        self.folders = [Path(f) for f in folders]
        files: dict[str, Path] = {}
        for folder in self.folders:
            for path in sorted(folder.glob("*.yaml")):
                if path.stem in files:
                    raise ConfigError(
                        f"{path}: task file '{path.stem}' is also in {files[path.stem].parent}"
                    )
                files[path.stem] = path
        specs = {stem: load_task_file(path) for stem, path in files.items()}
        prompts = {s.cyclic_prompt: s.name for s in specs.values() if s.cyclic_prompt}
        self._prompts: dict[str, TaskSpec] = {}
        self._tasks: dict[str, TaskSpec] = {}
        for stem, spec in specs.items():
            if stem in prompts:
                if spec.name != prompts[stem] or not spec.option_order:
                    raise ConfigError(
                        f"{files[stem]}: the cyclic prompt of '{prompts[stem]}' "
                        "must have its name and option_order"
                    )
                self._prompts[stem] = spec
            elif spec.name != stem:
                raise ConfigError(
                    f"{files[stem]}: names task '{spec.name}'; a task's file is <name>.yaml"
                )
            else:
                self._tasks[stem] = spec
        missing = sorted(p for p in prompts if p not in specs)
        if missing:
            raise ConfigError(
                f"cyclic_prompt file(s) {missing} not found in {', '.join(map(str, self.folders))}"
            )

    def names(self) -> tuple[str, ...]:
        """Every task, sorted (the ``task`` values a JUDGEMENTS table may hold)."""
        return tuple(sorted(self._tasks))

    def asked(self) -> tuple[str, ...]:
        """The tasks a judge can be asked (those with a prompt)."""
        return tuple(n for n in self.names() if self._tasks[n].asked)

    def get(self, name: str) -> TaskSpec:
        try:
            return self._tasks[name]
        except KeyError:
            raise ConfigError(
                f"unknown judge task '{name}'; known: {', '.join(self.names())}"
            ) from None

    def cyclic(self, name: str) -> TaskSpec:
        """The prompt of task ``name`` under the three cyclic option orders."""
        spec = self.get(name)
        if spec.cyclic_prompt is None:
            raise ConfigError(
                f"judge task '{name}' has no cyclic_prompt (judge.blind_orders: cyclic3)"
            )
        return self._prompts[spec.cyclic_prompt]

    def __iter__(self) -> Iterator[TaskSpec]:
        return (self._tasks[n] for n in self.names())


TASKS_FOLDER = "prompts/judges"  # the package's folder of task spec files


def builtin_folder() -> Path:
    """The package's folder of task spec files."""
    return Path(str(resources.files("implicit_bench").joinpath(TASKS_FOLDER)))


@cache
def task_registry() -> TaskRegistry:
    """The registry of the package's task files (read once per process)."""
    return TaskRegistry([builtin_folder()])


def load_task(name: str) -> TaskSpec:
    """The registered task ``name``."""
    return task_registry().get(name)


def task_names() -> tuple[str, ...]:
    """Every registered task: one per YAML file in prompts/judges/ (what
    JUDGE_TASKS listed by hand)."""
    return task_registry().names()


def task_fields(task: TaskSpec, fields: dict[str, str], order: str | None = None) -> dict[str, str]:
    """The placeholder values of ``task`` for one unit (and, for an option-order task such as
    blind, one option order)."""
    if not task.option_order:
        return {p: fields[p] for p in task.placeholders}
    options = {
        "s": fields["stereotype_tails"],
        "a": fields["anti_stereotype_tails"],
        "n": NEITHER_OPTION,
    }
    if order in CYCLIC_ORDERS:
        return {
            "head": fields["head"],
            "a": options[order[0]],
            "b": options[order[1]],
            "c": options[order[2]],
        }
    if order not in ORDERS:
        raise ValueError(
            f"blind prompts need an order in {ORDERS} or {CYCLIC_ORDERS}, got {order!r}"
        )
    return {"head": fields["head"], "a": options[order[0]], "b": options[order[1]]}
