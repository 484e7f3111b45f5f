"""The pieces of a typed JSON-file contract (``protocol.benchmark_file``,
``protocol.summary_file``, ``protocol.human_eval_file``): strict scalar types, an Estimate's
JSON form, models that allow unknown keys (a producer may add keys without breaking a reader)
and one ``parse`` that turns the first validation error into a one-line ``InputError`` naming
the file and the field (``leaderboard.rows[2].n_units``; docs/errors.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from implicit_bench.errors import InputError
from implicit_bench.protocol.estimate import Estimate


def _estimate(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is not None:
        Estimate.from_json(value)  # a ConfigError (a ValueError) names what is wrong
    return value


#: an Estimate's JSON form (docs/metrics.md) or null
Est = Annotated[dict[str, Any] | None, AfterValidator(_estimate)]
#: strict: an int or a float as written (50 stays 50, not 50.0), never a string or a bool
Num = int | float | None
Count = int | None


class Open(BaseModel):
    """A JSON object with typed known keys; unknown keys are kept and not checked."""

    model_config = ConfigDict(strict=True, extra="allow", protected_namespaces=())


M = TypeVar("M", bound=BaseModel)


def _field(loc: tuple[Any, ...]) -> str:
    """``("leaderboard", "rows", 2, "n_units")`` -> ``leaderboard.rows[2].n_units``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).startswith(
            ("function-", "union[", "float", "int", "dict[", "list[", "str", "bool")
        ):
            out += f".{part}" if out else str(part)
    return out


def parse(model: type[M], payload: Any, path: str | Path) -> M:
    """``payload`` (a file's parsed JSON) as ``model``; the first error as one ``InputError``."""
    if not isinstance(payload, dict):
        raise InputError(path, None, None, f"not a JSON object ({type(payload).__name__})")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        errors = exc.errors()
        first, field = errors[0], _field(errors[0]["loc"])
        got = first.get("input")
        shown = "" if isinstance(got, dict | list) else f" (got {repr(got)[:80]})"
        # a union (an int or a float) fails once per member: one message naming them all
        msgs = [re.sub(r" or instance of \w+", "", e["msg"]) for e in errors]
        msgs = [m for i, m in enumerate(msgs) if _field(errors[i]["loc"]) == field]
        wanted = [m.removeprefix("Input should be ") for m in msgs if m.startswith("Input should")]
        msg = (
            f"Input should be {' or '.join(dict.fromkeys(wanted))}" if len(wanted) > 1 else msgs[0]
        )
        raise InputError(path, None, field or None, msg + shown) from None
