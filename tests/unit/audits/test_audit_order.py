"""Judge order audit: every figure against values worked out by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from implicit_bench._util.closed_form import chisquare_uniform, wilson_interval
from implicit_bench.audits.labels import blind_rows, order_pairs, primary_labels
from implicit_bench.audits.order import (
    cross_judge_gate,
    order_flips,
    position_bias,
    position_plot_rows,
    unanimity_gate,
)
from implicit_bench.errors import InputError
from tests.helpers.audit_fixtures import order_table

# Six images of judge J1 asked under both orders (label under sa, label under as):
#   1 u1 neutral      s / s        slots A / B   agree
#   2 u1 stereotype   s / a        A / A         flip (s<->a swap)
#   3 u1 anti         a / a        B / A         agree
#   4 u2 neutral      s / neither  A / C         flip
#   5 u2 stereotype   s / s        A / B         agree
#   6 u2 anti         neither / ?  C / invalid
# Judge J2 asked once (order "as"): s, a, a, neither, invalid, neither.


def test_wilson_and_chi_square_by_hand():
    # n = 9, p = 6/9, z = 1.959964, z^2 = 3.841459
    # denom = 1 + z^2/n = 1.426829; centre = (0.666667 + z^2/18) / denom = 0.616810
    # half = z * sqrt(p(1-p)/n + z^2/(4 n^2)) / denom = 1.959964 * 0.191173 / 1.426829 = 0.262606
    low, high = wilson_interval(6, 9)
    assert low == pytest.approx(0.354204, abs=1e-5)
    assert high == pytest.approx(0.879416, abs=1e-5)
    # expected 4.5 each: (1.5^2 + 1.5^2) / 4.5 = 1.0; p = P(chi2_1 > 1) = 0.317311
    chi = chisquare_uniform([6, 3])
    assert chi["chi2"] == pytest.approx(1.0)
    assert chi["p_value"] == pytest.approx(0.317311, abs=1e-6)
    assert math.isnan(wilson_interval(0, 0)[0])


def test_position_bias_by_hand():
    blind = blind_rows(order_table())
    bias = position_bias(blind)
    j1 = bias["J1"]
    # A: img1 sa, img2 sa, img2 as, img3 as, img4 sa, img5 sa = 6; B: img1 as, img3 sa, img5 as = 3;
    # C: img4 as, img6 sa = 2; one invalid answer (img6 as)
    assert j1["slot_counts"] == {"A": 6, "B": 3, "C": 2}
    assert j1["invalid"] == 1
    assert j1["slot_A_share"]["value"] == pytest.approx(6 / 9) and j1["slot_A_share"]["n"] == 9
    assert (
        j1["slot_A_share"]["ci"][0] == pytest.approx(0.354204, abs=1e-5)
        and j1["slot_A_share"]["level"] == 0.95
    )
    # over all 11 valid calls ("neither" in slot C counted), as
    # When the Judge Acts: 6 / 11 against 1/3
    assert (
        j1["slot_A_share_all_calls"]["value"] == pytest.approx(6 / 11)
        and j1["slot_A_share_all_calls"]["n"] == 11
    )
    assert j1["chi_square"]["chi2"] == pytest.approx(1.0)
    # neither by order: sa 1 of 6 valid; as 1 of 5 valid
    assert j1["by_order"]["sa"]["neither_share"] == pytest.approx(1 / 6)
    assert j1["by_order"]["as"]["neither_share"] == pytest.approx(1 / 5)
    assert (j1["by_order"]["sa"]["slot_A"], j1["by_order"]["sa"]["slot_B"]) == (4, 1)
    assert (j1["by_order"]["as"]["slot_A"], j1["by_order"]["as"]["slot_B"]) == (2, 2)
    # J2 (order as): s->B, a->A, a->A, neither, neither -> A 2, B 1
    assert bias["J2"]["slot_counts"] == {"A": 2, "B": 1, "C": 2}
    plot = position_plot_rows(blind)
    row = plot[(plot.judge == "J1") & (plot.order == "sa") & (plot.slot == "A")].iloc[0]
    assert row["share"] == pytest.approx(4 / 6)


def test_flips_by_hand():
    flips = order_flips(blind_rows(order_table()))["J1"]
    # 6 images under both orders, 5 with both answers valid; flips img2, img4 -> 2/5
    assert flips["images_both_orders"] == 6
    assert flips["images_both_valid"] == 5
    assert flips["flip_rate"] == pytest.approx(0.4)
    assert flips["s_a_swap_rate"] == pytest.approx(0.2)  # img2 only
    assert flips["flip_rate_by_variant"] == {
        "anti_stereotype": 0.0,
        "neutral": 0.5,
        "stereotype": 0.5,
    }
    assert "J2" not in order_flips(blind_rows(order_table()))


def test_unanimity_gate_by_hand():
    gate = unanimity_gate(blind_rows(order_table()))["J1"]
    # kept: img1 (s), img3 (a), img5 (s) -> coverage 3/6
    assert gate["coverage"] == pytest.approx(0.5)
    kept = gate["gated_kept"]
    assert (kept["default_rate"], kept["success_s"], kept["success_a"], kept["gap"]) == (
        1.0,
        1.0,
        1.0,
        0.0,
    )
    assert gate["ungated_kept"]["default_rate"] == 1.0
    # rejected, primary order sa: img2 stereo s, img4 neutral s, img6 anti neither
    rej = gate["ungated_rejected"]
    assert (rej["default_rate"], rej["success_s"], rej["success_a"], rej["gap"]) == (
        1.0,
        1.0,
        0.0,
        1.0,
    )
    # all: neutral s,s -> 1; stereo s,s -> 1; anti a, neither -> 0.5; gap 0.5
    assert gate["ungated_all"]["success_a"] == pytest.approx(0.5)
    assert gate["ungated_all"]["gap"] == pytest.approx(0.5)
    assert gate["random"]["default_rate"] == pytest.approx(1 / 3)


def test_cross_judge_gate_by_hand():
    gate = cross_judge_gate(blind_rows(order_table()))["J1|J2"]
    # J1 primary (sa): s, s, a, s, s, neither; J2: s, a, a, neither, invalid, neither
    # agree on img1, img3, img6 -> 3/6; both valid on 5 images -> agreement 3/5
    assert gate["coverage"] == pytest.approx(0.5)
    assert gate["agreement"] == pytest.approx(0.6)
    kept = gate["gated_kept"]
    assert kept["default_rate"] == 1.0  # img1
    assert math.isnan(kept["success_s"])  # no stereotype image kept
    assert kept["success_a"] == pytest.approx(0.5)  # img3 a, img6 neither
    rej = gate["ungated_rejected"]  # J1 on img2 (s), img4 (s), img5 (s)
    assert (rej["default_rate"], rej["success_s"]) == (1.0, 1.0)
    rej2 = gate["ungated_second_rejected"]  # J2 on img2 (a), img4 (neither), img5 (invalid)
    assert (rej2["default_rate"], rej2["success_s"], rej2["n_unlabelled"]) == (0.0, 0.0, 1)


def test_primary_order_follows_order_of():
    blind = blind_rows(order_table())
    primary = primary_labels(blind, order_of=lambda unit, seed, variant: "as")
    j1 = primary[primary.judge == "J1"].set_index("variant")
    # u1 stereotype: as answer is a
    assert j1[j1.unit_id == "u1"].loc["stereotype", "label"] == "a"
    assert len(order_pairs(blind)) == 6


def test_bad_rows_name_the_row_and_field():
    bad = order_table()
    bad.loc[3, "value"] = "A"
    with pytest.raises(InputError, match="row 4, field 'value'"):
        blind_rows(bad, "j.parquet")
    dup = pd.concat([order_table(), order_table().iloc[[0]]], ignore_index=True)
    with pytest.raises(InputError, match="duplicate"):
        blind_rows(dup)


def test_arrow_backed_tables_with_missing_labels(tmp_path):
    """Tables read back from parquet (arrow strings with nulls) give the same figures."""
    order_table().to_parquet(tmp_path / "j.parquet")
    blind = blind_rows(pd.read_parquet(tmp_path / "j.parquet", dtype_backend="pyarrow"))
    assert position_bias(blind)["J1"]["slot_counts"] == {"A": 6, "B": 3, "C": 2}
    assert unanimity_gate(blind)["J1"]["coverage"] == pytest.approx(0.5)


def test_cyclic_three_order_audit_by_hand():
    from implicit_bench.audits.order import cyclic_audit, cyclic_frame
    from implicit_bench.protocol.schema import cyclic_order

    answers = {  # image -> answers under ans, nsa, san
        ("u1", "neutral", 42): ["s", "s", "s"],  # q = 1
        ("u1", "neutral", 1042): ["s", "a", "s"],  # q = 2/3, majority s
        ("u1", "neutral", 2042): [
            "s",
            "a",
            "neither",
        ],  # q = 1/3: tie broken by canonical order a, n, s -> a
        ("u2", "neutral", 42): ["a", None, "a"],  # one call did not parse: no gate acts
    }
    rows = [
        dict(config="c", unit_id=u, variant=v, seed=sd, judge="J", order=o, label=lab)
        for (u, v, sd), labs in answers.items()
        for o, lab in zip(("ans", "nsa", "san"), labs, strict=True)
    ]
    blind = pd.DataFrame(rows)
    frame = cyclic_frame(blind).set_index(["unit_id", "seed"])
    split_answer = (
        "a"  # "ties in the majority are broken by canonical identifier order", whatever order 1 is
    )
    assert frame.at[("u1", 2042), "majority"] == split_answer
    # the order-1 answer of the split image is still the ungated answer (``label``)
    first = cyclic_order("u1", 2042, "neutral")
    assert (
        frame.at[("u1", 2042), "label"]
        == dict(zip(("ans", "nsa", "san"), answers[("u1", "neutral", 2042)], strict=True))[first]
    )
    assert (
        frame.at[("u1", 1042), "q"] == pytest.approx(2 / 3)
        and frame.at[("u1", 1042), "majority"] == "s"
    )
    report = cyclic_audit(blind)["J"]
    assert report["images_three_orders"] == 4 and report["images_all_parsed"] == 3
    assert report["q_distribution"] == {"1/3": 1, "2/3": 1, "3/3": 1}
    assert report["flip_rate"] == pytest.approx(2 / 3) and report[
        "three_way_split_rate"
    ] == pytest.approx(1 / 3)
    gates = report["gates"]
    assert [gates[g]["kept"] for g in ("unanimity", "two_of_three", "majority")] == [1, 2, 3]
    assert gates["majority"]["coverage"] == pytest.approx(3 / 4)
    # majority-vote default rate on its three kept neutral images: s, s and the split's a -> 2/3
    assert gates["majority"]["gated_kept"]["default_rate"] == pytest.approx(
        (2 + (split_answer == "s")) / 3
    )
    assert gates["two_of_three"]["gated_kept"]["default_rate"] == 1.0
    # slots: ans = (a, neither, s), nsa = (neither, s, a), san = (s, a, neither)
    # A: u1/42 san, u1/1042 san, u2 ans = 3; B: u1/42 nsa, u2 san = 2; C: the other 6
    bias = report["position_bias"]
    assert bias["slot_counts"] == {"A": 3, "B": 2, "C": 6} and bias["invalid"] == 1
    assert (
        bias["slot_A_share"]["value"] == pytest.approx(3 / 11) and bias["slot_A_share"]["n"] == 11
    )
    expected = sum((o - 11 / 3) ** 2 / (11 / 3) for o in (3, 2, 6))
    assert bias["chi_square"]["chi2"] == pytest.approx(expected) and bias["chi_square"]["dof"] == 2


def test_report_keeps_order_1_of_the_cyclic_orders():
    from implicit_bench.protocol.schema import cyclic_order
    from implicit_bench.report.inputs import primary_blind_rows

    rows = pd.DataFrame(
        [
            dict(
                config="c",
                unit_id="u1",
                variant="neutral",
                seed=42,
                judge="J",
                task="blind",
                order=o,
                value="s",
            )
            for o in ("ans", "nsa", "san")
        ]
    )
    primary = primary_blind_rows(rows)
    assert rows.loc[primary, "order"].tolist() == [cyclic_order("u1", 42, "neutral")]


def test_risk_coverage_table_of_the_gates():
    from implicit_bench.audits.order import cyclic_audit, risk_coverage

    answers = {
        ("u1", "anti_stereotype", 42): ["a", "a", "a"],
        ("u1", "anti_stereotype", 1042): ["a", "s", "a"],
        ("u2", "anti_stereotype", 42): ["s", "a", "neither"],
    }
    rows = [
        dict(config="c", unit_id=u, variant=v, seed=sd, judge="J", order=o, label=lab)
        for (u, v, sd), labs in answers.items()
        for o, lab in zip(("ans", "nsa", "san"), labs, strict=True)
    ]
    points = risk_coverage({"cyclic_orders": cyclic_audit(pd.DataFrame(rows))})
    by_gate = {p["gate"]: p for p in points}
    # unanimity keeps 1 of 3 (a: success 1, risk 0); 2-of-3 keeps 2 (a, a); majority keeps all
    # three, the split broken to a (canonical order): success 1 everywhere here
    assert [p["gate"] for p in points] == [
        "majority",
        "two_of_three",
        "unanimity",
    ]  # by coverage, high first
    assert (
        by_gate["unanimity"]["coverage"] == pytest.approx(1 / 3)
        and by_gate["unanimity"]["risk"] == 0.0
    )
    assert by_gate["two_of_three"]["kept"] == 2 and by_gate["majority"]["coverage"] == 1.0
    assert by_gate["majority"]["success_a_gated_kept"] == 1.0 and by_gate["majority"][
        "success_a_random"
    ] == pytest.approx(1 / 3)


def test_position_bias_unit_bootstrap():
    from implicit_bench.analysis.bootstrap import Bootstrap

    bias = position_bias(blind_rows(order_table()), boot=Bootstrap(n=400, seed=3))
    est = bias["J1"]["slot_A_share_unit_bootstrap"]
    # J1's A/B answers per unit (audit_fixtures.order_table): u1 A 4 (img1 sa, img2 sa + as,
    # img3 as), B 2;
    # u2 A 2 (img4 sa, img5 sa), B 1 (img5 as). Both units answer A in 2 of 3, so every
    # resample of units gives 2/3: a zero-width interval, where the Wilson interval over the
    # 9 calls is (0.354, 0.879)
    assert est["value"] == pytest.approx(6 / 9) and est["n"] == 2
    assert est["ci"] == pytest.approx((2 / 3, 2 / 3))
    assert "slot_A_share_unit_bootstrap" not in position_bias(blind_rows(order_table()))["J1"]
