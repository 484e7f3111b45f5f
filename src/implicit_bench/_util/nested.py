"""Reading nested JSON-like mappings (other stages' metrics, reports, API answers)."""

from __future__ import annotations

from typing import Any


def dig(mapping: Any, *keys: Any) -> Any:
    """``mapping[k1][k2]...``, where a missing, null or empty level reads as ``{}``: the value
    at the end, or None. Same as the chain ``((mapping.get(k1) or {}).get(k2) or {})...``:
    a level that holds something else than a mapping is an error, not silently skipped."""
    value = mapping
    for key in keys:
        value = (value or {}).get(key)
    return value
