"""``Estimate``: the one typed form of a point estimate with its interval.

Every producer of a statistic with an interval (analysis, debias scoring, audits, CLIP,
human evaluation, world recovery) writes it as ``Estimate(...).to_json()`` and every consumer
(report, headline summary, tables, plots) reads it with ``Estimate.from_json``. The JSON form
is exactly ``{"value": v, "ci": [lo, hi], "n": n, "level": 0.95}`` (docs/metrics.md):

- ``value``: the point estimate; null when undefined (no valid label, a zero variance);
- ``ci``: the interval ``[low, high]`` at ``level``; null when not drawn or undefined;
- ``n``: the number of sampling units the estimate rests on (units for a cluster bootstrap,
  images for a Wilson interval, bias types for a between-type correlation); null if unknown;
- ``level``: the interval's coverage (0.95); null when no interval is defined for the
  statistic (a point value reported in the same form).

How an interval was drawn (bootstrap resamples, seed, stream) is recorded once per file in its
``bootstrap`` block, not in every estimate.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from implicit_bench.errors import ConfigError

FIELDS = ("value", "ci", "n", "level")


def _finite(x: Any) -> float | None:
    """A float, or None for None / NaN / inf (JSON has no NaN). Not a number (a list, an
    object) or an integer beyond float range: a ``ValueError``, which pydantic reports with
    the field (a ``TypeError`` / ``OverflowError`` would escape its validation)."""
    if x is None:
        return None
    try:
        x = float(x)
    except (TypeError, OverflowError) as exc:
        raise ValueError(f"not a finite number: {str(x)[:40]!r}") from exc
    return x if math.isfinite(x) else None


class Estimate(BaseModel):
    """A point estimate, its interval at ``level`` and the number of sampling units."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # all four keys are required (null where undefined): the JSON form is always complete
    value: float | None
    ci: tuple[float, float] | None
    n: int | None = Field(ge=0)
    level: float | None = Field(gt=0, lt=1)

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, v: Any) -> float | None:
        if isinstance(v, bool):
            raise ValueError("a boolean is not an estimate")
        return _finite(v)

    @field_validator("ci", mode="before")
    @classmethod
    def _ci(cls, v: Any) -> tuple[float, float] | None:
        if v is None:
            return None
        if isinstance(v, str | bytes) or not hasattr(v, "__len__") or len(v) != 2:
            raise ValueError("ci must be [low, high] or null")
        lo, hi = (_finite(x) for x in v)
        if lo is None or hi is None:  # an undefined bound: no interval
            return None
        if lo > hi:
            raise ValueError(f"ci low {lo} > high {hi}")
        return lo, hi

    @field_validator("n", mode="before")
    @classmethod
    def _n(cls, v: Any) -> int | None:
        if v is None:
            return None
        try:
            whole = not isinstance(v, bool) and float(v) == int(v)
        except (TypeError, OverflowError):  # a list, an object, an infinity
            whole = False
        if not whole:
            raise ValueError(f"n must be a whole number, got {str(v)[:40]!r}")
        return int(v)

    @model_validator(mode="after")
    def _level_with_ci(self) -> Estimate:
        if self.ci is not None and self.level is None:
            raise ValueError("an interval needs its level")
        return self

    @classmethod
    def of(cls, value: Any, ci: Any = None, n: Any = None, level: Any = None) -> Estimate:
        """Build from loose numbers (numpy scalars, NaN -> null, ``ci`` any 2-sequence)."""
        return cls(value=value, ci=ci, n=n, level=level)

    def to_json(self) -> dict[str, Any]:
        """``{"value", "ci": [lo, hi] | null, "n", "level"}`` (the keys in this order)."""
        return {
            "value": self.value,
            "ci": list(self.ci) if self.ci is not None else None,
            "n": self.n,
            "level": self.level,
        }

    @classmethod
    def from_json(cls, obj: Any) -> Estimate:
        """Read the JSON form; anything but exactly the four keys is a ``ConfigError``."""
        if not isinstance(obj, dict) or set(obj) != set(FIELDS):
            got = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
            raise ConfigError(f"not an Estimate (needs exactly {', '.join(FIELDS)}): {got}")
        try:
            return cls.model_validate(obj)
        except ValidationError as exc:
            shown = repr(obj)[:120]
            raise ConfigError(f"invalid Estimate {shown}: {exc.errors()[0]['msg']}") from None

    @property
    def low(self) -> float | None:
        return self.ci[0] if self.ci is not None else None

    @property
    def high(self) -> float | None:
        return self.ci[1] if self.ci is not None else None

    def scaled(self, factor: float) -> Estimate:
        """The same estimate in other units (e.g. x 100 for a percentage)."""
        return self.model_copy(
            update={
                "value": None if self.value is None else self.value * factor,
                "ci": None if self.ci is None else (self.ci[0] * factor, self.ci[1] * factor),
            }
        )


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the JSON form (checked in as docs/estimate.schema.json)."""
    return Estimate.model_json_schema(mode="serialization")


def is_estimate(obj: Any) -> bool:
    """True for the JSON form of an Estimate (a dict with exactly its four keys)."""
    return isinstance(obj, dict) and len(obj) == len(FIELDS) and set(obj) == set(FIELDS)


def estimate_json(value: Any, ci: Any = None, n: Any = None, level: Any = None) -> dict[str, Any]:
    """``Estimate.of(...).to_json()``: what producers put into their metrics dictionaries."""
    return Estimate.of(value, ci, n, level).to_json()


def read_estimate(obj: Any) -> Estimate | None:
    """The Estimate in ``obj``, or None when ``obj`` is absent (null)."""
    return None if obj is None else Estimate.from_json(obj)
