"""The ``implicit-bench analyze`` extension ``audits``: the judge order audit, negation and
label diversity on bring-your-own judgements (no images needed: CLIP and the face judge are
left out). The analysis keeps only each image's primary-order blind row, so the judge audit
re-reads the judgement files the analysis read (``tables.files``) to see both orders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.audits.labels import IMAGE_KEY, ORDERS
from implicit_bench.audits.run import (
    DiversityParams,
    JudgeAuditParams,
    NegationParams,
    diversity_labels,
    judge_audit,
    load_judgements,
    make_bootstrap,
    negation_report,
    order_function,
)
from implicit_bench.io import write_json, write_table
from implicit_bench.params import section
from implicit_bench.schema import BLIND_LABELS


def analyze_extension(tables: Any, out_dir: Path, params: dict[str, Any]) -> dict[str, Any] | None:
    """Writes metrics/{judge_audit,negation,diversity}.json and their plots under ``out_dir``."""
    params = params or {}
    paths = list(tables.files.get("judgements", []))
    if not paths:
        return None
    judgements, _ = load_judgements(paths)
    if not (judgements["task"].astype(str) == "blind").any():
        return {"skipped": "no blind judgements"}
    judgements, left_out = _accepted_rows(judgements)
    units = tables.units
    out = Path(out_dir)
    audit_p = section(params, "judge_audit", JudgeAuditParams)
    neg_p = section(params, "negation", NegationParams)
    div_p = section(params, "diversity", DiversityParams)
    audit, position = judge_audit(judgements, order_function(audit_p.primary_order), audit_p.confidence,
                                  boot=make_bootstrap(audit_p.bootstrap))
    write_json(out / "metrics" / "judge_audit.json", {**audit, "inputs": paths})
    write_table(position, out / "plots" / "position_bias.csv")
    negation, by_strength = negation_report(judgements, units, order_function(neg_p.primary_order),
                                            boot=make_bootstrap(neg_p.bootstrap))
    write_json(out / "metrics" / "negation.json", {**negation, "inputs": paths})
    write_table(by_strength, out / "plots" / "negation_by_strength.csv")
    diversity = diversity_labels(judgements, units, div_p, order_function(div_p.primary_order),
                                 boot=make_bootstrap(div_p.bootstrap))
    write_json(out / "metrics" / "diversity.json", {"blind_labels": diversity, "faces": None, "inputs": paths})
    return {"judges": audit["judges"], "judges_with_orders": audit["judges_with_orders"], "rows_left_out": left_out}


def _accepted_rows(judgements: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Leave out the blind rows the analysis rejects (it reports them): a value that is not a
    label, an unknown order, and every copy of a duplicated (image, judge, order) key."""
    blind = judgements["task"].astype(str) == "blind"
    value = judgements["value"].astype("string")
    order = judgements["order"] if "order" in judgements.columns else pd.Series(None, index=judgements.index)
    bad = blind & ((value.notna() & ~value.isin(BLIND_LABELS)) | (order.notna() & ~order.isin(ORDERS)))
    keys = [*IMAGE_KEY, "judge", "order"]
    frame = judgements.assign(order=order)
    dup = blind & frame.astype({"unit_id": str}).duplicated(keys, keep=False)
    drop = bad | dup
    return judgements[~drop].reset_index(drop=True), int(drop.sum())
