"""The C library of this process, for the few calls Python does not wrap (``mallopt``,
``renameat2``).

``ctypes.CDLL(None)`` reads the symbols the process has loaded already; the usual
``ctypes.util.find_library("c")`` starts ``ldconfig -p`` in a subprocess on Linux, once per call
(twice per ``analyze`` run before: docs/analysis.md, "Speed").
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any


@cache
def libc() -> Any:
    """The loaded C library (``errno`` kept for ``ctypes.get_errno``); None where it cannot be
    opened."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def function(name: str) -> Any:
    """The C library's function ``name``; None where the library or the function is missing."""
    lib = libc()
    return getattr(lib, name, None) if lib is not None else None
