"""Retrieving a KG unit for a neutral prompt (Section 5.1, Appendix C.5; definitions note).

Each unit is one line of text, each neutral prompt a query with an instruction prefix; both are
embedded with the same model and L2-normalised, and the unit of highest cosine similarity is
retrieved. The full-KG setting searches every unit; the own-removed setting masks the query's
own unit, so the retrieved unit always comes from a different prompt. Scores are
``numerics.similarities`` (float64, rounded to 1e-9), so near-ties are ties on every machine;
ties go to the unit that comes first in the KG table (``numpy.argmax``), and the own rank
counts only the units scoring strictly higher.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.booleans import parse_bool_column
from implicit_bench._util.numerics import similarities
from implicit_bench.errors import InputError
from implicit_bench.params import StrictModel
from implicit_bench.protocol.tables import RETRIEVAL

DOCUMENT_TEMPLATE = "{head} | {relation} | {stereotype} → {anti_stereotype}"
DOCUMENT_TEMPLATE_NO_RELATION = "{head} | {stereotype} → {anti_stereotype}"
QUERY_TEMPLATE = (
    "Instruct: Given a description, retrieve the matching knowledge graph triple\nQuery: {prompt}"
)

RETRIEVAL_COLUMNS = RETRIEVAL.names


class RetrievalTextParams(StrictModel):
    document_template: str = DOCUMENT_TEMPLATE
    # used for units without a relation (CrowS-Pairs): the relation and its separator are left out
    document_template_no_relation: str = DOCUMENT_TEMPLATE_NO_RELATION
    query_template: str = QUERY_TEMPLATE


def _missing(value: Any) -> bool:
    return (
        value is None or (isinstance(value, float) and np.isnan(value)) or str(value).strip() == ""
    )


DEFAULT_TEXTS = RetrievalTextParams()


def unit_text(unit: dict[str, Any], texts: RetrievalTextParams = DEFAULT_TEXTS) -> str:
    """``"{head} | {relation} | {stereotype} → {anti_stereotype}"`` (no relation: left out)."""
    fields = {k: str(unit[k]).strip() for k in ("head", "stereotype", "anti_stereotype")}
    if _missing(unit.get("relation")):
        return texts.document_template_no_relation.format(**fields)
    return texts.document_template.format(relation=str(unit["relation"]).strip(), **fields)


def query_text(prompt: str, texts: RetrievalTextParams = DEFAULT_TEXTS) -> str:
    return texts.query_template.format(prompt=prompt)


def _norm(text: Any) -> str:
    return " ".join(str(text).lower().split())


def retrieve(
    query_vectors: np.ndarray,
    doc_vectors: np.ndarray,
    query_units: list[str],
    kg: pd.DataFrame,
) -> pd.DataFrame:
    """Top-1 retrieval for each query in the full KG and with the query's own unit masked.

    ``query_vectors`` and ``doc_vectors`` are L2-normalised rows; ``kg`` holds the documents'
    units in the same order (``unit_id, head, stereotype, anti_stereotype``); ``query_units``
    names each query's own unit, which must be in the KG.
    """
    ids = kg["unit_id"].astype(str).tolist()
    position = {unit: pos for pos, unit in enumerate(ids)}
    if len(position) != len(ids):
        raise InputError("kg units", None, "unit_id", "duplicate unit ids in the KG")
    missing = [u for u in query_units if u not in position]
    if missing:
        raise InputError(
            "kg units", missing[0], "unit_id", f"{len(missing)} query unit(s) not in the KG"
        )
    if len(ids) < 2:
        raise InputError(
            "kg units", None, "unit_id", "own-removed retrieval needs at least 2 units"
        )
    sims = similarities(query_vectors, doc_vectors)  # rounded: near-ties do not flip ranks
    rows = np.arange(len(query_units))
    own = np.array([position[u] for u in query_units])
    best_full = sims.argmax(axis=1)
    own_score = sims[rows, own]
    own_rank = 1 + (sims > own_score[:, None]).sum(axis=1)
    masked = sims.copy()
    masked[rows, own] = -np.inf
    best_removed = masked.argmax(axis=1)
    heads = kg["head"].map(_norm).to_numpy()
    pairs = (kg["stereotype"].map(_norm) + "\x00" + kg["anti_stereotype"].map(_norm)).to_numpy()
    ids_arr = np.array(ids, dtype=object)
    return pd.DataFrame(
        {
            "unit_id": list(query_units),
            "retrieved_full": ids_arr[best_full],
            "score_full": sims[rows, best_full].astype(float),
            "own_hit": best_full == own,
            "own_rank": own_rank.astype("int64"),
            "retrieved_removed": ids_arr[best_removed],
            "score_removed": sims[rows, best_removed].astype(float),
            "same_head_removed": heads[best_removed] == heads[own],
            "same_pair_removed": pairs[best_removed] == pairs[own],
        },
        columns=list(RETRIEVAL_COLUMNS),
    )


def read_retrieval(path: str | Path) -> pd.DataFrame:
    """A retrieval table (``unit_id, own_hit`` at least), read through ``tables.RETRIEVAL``:
    ids as strings (``007`` stays ``007``), the boolean columns parsed strictly (a ``no`` or a
    blank is never a hit: a blank is an error), ``own_rank`` an integer >= 1, unit ids unique."""
    return RETRIEVAL.read(path)


def retrieval_metrics(result: pd.DataFrame) -> dict[str, Any]:
    """The retrieval figures of Appendix C.5: the top-1 own-unit rate (full KG: the retrieved
    unit is the prompt's own unit; paper 39.9%) and, for own-removed retrieval, the share of
    prompts whose retrieved unit has the same head (paper 45%) and the same attribute pair
    (paper 4%) as the own unit. A figure whose column the table lacks is None."""
    n = len(result)

    def share(column: str) -> float | None:
        if not n or column not in result.columns:
            return None
        return float(result[column].astype(bool).mean())

    return {
        "n_queries": int(n),
        "top1_accuracy": share("own_hit"),
        "mean_own_rank": float(result["own_rank"].mean())
        if n and "own_rank" in result.columns
        else None,
        "removed_same_head": share("same_head_removed"),
        "removed_same_pair": share("same_pair_removed"),
    }


def own_hits(retrieval: pd.DataFrame, source: str = "retrieval") -> dict[str, bool]:
    """unit_id -> whether full-KG retrieval returned the own unit; ``own_hit`` parsed strictly
    (true/false, yes/no, 1/0; anything else, a blank included, is an ``InputError``)."""
    hits = parse_bool_column(retrieval["own_hit"], source, "own_hit")
    return dict(zip(retrieval["unit_id"].astype(str), hits, strict=True))
