"""The ``kg`` stage's library entry: pairs table -> KG units table, invalid records, metrics."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from implicit_bench.backends.llm import InvalidCounter, llm_entry
from implicit_bench.construction.kg.minimal_pair import Extraction, extract
from implicit_bench.construction.kg.normalise import normalise
from implicit_bench.construction.kg.params import KGParams
from implicit_bench.construction.kg.stats import kg_graph_stats
from implicit_bench.construction.kg.table import units_frame
from implicit_bench.errors import InputError
from implicit_bench.protocol.records import SourcePair
from implicit_bench.protocol.tables import PAIRS
from implicit_bench.runtime.provenance import provenance


def kg_llm_block(params: KGParams, llms: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The extractor LLM's block (``llms.<kg.llm>`` + ``kg.max_tokens``); None when no LLM is named
    and none is needed. A named entry is checked against the catalogue whatever the extractor."""
    if params.llm is None and params.extractor != "llm":
        return None
    return llm_entry(llms, params.llm, "kg.llm", params.max_tokens)


def read_pairs(path: str | Path) -> list[SourcePair]:
    """The pairs table (``tables.PAIRS``) as validated records; a bad row
    names file, row and field."""
    frame = PAIRS.read(path)
    fields = set(SourcePair.model_fields)
    pairs = []
    for index, row in enumerate(frame.to_dict("records"), start=1):
        data = {
            k: (None if isinstance(v, float) and v != v else v)
            for k, v in row.items()
            if k in fields
        }
        try:
            pairs.append(SourcePair(**data))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InputError(
                path, index, ".".join(str(p) for p in err["loc"]) or None, err["msg"]
            ) from None
    return pairs


def run_kg(
    pairs: list[SourcePair],
    params: KGParams,
    llms: dict[str, dict[str, Any]] | None = None,
) -> tuple[pd.DataFrame, list[dict[str, Any]], dict[str, Any]]:
    """Extract units from every pair (``llms``: the top-level catalogue). Returns (units table,
    invalid / no-unit records, metrics)."""
    llm = kg_llm_block(params, llms or {})
    if params.max_pairs:
        pairs = pairs[: params.max_pairs]
    counter = InvalidCounter("kg")
    model_ref: str | None = None
    if params.extractor == "minimal_pair":
        results = [extract(p, params.minimal_pair) for p in pairs]
        records: list[dict[str, Any]] = []
    else:
        from implicit_bench.backends.llm import build_llm
        from implicit_bench.construction.kg.llm_extractor import extract_all

        client = build_llm(llm or {}, where=f"llms.{params.llm}")
        model_ref = client.model
        results, answers, records = extract_all(pairs, client)
        for answer in answers:
            counter.add(answer)
        counter.check_calls()  # every call failed: exit non-zero, write nothing
    by_id = {p.pair_id: p for p in pairs}
    units, corrections, fragments, reduced = normalise([u for r in results for u in r.units])
    for unit in fragments:
        records.append(
            {
                "pair_id": unit.source_pair_id,
                "unit_id": unit.unit_id,
                "source": unit.source,
                "bias_type": unit.bias_type,
                "level": "unit",
                "raw": unit.head,
                "mode": "rejected",
                "error": "fragment_head",
            }
        )
    for r in results:
        if not r.units and r.reason not in ("llm_invalid_answer",):
            pair = by_id[r.pair_id]
            records.append(
                {
                    "pair_id": r.pair_id,
                    "source": pair.source,
                    "bias_type": pair.bias_type,
                    "level": "pair",
                    "raw": "",
                    "mode": "no_unit",
                    "error": r.reason,
                }
            )
    table = units_frame(units)
    metrics = kg_metrics(pairs, results, table, counter, records)
    metrics["extractor"] = params.extractor
    metrics["units_rejected_by_reason"] = {"fragment_head": len(fragments)}
    metrics["heads_reduced_to_subject"] = reduced
    metrics["spelling_corrections_total"] = sum(corrections.values())
    metrics["spelling_corrections"] = [
        {"from": a, "to": b, "count": n} for (a, b), n in sorted(corrections.items())
    ]
    metrics["units_by_relation"] = _counts(table["relation"].fillna("none")) if len(table) else {}
    metrics["provenance"] = provenance([("kg_extractor", model_ref)])
    return table, records, metrics


def _counts(values: pd.Series | list[str]) -> dict[str, int]:
    return {str(k): int(v) for k, v in sorted(Counter(values).items())}


def kg_metrics(
    pairs: list[SourcePair],
    results: list[Extraction],
    table: pd.DataFrame,
    counter: InvalidCounter,
    records: list[dict[str, Any]],
) -> dict[str, Any]:
    by_id = {p.pair_id: p for p in pairs}
    empty = [r for r in results if not r.units]
    by_source_type: dict[str, dict[str, int]] = {}
    if len(table):
        for (source, bias), n in table.groupby(["source", "bias_type"]).size().items():
            by_source_type.setdefault(source, {})[bias] = int(n)
    return {
        "pairs_total": len(pairs),
        "pairs_with_units": len(results) - len(empty),
        "pairs_without_units": len(empty),
        "pairs_without_units_by_reason": _counts([r.reason or "unknown" for r in empty]),
        "pairs_without_units_by_source": _counts([by_id[r.pair_id].source for r in empty]),
        "units_total": int(len(table)),
        "units_by_bias_type": _counts(table["bias_type"]) if len(table) else {},
        "units_by_source": _counts(table["source"]) if len(table) else {},
        "units_by_source_and_bias_type": by_source_type,
        "units_without_relation": int(table["relation"].isna().sum()) if len(table) else 0,
        "llm_answers": counter.as_dict(),
        "invalid_records": sum(
            1 for r in records if r["level"] != "pair" and r.get("mode") != "rejected"
        ),
        "graph": kg_graph_stats(table),
    }
