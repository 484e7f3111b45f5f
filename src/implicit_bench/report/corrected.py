"""The summary page's "Corrected for judge error" section: benchmark.json's ``corrected`` block
(a real run's calibration table; docs/correction.md) beside the judged rates it corrects."""

from __future__ import annotations

from typing import Any

from implicit_bench._util.nested import dig
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.schema import BLIND_LABELS
from implicit_bench.report.summary_page import esc, fmt_metric

#: the rates of the block's ``all`` entry, in table order, with their row labels
CLASSES = BLIND_LABELS
LEFT_OUT = ("other_config", "unlabelled", "judge_invalid")


def _judged(bench: dict[str, Any], judge: str, key: str) -> Any:
    """The judged rate the corrected one is paired with: ``judges.<judge>.all.<key>``."""
    return dig(bench, "judges", judge, "all", key)


def _counts(cal: dict[str, Any]) -> str:
    per_variant = ", ".join(
        f"{esc(v)} {n:,}" for v, n in (dig(cal, "items_per_variant") or {}).items()
    )
    sources = ", ".join(f"{esc(s)} {n:,}" for s, n in (dig(cal, "by_source") or {}).items())
    left = ", ".join(f"{k.replace('_', ' ')} {int(cal.get(k) or 0):,}" for k in LEFT_OUT)
    cond = cal.get("condition_number")
    return (
        f'<span id="calibration-items">{int(cal.get("items") or 0):,}</span> calibration images '
        f"({per_variant or 'none'}; labelled by {sources or 'nobody'}) "
        f"of {int(cal.get('rows') or 0):,} rows; "
        f"left out: {left}. Condition number of the misclassification matrix "
        f"{'–' if cond is None else f'{cond:.2f}'} (at most {cal.get('max_condition', '–')})."
    )


def _raters(cal: dict[str, Any]) -> str:
    """The people's agreement (``human-eval import``'s ``raters`` column), or ""."""
    agree = cal.get("raters")
    if not isinstance(agree, dict):
        return ""
    kappa, pairs = agree.get("mean_kappa"), len(agree.get("pairs") or [])
    return (
        f' <span id="calibration-raters">Labelled by {int(agree.get("raters") or 0):,} people; '
        f"{int(agree.get('images_two_or_more_raters') or 0):,} images with two or more raters, "
        f"mean Cohen's kappa {'–' if kappa is None else f'{kappa:.2f}'} over {pairs} "
        f"pair{'' if pairs == 1 else 's'} of raters.</span>"
    )


def _matrix(cal: dict[str, Any]) -> str:
    matrix = cal.get("matrix") or {}
    head = "<tr><th>reference \\ judge</th>" + "".join(f"<th>{c}</th>" for c in CLASSES) + "</tr>"
    rows = "".join(
        f"<tr><th>{c}</th>"
        + "".join(f"<td>{fmt_metric(dig(matrix, c, j), extras=False)}</td>" for j in CLASSES)
        + "</tr>"
        for c in CLASSES
    )
    return (
        f"<details><summary>Misclassification matrix (P(judge says column | reference says row), "
        "Wilson 95% intervals)</summary>"
        f'<table id="calibration-matrix">{head}{rows}</table>'
        "</details>"
    )


def corrected_section(bench: dict[str, Any] | None) -> str:
    """The section, or "" when benchmark.json has no ``corrected`` block (the page then stays
    byte-identical to one built before the block existed)."""
    block = (bench or {}).get("corrected")
    if not isinstance(block, dict):
        return ""
    judge = str(block.get("judge", ""))
    cal = block.get("calibration") or {}
    fixed = block.get("all") or {}
    warning = block.get("warning")
    warn = (
        f'<div class="warn" id="corrected-warning">No corrected figure: {esc(warning)}</div>'
        if warning
        else ""
    )
    head = "<tr><th>rate</th><th>judged</th><th>corrected for judge error</th></tr>"
    rows = "".join(
        f'<tr data-rate="{k}"><th>{esc(label)}</th>'
        f"<td>{fmt_metric(_judged(bench or {}, judge, k), pct=True)}</td>"
        f"<td>{fmt_metric(fixed.get(k), pct=True)}</td></tr>"
        for k, label in ((k, metric_schema.metric(k).corrected) for k in metric_schema.tabled())
    )
    return (
        "<h2>Corrected for judge error</h2>"
        '<p class="small" id="corrected-source">Source: '
        "metrics/benchmark.json <code>corrected</code> "
        "(calibration table "
        f"<code>{esc(block.get('calibration_table', ''))}</code>; "
        f"judge {esc(judge)}, "
        f"configuration {esc(block.get('config', ''))}; "
        "docs/correction.md). The judged rates are the judge's "
        f"labels; the corrected ones undo its misclassification measured on the calibration images "
        "(three-class Rogan-Gladen; intervals from a joint bootstrap "
        "of units and calibration images).</p>"
        f'{warn}<p class="small">{_counts(cal)}{_raters(cal)}</p>'
        f'<table id="corrected">{head}{rows}</table>{_matrix(cal)}'
    )
