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

import pandas as pd

from implicit_bench.analysis.load import Tables

Extension = Callable[[Tables, Path, dict[str, Any]], "dict[str, Any] | None"]

EXTENSIONS: dict[str, str] = {
    # name: "module:function"
    "debias": "implicit_bench.analysis.extensions:debias_extension",
}


def plain_judgements(tables: Tables) -> pd.DataFrame:
    """The validated judgements with plain string columns (the loader stores categoricals)."""
    j = tables.judgements
    return j.astype({c: object for c in j.columns if isinstance(j[c].dtype, pd.CategoricalDtype)})


def debias_extension(tables: Tables, out_dir: Path, params: dict[str, Any]) -> dict[str, Any] | None:
    """metrics/debias.json (Table 7) when the judgements hold the unmodified configuration's
    rubric / alignment rows (``debias.scoring.unmodified``); see docs/debiasing.md."""
    from implicit_bench.debias.analyze import analyze_debias

    payload = analyze_debias(plain_judgements(tables), out_dir, params.get("debias"), source="judgements")
    if payload is None:
        return None
    return {"configs": len(payload.get("configs", [])), "written": str(Path(out_dir) / "metrics" / "debias.json")}


def load_extension(ref: str) -> Extension:
    module_name, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def run_extensions(
    tables: Tables, out_dir: Path, params: dict[str, Any], registry: dict[str, str] | None = None
) -> dict[str, Any]:
    """Call every registered extension in name order; returns {name: summary}."""
    registry = EXTENSIONS if registry is None else registry
    return {name: load_extension(registry[name])(tables, out_dir, params) for name in sorted(registry)}
