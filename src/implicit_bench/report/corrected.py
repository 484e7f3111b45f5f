"""The summary page's "Corrected for judge error" section: benchmark.json's ``corrected`` block
(a real run's calibration table; docs/correction.md) beside the judged rates it corrects."""

from __future__ import annotations

from implicit_bench._util.nested import dig
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.benchmark_file import BenchmarkFile, Calibration
from implicit_bench.protocol.schema import BLIND_LABELS
from implicit_bench.report.summary_page import esc, fmt_metric

#: the rates of the block's ``all`` entry, in table order, with their row labels
CLASSES = BLIND_LABELS
LEFT_OUT = ("other_config", "unlabelled", "judge_invalid")


def _counts(cal: Calibration) -> str:
    per_variant = ", ".join(f"{esc(v)} {n:,}" for v, n in (cal.items_per_variant or {}).items())
    sources = ", ".join(f"{esc(s)} {n:,}" for s, n in (cal.by_source or {}).items())
    left = ", ".join(f"{k.replace('_', ' ')} {int(getattr(cal, k) or 0):,}" for k in LEFT_OUT)
    cond = cal.condition_number
    most = "–" if "max_condition" not in cal.model_fields_set else cal.max_condition
    return (
        f'<span id="calibration-items">{int(cal.items or 0):,}</span> calibration images '
        f"({per_variant or 'none'}; labelled by {sources or 'nobody'}) "
        f"of {int(cal.rows or 0):,} rows; "
        f"left out: {left}. Condition number of the misclassification matrix "
        f"{'–' if cond is None else f'{cond:.2f}'} (at most {most})."
    )


def _raters(cal: Calibration) -> str:
    """The people's agreement (``human-eval import``'s ``raters`` column), or ""."""
    agree = cal.raters
    if agree is None:
        return ""
    kappa, pairs = agree.get("mean_kappa"), len(agree.get("pairs") or [])
    return (
        f' <span id="calibration-raters">Labelled by {int(agree.get("raters") or 0):,} people; '
        f"{int(agree.get('images_two_or_more_raters') or 0):,} images with two or more raters, "
        f"mean Cohen's kappa {'–' if kappa is None else f'{kappa:.2f}'} over {pairs} "
        f"pair{'' if pairs == 1 else 's'} of raters.</span>"
    )


def _matrix(cal: Calibration) -> str:
    matrix = cal.matrix or {}
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


def corrected_section(bench: BenchmarkFile | None) -> str:
    """The section, or "" when benchmark.json has no ``corrected`` block (the page then stays
    byte-identical to one built before the block existed)."""
    block = bench.corrected if bench is not None else None
    if bench is None or block is None:
        return ""
    judge = block.judge or ""
    cal = block.calibration
    fixed = block.all
    warning = block.warning
    warn = (
        f'<div class="warn" id="corrected-warning">No corrected figure: {esc(warning)}</div>'
        if warning
        else ""
    )
    head = "<tr><th>rate</th><th>judged</th><th>corrected for judge error</th></tr>"
    rows = "".join(
        f'<tr data-rate="{k}"><th>{esc(label)}</th>'
        f"<td>{fmt_metric(bench.judged(judge, k), pct=True)}</td>"
        f"<td>{fmt_metric(fixed.get(k), pct=True)}</td></tr>"
        for k, label in ((k, metric_schema.metric(k).corrected) for k in metric_schema.tabled())
    )
    return (
        "<h2>Corrected for judge error</h2>"
        '<p class="small" id="corrected-source">Source: '
        "metrics/benchmark.json <code>corrected</code> "
        "(calibration table "
        f"<code>{esc(block.calibration_table or '')}</code>; "
        f"judge {esc(judge)}, "
        f"configuration {esc(block.config or '')}; "
        "docs/correction.md). The judged rates are the judge's "
        f"labels; the corrected ones undo its misclassification measured on the calibration images "
        "(three-class Rogan-Gladen; intervals from a joint bootstrap "
        "of units and calibration images).</p>"
        f'{warn}<p class="small">{_counts(cal)}{_raters(cal)}</p>'
        f'<table id="corrected">{head}{rows}</table>{_matrix(cal)}'
    )
