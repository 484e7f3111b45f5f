"""The ``triplets`` stage's library entry: KG units -> triplets table, subset,
invalid records, metrics."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from implicit_bench.backends.llm import InvalidCounter, llm_entry
from implicit_bench.construction.kg.table import units_frame, units_from_frame  # noqa: F401 - re-exported for the stage script
from implicit_bench.construction.triplets import TRIPLET_WRITERS, VARIANT_HOOKS
from implicit_bench.construction.triplets.checks import CHECK_COLUMNS, check_triplet
from implicit_bench.construction.triplets.params import TripletsParams
from implicit_bench.construction.triplets.subset import stratified_subset
from implicit_bench.construction.triplets.wellformed import check_table
from implicit_bench.params import SubsetParams
from implicit_bench.protocol.prompt_stats import prompt_stats
from implicit_bench.protocol.records import KGUnit
from implicit_bench.protocol.tables import UNIT_COLUMNS
from implicit_bench.runtime.provenance import provenance

EXTRA_COLUMNS: tuple[str, ...] = (
    "source_pair_id",
    "target",
    "axis",
    "construction_mode",
    "shared_frame",
    "frame_sensitive",
    "stereotype_tails",
    "anti_stereotype_tails",
    "extractor",
    "writer",
)
TRIPLET_COLUMNS: tuple[str, ...] = (*UNIT_COLUMNS, *EXTRA_COLUMNS, *CHECK_COLUMNS, "check_ok")
# The PAIRS columns the LLM writer reads (tables.PAIRS.read(path, require=PAIR_COLUMNS_USED)).
PAIR_COLUMNS_USED: tuple[str, ...] = ("pair_id", "stereotype_sentence", "anti_stereotype_sentence")


def writer_params(params: TripletsParams, llms: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The writer's params; a named LLM is checked against the catalogue whatever the writer."""
    llm = (
        llm_entry(llms, params.llm, "triplets.llm", params.max_tokens)
        if params.llm or params.writer == "llm"
        else None
    )
    if params.writer == "template":
        return params.template.model_dump()
    return {**(llm or {}), "_where": f"llms.{params.llm}"}


def run_triplets(
    units: list[KGUnit],
    pairs: pd.DataFrame | None,
    params: TripletsParams,
    subset: SubsetParams,
    llms: dict[str, dict[str, Any]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, list[dict[str, Any]], dict[str, Any]]:
    """Write, check and subset (``llms``: the top-level catalogue). Returns (triplets, subset,
    invalid records, metrics)."""
    seed = subset.seed
    write = TRIPLET_WRITERS.resolve(params.writer)
    results = write(units, pairs, writer_params(params, llms or {}))
    by_id = {u.unit_id: u for u in units}
    unit_rows = units_frame(units).set_index("unit_id")
    counter = InvalidCounter("triplets")
    rows, invalid = [], []
    model_ref = None
    for result in results:
        if result.answer is not None:
            counter.add(result.answer)
        if result.triplet is None:
            invalid.append(result.invalid or {"unit_id": result.unit_id, "error": "no triplet"})
            continue
        unit, triplet = by_id[result.unit_id], result.triplet
        if triplet.writer.startswith("llm:"):
            model_ref = triplet.writer[4:]
        base = unit_rows.loc[unit.unit_id]
        row = {
            "unit_id": unit.unit_id,
            "source": unit.source,
            "bias_type": unit.bias_type,
            "head": unit.head,
            "relation": unit.relation,
            "stereotype": unit.stereotype,
            "anti_stereotype": unit.anti_stereotype,
            "prompt_neutral": triplet.neutral,
            "prompt_stereotype": triplet.stereotype,
            "prompt_anti_stereotype": triplet.anti_stereotype,
            **{c: base[c] for c in EXTRA_COLUMNS if c in base.index},
            "writer": triplet.writer,
            **check_triplet(unit, triplet),
        }
        rows.append(row)
    counter.check_calls()  # an LLM writer whose every call failed: exit non-zero, write nothing
    table = pd.DataFrame(rows, columns=list(TRIPLET_COLUMNS))
    for hook in params.variant_hooks:
        table = VARIANT_HOOKS.resolve(hook)(table)
    chosen = stratified_subset(table, subset.max_units, seed, subset.order) if len(table) else table
    metrics = triplet_metrics(units, table, chosen, counter, invalid)
    metrics.update(
        {
            "writer": params.writer,
            "subset_max_units": subset.max_units,
            "seed": seed,
            "provenance": provenance([("triplet_writer", model_ref)]),
        }
    )
    return table, chosen, invalid, metrics


def _counts(values: Any) -> dict[str, int]:
    return {str(k): int(v) for k, v in sorted(Counter(values).items())}


def triplet_metrics(
    units: list[KGUnit],
    table: pd.DataFrame,
    chosen: pd.DataFrame,
    counter: InvalidCounter,
    invalid: list[dict[str, Any]],
) -> dict[str, Any]:
    flags = (
        {c: int(table[c].sum()) for c in CHECK_COLUMNS}
        if len(table)
        else dict.fromkeys(CHECK_COLUMNS, 0)
    )
    violating = table[~table["check_ok"].astype(bool)] if len(table) else table
    return {
        "units_in": len(units),
        "units_by_bias_type": _counts(u.bias_type for u in units),
        "triplets_total": int(len(table)),
        "triplets_by_bias_type": _counts(table["bias_type"]) if len(table) else {},
        "triplets_invalid": len(invalid),
        "units_rejected_by_reason": _counts(
            r.get("reason", "invalid") for r in invalid if r.get("mode") == "rejected"
        ),
        "llm_answers": counter.as_dict(),
        "check_violations": {
            **flags,
            "triplets_with_violation": int(len(violating)),
            "by_bias_type": _counts(violating["bias_type"]) if len(violating) else {},
        },
        "subset_units": int(len(chosen)),
        "subset_by_bias_type": _counts(chosen["bias_type"]) if len(chosen) else {},
        "prompt_stats": prompt_stats(table) if len(table) else {},
        "prompt_stats_subset": prompt_stats(chosen) if len(chosen) else {},
        "well_formed": check_table(table),
        "well_formed_subset": check_table(chosen),
    }
