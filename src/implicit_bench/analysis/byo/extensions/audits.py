"""The ``implicit-bench analyze`` extension ``audits``: the judge order audit, negation and
label diversity on bring-your-own judgements (no images needed: CLIP and the face judge are
left out). It reads the analysis's validated tables, never the raw files: a row the analysis
rejected (unknown unit, bad seed, duplicate key, ...) is left out here too. The judge order
audit also needs the blind rows of each image's non-primary order, which the analysis keeps
apart (``tables.secondary``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench._util.files import write_json, write_table
from implicit_bench.params import section


def analyze_extension(tables: Any, out_dir: Path, params: dict[str, Any]) -> dict[str, Any] | None:
    """Writes metrics/{judge_audit,negation,diversity}.json and their plots under ``out_dir``."""
    params = params or {}
    paths = list(tables.files.get("judgements", []))
    judgements = validated_judgements(tables)
    if not (judgements["task"] == "blind").any():
        return {"skipped": "no blind judgements"}
    from implicit_bench.analysis.stage import judge_provenance
    from implicit_bench.audits.params import (  # the audits' machinery: only with blind rows
        DiversityParams,
        JudgeAuditParams,
        NegationParams,
    )
    from implicit_bench.audits.stage import (
        diversity_metrics,
        judge_audit_section,
        negation_section,
    )

    units = tables.units
    out = Path(out_dir)
    top = {
        "bootstrap": "bootstrap",
        "primary_order": "primary_order",
    }  # top-level settings; a section's own keys win
    audit_p = section(params, "judge_audit", JudgeAuditParams, inherit=top)
    neg_p = section(params, "negation", NegationParams, inherit=top)
    div_p = section(params, "diversity", DiversityParams, inherit=top)
    prov = judge_provenance(tables)
    # the same composition as the judge_audit and negation stages (audits.stage)
    audit, position = judge_audit_section(judgements, audit_p, params, "params.yaml", paths, prov)
    write_json(out / "metrics" / "judge_audit.json", audit)
    write_table(position, out / "plots" / "position_bias.csv")
    negation, by_strength, _corpus = negation_section(
        judgements, units, neg_p, params, "params.yaml", paths, prov
    )
    write_json(out / "metrics" / "negation.json", negation)
    write_table(by_strength, out / "plots" / "negation_by_strength.csv")
    write_json(
        out / "metrics" / "diversity.json", diversity_metrics(judgements, units, div_p, paths)
    )
    rejected = (
        tables.rejects[tables.rejects["table"] == "judgements"]
        if len(tables.rejects)
        else tables.rejects
    )
    return {
        "judges": audit["judges"],
        "judges_with_orders": audit["judges_with_orders"],
        "rows_left_out": int(len(rejected)),
    }


def has_work(tables: Any, params: dict[str, Any]) -> bool:
    """Whether ``analyze_extension`` computes anything: the validated judgements or the
    secondary-order rows hold blind rows (``analyze.extensions.WORK_CHECKS``)."""
    frames = [tables.judgements, getattr(tables, "secondary", None)]
    return any(f is not None and len(f) and (f["task"] == "blind").any() for f in frames)


def validated_judgements(tables: Any) -> pd.DataFrame:
    """The analysis's validated judgements plus its validated secondary-order blind rows, with
    plain (not categorical) columns, as the audits read a JUDGEMENTS table."""
    frames = [tables.judgements]
    secondary = getattr(tables, "secondary", None)
    if secondary is not None and len(secondary):
        frames.append(secondary)
    frame = pd.concat(
        [
            f.astype({c: object for c in ("variant", "config", "judge", "task") if c in f})
            for f in frames
        ],
        ignore_index=True,
    )
    return frame.drop(columns=[c for c in ("file", "row", "score") if c in frame.columns])
