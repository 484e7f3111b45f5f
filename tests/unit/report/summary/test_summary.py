"""metrics/summary.json: the headline values picked from hand-written detail metrics."""

from __future__ import annotations

import pytest

from implicit_bench.protocol.estimate import Estimate
from implicit_bench.protocol.summary_file import MAX_VALUES, SummaryFile
from implicit_bench.report.summary.stage import count_values, headline


def _iv(v, lo, hi, n=8):
    return Estimate.of(v, (lo, hi), n, 0.95).to_json()


DETAIL = {
    "kg": {"units_total": 10},
    "triplets": {"triplets_total": 9},
    "render": {
        "configs": {
            "a": {"items": 30, "by_status": {"ok": 27, "refused": 3}},
            "b": {"items": 10, "by_status": {"ok": 10}},
        }
    },
    "benchmark": {
        "units": 8,
        "primary_judge": "j1",
        "default_rate": _iv(0.52, 0.4, 0.6),
        "success_stereotype": _iv(0.9, 0.8, 1.0),
        "success_anti": _iv(0.5, 0.3, 0.7),
        "gap": _iv(0.4, 0.2, 0.6),
        "a_to_s": _iv(0.31, 0.2, 0.4),
        "by_default_strength": {
            "groups": {
                "0 of 3": {"n_units": 2},
                "1-2 of 3": {"n_units": 3},
                "3 of 3": {
                    "n_units": 3,
                    "success_stereotype": _iv(0.97, 0.9, 1.0),
                    "success_anti": _iv(0.54, 0.4, 0.7),
                },
            }
        },
        "agreement": [{"agreement": _iv(0.8, 0.7, 0.9)}],
    },
    "lean": {
        "hedges_g": {
            "pooled": {
                "gender": {"n_stereotype": 9, "n_anti": 9, "g": _iv(1.25, 1.0, 1.5)},
                "race": {"n_stereotype": 9, "n_anti": 9, "g": _iv(0.5, 0.2, 0.8)},
            }
        }
    },
    "judge_audit": {"position_bias": {"j1": {"slot_A_share": _iv(0.55, 0.5, 0.6, 900)}}},
    "negation": {
        "by_judge": {
            "j1": {
                "overall": {
                    "all": {
                        "negated_0_1": {
                            "strict_success": _iv(0.25, 0.1, 0.4),
                            "lenient_success": _iv(0.5, 0.3, 0.7),
                        }
                    }
                }
            }
        }
    },
    "debias": {
        "configs": {
            "unmodified": {"info": "none", "dS": None},
            "own1": {"info": "own", "dS": _iv(9.5, 3.0, 15.0)},
            "own2": {"info": "own", "dS": _iv(3.0, -1.0, 7.0)},
            "kg1": {"info": "full_kg", "dS": _iv(2.9, 0.0, 5.0)},
            "kg2": {"info": "removed", "dS": _iv(-1.0, -3.0, 1.0)},
        },
        "provenance": {"random_init": False},
    },
}


def test_headline_picks_percentages_intervals_and_best_configs():
    s = headline(DETAIL)
    assert s["default_rate_pct"] == 52.0 and (
        s["default_rate_pct_lo"],
        s["default_rate_pct_hi"],
    ) == (40.0, 60.0)
    assert s["gap_pct"] == 40.0 and s["a_to_s_pct"] == 31.0
    assert s["strongest_default_units"] == 3
    assert (
        s["strongest_default_success_stereotype_pct"],
        s["strongest_default_success_anti_pct"],
    ) == (97.0, 54.0)
    assert s["blind_agreement_pct"] == 80.0 and s["hedges_g_max"] == 1.25
    assert s["position_bias_slot_a_pct"] == 55.0 and s["negation_strict_success_pct"] == 25.0
    assert s["negation_success_pct"] == 50.0  # lenient: NegT2IBench's pass rule
    assert (s["debias_best_own"], s["debias_best_dS_own"]) == ("own1", 9.5)
    assert (s["debias_best_retrieved"], s["debias_best_dS_retrieved"]) == ("kg1", 2.9)
    assert s["images"] == 40 and s["refusal_pct"] == 7.5
    assert (
        s["simulated"] is False
        and s["random_init"] is False
        and (s["kg_units"], s["triplets"], s["units_analysed"]) == (10, 9, 8)
    )
    assert count_values(s) <= MAX_VALUES
    typed = SummaryFile.from_json(s, "metrics/summary.json")  # what the writer writes parses
    assert typed.interval("gap_pct") == (40.0, 20.0, 60.0) and typed.images == 40


def test_a_statistic_without_interval_may_be_a_plain_number():
    s = headline(
        {
            "benchmark": {"primary_judge": "j1"},
            "judge_audit": {"position_bias": {"j1": {"slot_A_share": 0.55}}},
        }
    )
    assert s["position_bias_slot_a_pct"] == 55.0


def test_headline_of_an_empty_run_is_all_nulls_not_an_error():
    s = headline({})
    assert s["default_rate_pct"] is None and s["images"] == 0 and s["refusal_pct"] is None
    assert count_values(s) <= MAX_VALUES
    assert SummaryFile.from_json(s, "metrics/summary.json").units_analysed is None


def test_only_summary_is_a_dvc_metric():
    import yaml

    from tests.helpers.paths import REPO_ROOT

    stages = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())["stages"]
    declared = [next(iter(m)) for s in stages.values() for m in s.get("metrics", [])]
    assert declared == ["metrics/summary.json"]


@pytest.mark.parametrize("n", [MAX_VALUES + 1])
def test_count_values_counts_leaves(n):
    assert count_values({"a": list(range(n - 1)), "b": {"c": None}}) == n


def test_headline_puts_judge_corrected_rates_beside_the_judged():
    from implicit_bench.report.summary.stage import CORRECTED_GROUP, headline

    est = {"value": 0.9, "ci": [0.85, 0.95], "n": 40, "level": 0.95}
    recovery = {
        "estimands": [
            {
                "group": CORRECTED_GROUP,
                "estimand": "success_stereotype (corrected)",
                "estimate": est,
            },
            {
                "group": "benchmark corrected for judge error (all planned "
                "units, primary blind judge)",
                "estimand": "gap (corrected)",
                "estimate": est,
            },  # another unit set: not the benchmark's
        ]
    }
    s = headline(
        {
            "benchmark": {
                "success_stereotype": {"value": 0.85, "ci": [0.8, 0.9], "n": 40, "level": 0.95}
            },
            "recovery": recovery,
        }
    )
    assert s["success_stereotype_pct"] == 85.0
    assert (
        s["success_stereotype_corrected_pct"],
        s["success_stereotype_corrected_pct_lo"],
        s["success_stereotype_corrected_pct_hi"],
    ) == (90.0, 85.0, 95.0)
    assert s["gap_corrected_pct"] is None and s["default_rate_corrected_pct"] is None
    assert headline({})["gap_corrected_pct"] is None  # no calibration set: nothing corrected
