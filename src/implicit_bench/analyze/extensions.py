"""The one extension point of ``implicit-bench analyze``.

An extension is a function ``fn(tables, out_dir, params) -> dict | None`` that receives the
validated tables (``load.Tables``: units, judgements of every configuration, rejects,
duplicates, image index), the output directory (write ``out_dir/metrics/NAME.json``,
``out_dir/tables/...``) and the whole params mapping (``--params`` file, or ``params.yaml``
sections; validate your own section). Its return value (a small summary) is echoed by
``analyze``. Register it here with one line, as a lazy ``"module:function"`` string.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from implicit_bench.analysis.load import Tables
from implicit_bench.errors import ConfigError, InputError

Extension = Callable[[Tables, Path, dict[str, Any]], "dict[str, Any] | None"]

EXTENSIONS: dict[str, str] = {
    # name: "module:function"  (e.g. "debias": "implicit_bench.debias.score:analyze_extension")
    "debias": "implicit_bench.debias.analyze:analyze_extension",
    "audits": "implicit_bench.audits.analyze:analyze_extension",  # docs/audits.md
    "retrieval": "implicit_bench.debias.retrieval_extension:analyze_extension",  # docs/byo-judgements.md
}


def load_extension(ref: str) -> Extension:
    module_name, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def run_extensions(
    tables: Tables, out_dir: Path, params: dict[str, Any], registry: dict[str, str] | None = None
) -> dict[str, Any]:
    """Call every registered extension in name order; returns {name: summary}.

    The analysis's own outputs are written before the extensions run, and no extension stops
    the others: one that fails on the input (``InputError`` / ``ConfigError``) gets the summary
    ``{"error": ...}``; one that fails otherwise (a bug) gets ``{"error": ..., "unexpected":
    True}``, and ``analyze`` exits non-zero after every extension ran.
    """
    from implicit_bench.redact import redact

    registry = EXTENSIONS if registry is None else registry
    out: dict[str, Any] = {}
    for name in sorted(registry):
        try:
            out[name] = load_extension(registry[name])(tables, out_dir, params)
        except (InputError, ConfigError) as exc:
            out[name] = {"error": redact(f"{type(exc).__name__}: {exc}")}
        except Exception as exc:  # noqa: BLE001 - reported, and analyze exits non-zero
            from implicit_bench.clierrors import debug_enabled

            if debug_enabled():
                raise
            out[name] = {"error": redact(f"{type(exc).__name__}: {exc}"), "unexpected": True}
    return out
