"""Numbers for JSON and text, one home for each rule (they were ``_num``, ``_f``,
``_pct`` and ``_fmt`` in nine modules with different behaviour under one name).

Values (for JSON payloads):

- ``finite(x)``: ``float(x)``, or None for None, NaN and +-inf;
- ``real_number(x)``: a real number's value (an ``int`` or ``float``, never a ``bool`` or a
  text), or None for anything else and for NaN and +-inf;
- ``rounded(x, ndigits)``: ``finite`` rounded;
- ``percent_points(x, ndigits)``: ``100 x``, rounded when ``ndigits`` is given; None stays None.

Text (Markdown tables):

- ``fixed(x, digits, signed, missing)``: ``x`` to ``digits`` decimals (``+`` sign when
  ``signed``), ``missing`` for None;
- ``percent_text(x, digits, missing)``: ``100 x`` to ``digits`` decimals, ``missing`` for None.
"""

from __future__ import annotations

import math
from typing import Any


def finite(x: Any) -> float | None:
    """``float(x)``; None for None and for a non-finite value."""
    if x is None:
        return None
    value = float(x)
    return value if math.isfinite(value) else None


def real_number(x: Any) -> float | None:
    """The value of an ``int`` or ``float`` (not ``bool``) that is finite; None otherwise."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    value = float(x)
    return value if math.isfinite(value) else None


def rounded(x: Any, ndigits: int) -> float | None:
    """``finite(x)`` rounded to ``ndigits`` decimals."""
    value = finite(x)
    return None if value is None else round(value, ndigits)


def percent_points(x: float | None, ndigits: int | None = None) -> float | None:
    """``100 x`` (rounded to ``ndigits`` when given); None stays None."""
    if x is None:
        return None
    value = 100.0 * x
    return value if ndigits is None else round(value, ndigits)


def fixed(x: float | None, digits: int = 3, signed: bool = False, missing: str = "-") -> str:
    """``x`` with ``digits`` decimals (and its sign when ``signed``); ``missing`` for None."""
    if x is None:
        return missing
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def percent_text(x: float | None, digits: int = 1, missing: str = "-") -> str:
    """``100 x`` with ``digits`` decimals; ``missing`` for None."""
    return missing if x is None else f"{100 * x:.{digits}f}"
