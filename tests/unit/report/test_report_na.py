"""The report shows only what can be estimated: a degenerate interval or an estimate
that says why it has no value reads "n/a" with the reason, never 0.000 [0.000, 0.000]."""

from __future__ import annotations

from implicit_bench.report.summary_page import fmt_metric


def test_degenerate_interval_is_not_a_finding():
    html = fmt_metric({"value": 0.0, "ci": [0.0, 0.0], "n": 40, "level": 0.95})
    assert "n/a" in html and "degenerate" in html and "0.000 [" not in html
    html = fmt_metric(
        {"value": 0.0, "ci": [0.0, 0.0], "n": 40, "level": 0.95}, pct=True
    )  # the "0 of 3" group
    assert "n/a" in html and "0.0%" not in html


def test_estimate_with_a_reason_reads_na_with_it():
    html = fmt_metric(
        {"value": None, "ci": None, "n": 0, "level": 0.95, "reason": "fewer than 2 labels per unit"}
    )
    assert "n/a" in html and "fewer than 2 labels per unit" in html


def test_a_real_interval_is_still_shown():
    html = fmt_metric({"value": 0.25, "ci": [0.1, 0.4], "n": 3, "level": 0.95})
    assert html.startswith('<span class="v">0.250</span>') and "n/a" not in html
