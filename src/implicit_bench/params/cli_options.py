"""Click option types that refuse what the params models refuse (docs/errors.md, "Command
options"): a finite number in range, and a comma-separated list of seeds. A bad value is
click's usage error naming the option (``Error: Invalid value for '--seeds': ...``)."""

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


__all__ = ["FiniteFloat", "SeedList"]
