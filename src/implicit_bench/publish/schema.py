"""The vendored Every Eval Ever schema files and validation against them (jsonschema).

The two files are the published ones, byte for byte (``publish/schemas/README.md``); nothing
here restates their fields. A record that does not validate is an ``InputError`` naming the
file, the line (instance files) and the field path of the first error, one line.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

from implicit_bench.errors import InputError

AGGREGATE = "eval.schema.json"
INSTANCE = "instance_level_eval.schema.json"


@cache
def schema(name: str) -> dict[str, Any]:
    """One vendored schema file, parsed."""
    text = resources.files("implicit_bench.publish").joinpath("schemas", name).read_text("utf-8")
    return json.loads(text)


def schema_version() -> str:
    """The version the aggregate schema declares (what ``schema_version`` records carry)."""
    return str(schema(AGGREGATE)["version"])


@cache
def _validator(name: str) -> Draft7Validator:
    return Draft7Validator(schema(name))


def problems(record: Any, name: str = AGGREGATE) -> list[str]:
    """Every schema error of ``record`` as ``field.path: message`` (empty: valid)."""
    errors = sorted(_validator(name).iter_errors(record), key=lambda e: list(e.absolute_path))
    return [f"{_path(e.absolute_path) or '(record)'}: {e.message[:200]}" for e in errors]


def _path(parts: Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def check(record: Any, where: str | Path, name: str = AGGREGATE, line: int | None = None) -> None:
    """Raise an ``InputError`` naming ``where`` (and the line) at the first schema error."""
    if _validator(name).is_valid(record):  # the common case, without collecting errors
        return
    error = next(iter(sorted(_validator(name).iter_errors(record), key=_order)), None)
    if error is not None:
        field = _path(error.absolute_path) or None
        raise InputError(
            where, line, field, f"not an Every Eval Ever record: {error.message[:200]}"
        )


def _order(error: Any) -> list[str]:
    return [str(p) for p in error.absolute_path]
