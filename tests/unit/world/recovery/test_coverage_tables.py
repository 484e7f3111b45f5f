"""The coverage benchmark's result tables: rows of every interval method, relabelling."""

from __future__ import annotations

import pytest

from benchmarks.coverage_study import markdown, method_markdown, relabel, targets


def _row(k: int) -> dict:
    n = 100
    return {
        "truth": 0.5,
        "truth_key": "x",
        "worlds": n,
        "covered": k,
        "undefined": 0,
        "coverage": {"value": k / n, "ci": [k / n - 0.01, k / n + 0.01], "n": n, "level": 0.95},
        "coverage_finite_population": k / n,
        "mean_width": 0.1,
        "mean_bias": 0.0,
        "in_target": 93 <= k <= 97,
    }


def _result() -> dict:
    rows = {
        "gap": _row(95),
        "gap (corrected)": _row(96),  # the run's method for corrected rates: basic
        "gap (corrected, percentile)": _row(94),
        "gap (corrected, bca)": _row(93),
        "hedges_g [age]": _row(92),  # studentized
        "hedges_g [age] (percentile)": _row(91),
        "hedges_g [age] (bca)": _row(90),
        "hedges_g [age] (basic)": _row(94),
    }
    return {
        "estimands": rows,
        "bootstrap_method": {"hedges_g": "studentized", "corrected": "basic"},
    }


def test_targets_of_method_rows() -> None:
    assert targets("gap (corrected, bca)") == [("gap (corrected, bca)", "gap (rendered)")]
    assert targets("hedges_g [age] (basic)") == [("hedges_g [age] (basic)", "hedges_g [age]")]
    assert targets("slot_a_share (unit bootstrap)") == [
        ("slot_a_share (unit bootstrap)", "slot_a_share")
    ]


def test_relabel_swaps_the_chosen_rows_and_round_trips() -> None:
    res = _result()
    new = relabel(res, {"hedges_g": "basic", "corrected": "percentile"})
    rows = new["estimands"]
    assert (
        rows["gap (corrected)"]["covered"] == 94 and rows["gap (corrected, basic)"]["covered"] == 96
    )
    assert rows["hedges_g [age]"]["covered"] == 94
    assert rows["hedges_g [age] (studentized)"]["covered"] == 92
    assert rows["gap"] == res["estimands"]["gap"] and len(rows) == len(res["estimands"])
    assert new["relabelled_from"] == res["bootstrap_method"]
    assert relabel(new, res["bootstrap_method"])["estimands"] == res["estimands"]
    # a rate's own key wins over "corrected"
    one = relabel(res, {"hedges_g": "studentized", "corrected": "basic", "gap_corrected": "bca"})
    assert one["estimands"]["gap (corrected)"]["covered"] == 93
    with pytest.raises(ValueError, match="no studentized"):
        relabel(res, {"corrected": "studentized"})


def test_tables_mark_the_chosen_method() -> None:
    res = _result()
    plain = markdown(res, methods=False)
    assert "(corrected, bca)" not in plain and "| gap (corrected) | 0.500 | 96.0%" in plain
    by = method_markdown(res)
    assert (
        "| gap (corrected) | 94.0% (93.0-95.0) | 93.0% (92.0-94.0) | - "
        "| 96.0% (95.0-97.0) | basic |" in by
    )
    assert "| hedges_g [age] | 91.0%" in by and by.rstrip().endswith("| studentized |")
