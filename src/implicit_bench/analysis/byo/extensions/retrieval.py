"""The ``implicit-bench analyze`` extension ``retrieval``: ``metrics/retrieval.json`` from a
retrieval table (``--retrieval``, or ``debias.scoring.retrieval`` in ``--params``).

The figures are those of the ``retrieve`` stage (``retrieval.retrieval_metrics``): top-1
own-unit rate, same-head rate and same-pair rate of own-removed retrieval. A table restricted
to the analysed units is not required: every row of the table is counted, and the number of
its units that the UNITS table lacks is reported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from implicit_bench._util.files import write_json

PAPER = {"top1_accuracy": 0.399, "removed_same_head": 0.45, "removed_same_pair": 0.04}


def retrieval_path(params: dict[str, Any]) -> str | None:
    """The retrieval table named in params (``debias.scoring.retrieval``), if any."""
    return (((params or {}).get("debias") or {}).get("scoring") or {}).get("retrieval")


def has_work(tables: Any, params: dict[str, Any]) -> bool:
    """Whether ``analyze_extension`` writes anything: params name a retrieval table."""
    return bool(retrieval_path(params))


def analyze_extension(tables: Any, out_dir: Path, params: dict[str, Any]) -> dict[str, Any] | None:
    """Write ``out_dir/metrics/retrieval.json``; None when no retrieval table is named."""
    path = retrieval_path(params)
    if not path:
        return None
    from implicit_bench.debias.retrieval import read_retrieval, retrieval_metrics

    table = read_retrieval(path)
    metrics = retrieval_metrics(table)
    known = set(tables.units["unit_id"].astype(str))
    metrics.update(
        source=str(path),
        units_not_in_units_table=int((~table["unit_id"].isin(known)).sum()),
        paper=PAPER,
    )
    write_json(Path(out_dir) / "metrics" / "retrieval.json", metrics)
    return {
        k: metrics[k]
        for k in ("n_queries", "top1_accuracy", "removed_same_head", "removed_same_pair")
    }
