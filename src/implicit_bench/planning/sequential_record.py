"""The record of a sequential run (``logs/sequential-NAME.json``) read back, and the params a
run must keep from round to round (``run --sequential``, docs/experiments.md, "Sequential
runs"; docs/errors.md, "Records of multi-round runs and benchmarks").

A record read to resume a run is checked field by field before any of it is used: a file cut
short, edited by hand or written by something else is one ``InputError`` naming the file and
the field (``rounds[1].units``), never a ``KeyError`` / ``AttributeError``. Unknown keys are
allowed. One record holds the rounds of one set of settings: :func:`changed_keys` names the
params that differ between two reads (names only: values may hold secrets).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from implicit_bench.errors import InputError

#: what the errors about a bad record add: how to go on
START_AGAIN = "move the file aside to start the sequential run again"


class _Open(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class _Round(_Open):
    round: int = Field(ge=1)
    units: int = Field(ge=1)
    gpu_hours: float = Field(default=0.0, ge=0)
    targets: dict[str, dict[str, Any]] = {}
    params: str | None = None


class _Stopped(_Open):
    round: int = Field(ge=0)
    why: str


class _Record(_Open):
    anytime_valid: bool = True
    settings: dict[str, Any]
    rounds: list[_Round]
    stopped: _Stopped | None = None
    last_report: dict[str, Any] | None = None


def _field(loc: tuple[Any, ...]) -> str:
    """``("rounds", 1, "units")`` -> ``rounds[1].units``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not re.match(r"(function-|union\[|float|int|dict\[|str|bool)", str(part)):
            out += f".{part}" if out else str(part)
    return out


def load_record(path: Path) -> dict[str, Any]:
    """The record at ``path`` as JSON, its structure checked (one line naming file and field)."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        why = " ".join(str(exc).split())[:120]
        raise InputError(path, None, None, f"not a JSON record ({why}): {START_AGAIN}") from None
    if not isinstance(payload, dict):
        raise InputError(
            path, None, None, f"not a JSON object ({type(payload).__name__}): {START_AGAIN}"
        )
    try:
        _Record.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        got = first.get("input")
        shown = "" if isinstance(got, dict | list) else f" (got {repr(got)[:60]})"
        msg = re.sub(r" or instance of \w+", "", first["msg"])
        field = _field(first["loc"]) or None
        raise InputError(path, None, field, f"{msg}{shown}: {START_AGAIN}") from None
    return payload


def check_resumable(record: dict[str, Any], rounds: list[int], path: Path) -> None:
    """A record of these settings (``rounds`` among them) holds consecutive rounds of those
    unit counts, and says it stopped when every round is in it."""
    done = record["rounds"]
    if len(done) > len(rounds):
        raise InputError(
            path, None, "rounds", f"{len(done)} rounds recorded of {len(rounds)}: {START_AGAIN}"
        )
    for index, entry in enumerate(done):
        if entry["round"] != index + 1:
            raise InputError(
                path,
                None,
                f"rounds[{index}].round",
                f"{entry['round']}, expected {index + 1}: {START_AGAIN}",
            )
        if entry["units"] != rounds[index]:
            raise InputError(
                path,
                None,
                f"rounds[{index}].units",
                f"{entry['units']}, but round {index + 1} has {rounds[index]} units: {START_AGAIN}",
            )
    stopped = record.get("stopped")
    if stopped is not None and stopped["round"] > len(done):
        raise InputError(
            path,
            None,
            "stopped.round",
            f"{stopped['round']}, past the {len(done)} rounds recorded: {START_AGAIN}",
        )
    if stopped is None and done and len(done) == len(rounds):
        raise InputError(
            path, None, "stopped", f"missing though every round is recorded: {START_AGAIN}"
        )


def changed_keys(before: Any, after: Any, prefix: str = "") -> list[str]:
    """The dotted keys whose values differ between two params mappings (sorted)."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            name = f"{prefix}.{key}" if prefix else str(key)
            if key not in before or key not in after:
                out.append(name)
            else:
                out.extend(changed_keys(before[key], after[key], name))
        return out
    return [] if before == after else [prefix or "(the whole params)"]
