"""Options shared by several commands, parsed to what the params models take (docs/errors.md,
"Command options"): a finite number in range, a comma-separated list of seeds, ``--assume``'s
unit counts. A bad value is click's usage error naming the option
(``Error: Invalid value for '--seeds': ...``)."""

from __future__ import annotations

import math
from typing import Any

import click
from pydantic import TypeAdapter, ValidationError

from implicit_bench.params import Seeds


class FiniteFloat(click.FloatRange):
    """``click.FloatRange`` that also refuses ``nan`` and ``inf`` (a range lets ``nan`` through:
    every comparison with it is false)."""

    name = "finite float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(rv, param, ctx)


class SeedList(click.ParamType):
    """``42,1042``: seeds as ``render.seeds`` takes them (integers 0 .. 2^53-1, each once,
    1 .. 1000 of them; params.Seeds)."""

    name = "seeds"
    _adapter: TypeAdapter[list[int]] = TypeAdapter(Seeds)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, list):
            return value
        parts = [p.strip() for p in str(value).split(",")]
        bad = [p for p in parts if not (p.isascii() and p.isdigit())]
        if bad:
            self.fail(
                f"{value!r}: {bad[0]!r} is not a seed (comma-separated integers 0 .. 2^53-1).",
                param,
                ctx,
            )
        try:
            return self._adapter.validate_python([int(p) for p in parts])
        except ValidationError as exc:
            reasons = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
            self.fail(f"{value!r}: {reasons}", param, ctx)


def parse_assume(text: str | None) -> dict[str, int]:
    """``candidates=4705,selected=1831`` -> counts (``plan --assume``); a bad item is a usage
    error naming it."""
    from implicit_bench.planning.plan import ASSUME_KEYS  # lazily: the plan imports pandas

    out: dict[str, int] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in ASSUME_KEYS or not value.strip().isdigit():
            raise click.UsageError(
                f"--assume {item.strip()!r}: expected KEY=N (N >= 0), KEY one of "
                f"{', '.join(ASSUME_KEYS)}"
            )
        out[key] = int(value)
    return out


__all__ = ["FiniteFloat", "SeedList", "parse_assume"]
