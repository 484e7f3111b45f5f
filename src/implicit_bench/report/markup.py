"""The one way a value reaches the report's HTML: :func:`show` formats it (numbers with a
format spec) and escapes it; :func:`esc` is the escaping itself. Renderers pass every value
read from a metrics file through one of them, numbers included: a field that should hold a
number may hold anything in another run's file (docs/errors.md)."""

from __future__ import annotations

import html
import math
from typing import Any


def esc(text: Any) -> str:
    """``text`` as HTML text or attribute value (quotes escaped too)."""
    return html.escape(str(text), quote=True)


def is_number(x: Any) -> bool:
    """A real number (not a bool); NaN and infinities included."""
    return isinstance(x, int | float) and not isinstance(x, bool)


def show(value: Any, spec: str = "", missing: str = "–", scale: float = 1.0) -> str:
    """``value`` formatted and escaped: ``missing`` for None / NaN; a number times ``scale``
    with ``spec`` (e.g. ``.1f``); anything else as text. A number too large for ``spec`` (an
    int beyond float range) is written as ``too large``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return esc(missing)
    if is_number(value):
        try:
            number = value * scale if scale != 1.0 else value
            return esc(format(number, spec))
        except (OverflowError, ValueError):
            return "too large"
    return esc(value)
