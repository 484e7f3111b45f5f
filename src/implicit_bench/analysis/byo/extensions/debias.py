"""The ``implicit-bench analyze`` extension ``debias``: metrics/debias.json and
tables/debias.md from judgement rows alone (no model), when they hold debiasing runs.

Judgement rows whose ``config`` names a configuration (Table 27 names carry their method,
information and signal; other names are scored too, under "Other configurations"), ``task``
rubric or alignment, variant neutral. The unmodified configuration is named by
``scoring.unmodified`` (default ``unmodified``). With a retrieval table (``unit_id, own_hit``)
the full-KG rows are assembled too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench._util.files import atomic_write_text, write_json
from implicit_bench.debias.configs import ScoringParams
from implicit_bench.params import section
from implicit_bench.protocol.estimate import read_estimate


def applies(judgements: pd.DataFrame, unmodified: str) -> bool:
    """True when there are rubric or alignment rows of the unmodified configuration."""
    rows = judgements[
        (judgements["config"] == unmodified) & judgements["task"].isin(["rubric", "alignment"])
    ]
    return not rows.empty


def has_work(tables: Any, params: dict[str, Any]) -> bool:
    """Whether ``analyze_extension`` scores anything: the judgements hold rubric or alignment
    rows of the unmodified configuration (``analyze.extensions.WORK_CHECKS``)."""
    debias = (params or {}).get("debias") or {}
    scoring = section({"scoring": debias.get("scoring") or {}}, "scoring", ScoringParams)
    return applies(tables.judgements, scoring.unmodified)


def analyze_extension(tables: Any, out_dir: Path, params: dict[str, Any]) -> dict[str, Any] | None:
    """The ``implicit-bench analyze`` extension (``analyze.extensions.EXTENSIONS["debias"]``):
    scores the validated judgements; ``params["debias"]["scoring"]`` names the unmodified
    configuration, the judges, the bootstrap and an optional retrieval table."""
    debias = (params or {}).get("debias") or {}
    scoring = section({"scoring": debias.get("scoring") or {}}, "scoring", ScoringParams)
    if scoring.retrieval:
        from implicit_bench.debias.retrieval import read_retrieval

        retrieval = read_retrieval(scoring.retrieval)
    else:
        retrieval = None
    judgements = tables.judgements
    payload = analyze_debias(
        judgements, out_dir, params=debias, retrieval=retrieval, source="judgements"
    )
    if payload is None:
        return None
    duplicates = getattr(tables, "duplicates", None)
    if duplicates is not None and len(duplicates):
        mask = duplicates["task"].astype(str).isin(["rubric", "alignment"])
        payload["duplicate_keys_left_out"] = int(mask.sum())
        write_json(Path(out_dir) / "metrics" / "debias.json", payload)
    entries = payload["configs"]
    return {
        "configs": len(entries),
        "unmodified_S": entries[scoring.unmodified]["S"],
        "best_dS": max(
            (
                d.value
                for e in entries.values()
                if (d := read_estimate(e["dS"])) and d.value is not None
            ),
            default=None,
        ),
    }


def analyze_debias(
    judgements: pd.DataFrame,
    out_dir: str | Path,
    params: dict[str, Any] | None = None,
    retrieval: pd.DataFrame | None = None,
    source: str = "judgements",
) -> dict[str, Any] | None:
    """Write ``<out_dir>/metrics/debias.json`` and ``<out_dir>/tables/debias.md``; return the
    metrics, or None (nothing written) when the judgements hold no debiasing runs.

    ``params``: the ``debias`` section of params.yaml (only its ``scoring`` block is read) or
    None for the defaults.
    """
    scoring = section({"scoring": (params or {}).get("scoring") or {}}, "scoring", ScoringParams)
    if not applies(judgements, scoring.unmodified):
        return None
    from implicit_bench.debias.scoring import score_judgements  # only for debiasing runs

    payload, markdown = score_judgements(judgements, scoring, None, retrieval, source=source)
    out = Path(out_dir)
    write_json(out / "metrics" / "debias.json", payload)
    atomic_write_text(out / "tables" / "debias.md", markdown)
    return payload
