"""When the Judge Acts' selection audit: every figure against values worked out by hand, the
bootstrap recomputed per resample, the protocol (orders, opaque labels, contracts, parser), the
decisions file, and the simulated world's planted truth."""

from __future__ import annotations

import math

import numpy as np
import pytest

from implicit_bench._util.closed_form import wilson_interval
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.audits.image_pick import (
    Pools,
    near_ties,
    order_diagnostics,
    order_entropy,
    policy,
    policy_report,
    selection_audit,
    timing,
)
from implicit_bench.audits.image_pick_protocol import (
    Protocol,
    candidate_labels,
    order_of,
    parse_answer,
    request_text,
    slot_labels,
)
from implicit_bench.errors import InputError
from tests.helpers.paths import REPO_ROOT

NAN = math.nan
# Three pools (canonical candidate order), K = 3 orders:
#   P1 (g1): h = 0, .5, 1       choices 0, 1, 2 (slot A every time: a three-way split)
#   P2 (g2): h = 1, .5, .5, 0   choices 0, 0, 1 (q = 2/3, plurality 0)
#   P3 (g1): h = .5, .5, .5     choices 2, 2, 2 (unanimous; every candidate tied)
U = np.array([[0.0, 0.5, 1.0, NAN], [1.0, 0.5, 0.5, 0.0], [0.5, 0.5, 0.5, NAN]])
C = np.array([[0, 1, 2], [0, 0, 1], [2, 2, 2]])
S = np.array([[0, 0, 0], [0, 2, 1], [2, 1, 0]])
SEC = np.array([[3.0, 4.0, 5.0], [2.0, 2.0, 2.0], [1.0, 1.0, 1.0]])
G = np.array(["g1", "g2", "g1"], dtype=object)


def pools() -> Pools:
    return Pools(U, C, G, S, SEC)


def v(x):
    return x["value"] if isinstance(x, dict) else x


def test_policies_by_hand() -> None:
    assert policy(C, 4, "direct")[0].tolist() == [0, 0, 2]
    # majority: P1's three-way split breaks to the lowest index (canonical order)
    assert policy(C, 4, "majority")[0].tolist() == [0, 0, 2]
    chosen, acts = policy(C, 4, "two_of_three")
    assert acts.tolist() == [False, True, True] and chosen.tolist() == [-1, 0, 2]
    chosen, acts = policy(C, 4, "unanimity")
    assert acts.tolist() == [False, False, True]
    # a gate acts only when every call parsed
    chosen, acts = policy(np.array([[1, 1, -1]]), 3, "majority")
    assert not acts[0]


def test_direct_policy_outcomes_by_hand() -> None:
    chosen, acts = policy(C, 4, "direct")
    r = policy_report(pools(), chosen, acts)
    # P1 h=0 (best 1, mean .5): regret 1, gain -.5, below; P2 h=1: regret 0, gain .5;
    # P3 h=.5 = mean: regret 0, gain 0, not below (strict), best-rated (ties count)
    assert v(r["regret"]) == pytest.approx(1 / 3)
    assert v(r["gain_over_random"]) == pytest.approx(0.0)
    assert v(r["below_mean_rate"]) == pytest.approx(1 / 3)
    assert v(r["best_rated_share"]) == pytest.approx(2 / 3)
    assert v(r["mean_utility"]) == pytest.approx(0.5)
    # random: regret (.5 + .5 + 0) / 3; below-mean probability (1/3 + 1/4 + 0) / 3 (fractional,
    # never the indicator of the expected utility); best-rated probability (1/3 + 1/4 + 1) / 3
    assert v(r["random"]["regret"]) == pytest.approx(1 / 3)
    assert v(r["random"]["below_mean_rate"]) == pytest.approx(7 / 36)
    assert v(r["random"]["best_rated_share"]) == pytest.approx(19 / 36)
    assert v(r["below_mean_minus_random"]) == pytest.approx(1 / 3 - 7 / 36)
    lo, hi = wilson_interval(1, 3)
    assert r["below_mean_rate_wilson"]["ci"] == [pytest.approx(lo), pytest.approx(hi)]
    # groups: g1 = P1, P3: (1 + 0) / 2; g2 = P2: 0 -> worst 0.5 (g1), disparity 0.5
    assert r["by_group"]["g1"]["regret"] == pytest.approx(0.5)
    assert r["by_group"]["g2"]["regret"] == pytest.approx(0.0)
    assert v(r["worst_group_regret"]) == pytest.approx(0.5) and r["worst_group"] == "g1"
    assert v(r["group_disparity"]) == pytest.approx(0.5)
    # sensitivity margin .05: P1 still below .45, P2 / P3 not
    assert r["sensitivity"]["below_mean_rate"] == pytest.approx(1 / 3)


def test_gates_and_their_rejected_prompts_by_hand() -> None:
    audit = selection_audit(pools())
    p = audit["policies"]
    assert v(p["unanimity"]["coverage"]) == pytest.approx(1 / 3)
    assert v(p["unanimity"]["regret"]) == pytest.approx(0.0)
    # rejected by unanimity: P1, P2 with the direct policy: regret (1 + 0) / 2, BMR 1/2
    rej = p["unanimity"]["direct_on_rejected"]
    assert rej["acted"] == 2 and v(rej["regret"]) == pytest.approx(0.5)
    assert v(rej["below_mean_rate"]) == pytest.approx(0.5)
    assert v(p["two_of_three"]["gain_over_random"]) == pytest.approx(0.25)
    assert v(p["two_of_three"]["coverage"]) == pytest.approx(2 / 3)
    assert v(p["majority"]["regret"]) == pytest.approx(1 / 3)
    assert v(p["oracle"]["regret"]) == 0.0
    assert v(p["oracle"]["gain_over_random"]) == pytest.approx(1 / 3)


def test_risk_coverage_by_hand() -> None:
    rc = selection_audit(pools())["risk_coverage"]
    assert [r["threshold"] for r in rc] == ["1/3", "2/3", "3/3"]
    assert [r["kept"] for r in rc] == [3, 2, 1]
    # q >= 2/3 keeps P2 (regret 0, random .5) and P3 (0, 0): difference -0.25
    assert v(rc[1]["regret_minus_random"]) == pytest.approx(-0.25)
    assert v(rc[1]["random_regret"]) == pytest.approx(0.25)


def test_order_entropy_by_hand() -> None:
    h = order_entropy(C, np.array([3, 4, 3]))
    # P1 (1/3, 1/3, 1/3) over log 3: 1; P2 (2/3, 1/3) over log 4; P3 unanimous: 0
    p2 = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3)) / math.log(4)
    assert h.tolist() == pytest.approx([1.0, p2, 0.0])
    assert math.isnan(order_entropy(np.array([[0, -1, 0]]), np.array([3]))[0])


def test_order_diagnostics_by_hand() -> None:
    d = order_diagnostics(pools())
    # slot counts A 5, B 2, C 2, D 0 over 9 calls; uniform given sizes: A = (6/3 + 3/4) / 9
    assert d["slot_shares"] == pytest.approx({"A": 5 / 9, "B": 2 / 9, "C": 2 / 9, "D": 0.0})
    assert d["uniform_shares"]["A"] == pytest.approx(2.75 / 9)
    assert d["uniform_shares"]["D"] == pytest.approx(0.75 / 9)
    assert v(d["first_slot_share"]) == pytest.approx(5 / 9)
    from scipy.stats import chisquare

    exp = np.array([2.75, 2.75, 2.75, 0.75])
    ref = chisquare([5, 2, 2, 0], exp)
    assert d["chi_square"]["chi2"] == pytest.approx(ref.statistic)
    assert d["chi_square"]["p_value"] == pytest.approx(ref.pvalue)
    assert v(d["flip_rate"]) == pytest.approx(2 / 3)
    # ranges 1, 1, 0: tertile bounds 2/3 and 1 -> P3 low, P1 and P2 mid, none high
    t = d["flip_by_range_tertile"]
    assert t["low"]["flip_rate"]["n"] == 1 and v(t["low"]["flip_rate"]) == 0.0
    assert t["mid"]["flip_rate"]["n"] == 2 and v(t["mid"]["flip_rate"]) == 1.0
    assert t["high"]["flip_rate"]["n"] == 0
    # near-ties (delta .05): P1 1, P2 1, P3 3
    assert near_ties(U, 0.05).tolist() == [1, 1, 3]
    assert v(d["flip_by_near_ties"]["1"]) == 1.0 and v(d["flip_by_near_ties"]["3"]) == 0.0
    assert d["order_entropy"]["by_pool_size"]["4"]["max_reachable"] == pytest.approx(
        math.log(3) / math.log(4)
    )


def test_timing_by_hand() -> None:
    t = timing(pools())
    assert t["one_order_s_per_prompt"] == pytest.approx(2.0)
    assert t["3_order_s_per_prompt"] == pytest.approx(7.0)
    assert t["ratio"] == pytest.approx(3.5)
    assert t["median_s_per_call"] == pytest.approx(2.0)


def test_every_statistic_is_recomputed_in_each_resample() -> None:
    rng = np.random.default_rng(0)
    n = 40
    u = rng.integers(0, 7, size=(n, 4)) / 6
    u[n // 2 :, 3] = np.nan
    choices = rng.integers(0, 3, size=(n, 3))
    groups = np.array([f"g{i % 4}" for i in range(n)], dtype=object)
    p = Pools(u, choices, groups)
    boot = Bootstrap(n=200, seed=3)
    chosen, acts = policy(choices, 4, "direct")
    r = policy_report(p, chosen, acts, boot, "s")
    idx = boot.indices(n, "s")

    def regret(rows: np.ndarray) -> float:
        best = np.nanmax(u[rows], axis=1)
        return float(np.mean(best - u[rows, chosen[rows]]))

    reps = np.array([regret(row) for row in idx])
    assert r["regret"]["ci"] == pytest.approx(np.percentile(reps, [2.5, 97.5]).tolist())
    # worst group: each group resampled within itself (stratified), the max taken per resample
    per = []
    for g in sorted(set(groups)):
        rows = np.flatnonzero(groups == g)
        gidx = boot.indices(len(rows), f"s/group/{g}")
        per.append([regret(rows[i]) for i in gidx])
    worst = np.max(np.array(per), axis=0)
    assert r["worst_group_regret"]["ci"] == pytest.approx(
        np.percentile(worst, [2.5, 97.5]).tolist()
    )


def test_protocol_orders_labels_and_parsers() -> None:
    assert order_of(4, 0) == [0, 1, 2, 3] and order_of(4, 1) == [1, 2, 3, 0]
    assert Protocol(full_rotation=True).orders(4) == 4 and Protocol().orders(4) == 3
    codes = candidate_labels("p1", 4, "opaque")
    assert len(set(codes)) == 4 and all(len(c) == 2 for c in codes)
    assert slot_labels("p1", 4, 1, "opaque") == [codes[1], codes[2], codes[3], codes[0]]
    assert slot_labels("p1", 3, 2, "letters") == ["A", "B", "C"]
    text = request_text("a family lunch", ["A", "B", "C"], "choice_only")
    assert "Select the ONE image" in text and "A, B, C" in text and "ranking" not in text
    labels = ["A", "B", "C"]
    assert parse_answer('{"choice": "B", "ranking": ["B", "A", "C"]}', labels, "ranking") == "B"
    for bad in (
        '{"choice": "B", "ranking": ["A", "B", "C"]}',  # choice is not the first ranked
        '{"choice": "B", "ranking": ["B", "B", "C"]}',  # repeated label
        '{"choice": "B", "ranking": ["B", "A"]}',  # incomplete
        '{"choice": "B", "ranking": ["B", "A", "C"], "why": "x"}',  # extra field
        "B",
        "I pick B",
    ):
        assert parse_answer(bad, labels, "ranking") is None
    assert parse_answer('{"choice": "C"}', labels, "choice_only") == "C"
    assert parse_answer('{"choice": "D"}', labels, "choice_only") is None


def test_decisions_file(tmp_path) -> None:
    from implicit_bench.audits.image_pick_table import read_decisions

    rows = ["pool_id,candidate_id,utility,group,order,slot,chosen,seconds"]
    for p, (h, ch, _sl, sec) in enumerate(zip(U, C, S, SEC, strict=True)):
        m = int(np.sum(~np.isnan(h)))
        for k in range(3):
            for i in range(m):
                slot = (i - k) % m
                rows.append(
                    f"p{p},c{i},{h[i]},{G[p]},{k + 1},{slot},{'true' if ch[k] == i else 'false'},"
                    f"{sec[k]}"
                )
    path = tmp_path / "decisions.csv"
    path.write_text("\n".join(rows) + "\n")
    got = read_decisions(path)
    assert got.choices.tolist() == C.tolist()
    assert np.allclose(got.utilities, U, equal_nan=True)
    a = selection_audit(got)
    assert v(a["policies"]["direct"]["regret"]) == pytest.approx(1 / 3)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([rows[0], rows[1].replace(",0.0,", ",x,", 1)]) + "\n")
    with pytest.raises(InputError, match="row 1, field 'utility'"):
        read_decisions(bad)


def test_simulated_world_recovers_planted_truth() -> None:
    from implicit_bench.audits.image_pick_world import (
        PROTOCOLS,
        selection_truth,
        simulate_selection,
    )
    from implicit_bench.world.params import SelectionJudgeWorld, SelectionWorld

    world = SelectionWorld(
        pools=120, judges={"j": SelectionJudgeWorld(content=5, first_slot=0.4, invalid=0.05)}
    )
    boot = Bootstrap(n=500, seed=1)
    for name in ("main", "full_rotation"):
        pools_, counts = simulate_selection(world, 7, "j", PROTOCOLS[name])
        assert counts["invalid"] > 0  # prose answers fail the real parser: abstentions
        audit = selection_audit(pools_, boot, f"t/{name}")
        truth = selection_truth(world, 7, "j", PROTOCOLS[name])
        for pol in ("direct", "majority", "unanimity")[: 3 if name == "main" else 2]:
            est = audit["policies"][pol]["regret"]
            assert est["ci"][0] <= truth["policies"][pol]["regret"] <= est["ci"][1], (name, pol)
        assert v(audit["orders"]["first_slot_share"]) == pytest.approx(
            truth["first_slot_share"], abs=0.08
        )
    # a judge without content signal or slot preference and one always picking slot A
    always_a = SelectionWorld(pools=30, judges={"j": SelectionJudgeWorld(first_slot=1.0)})
    p_, _ = simulate_selection(always_a, 7, "j", PROTOCOLS["main"])
    assert (p_.slots == 0).all()
    assert selection_truth(always_a, 7, "j", PROTOCOLS["main"])["first_slot_share"] == 1.0


def test_recovery_entries_of_the_selection_audit() -> None:
    from implicit_bench.audits.params import SelectionAuditParams
    from implicit_bench.audits.stage import selection_report
    from implicit_bench.world.params import SelectionJudgeWorld, SelectionWorld, WorldParams
    from implicit_bench.world.recovery.stage import judge_selection_entries

    world = WorldParams(
        selection=SelectionWorld(
            pools=90,
            judges={
                "j": SelectionJudgeWorld(invalid=0.02),
                "w": SelectionJudgeWorld(content=0.5, first_slot=0.5),
            },
        )
    )
    params = SelectionAuditParams(
        source="sim", judge="j", second_judge="w", protocols=["main", "choice_only"]
    )
    block = selection_report(params, world, Bootstrap(n=400, seed=2))
    assert block["simulated"] is True and "SIMULATED" in block["note"]
    assert block["protocols"]["choice_only"]["protocol"]["contract"] == "choice_only"
    entries = judge_selection_entries({"selection": block}, world)
    names = {(e["group"], e["estimand"]) for e in entries}
    assert ("judge selection (main; When the Judge Acts)", "regret [direct]") in names
    assert ("judge selection (main; When the Judge Acts)", "regret [cross-model gate]") in names
    assert block["protocols"]["main"]["cross_model"]["second_judge"] == "w"
    worst = [e for e in entries if e["estimand"].startswith("worst_group_regret")]
    assert worst and all(e["covered"] is None for e in worst)  # descriptive (App. O)
    covered = [e["covered"] for e in entries if e["covered"] is not None]
    assert len(covered) >= 40 and sum(covered) >= 0.85 * len(covered)
    # the world.json of the image backends leaves the selection pools out (same fingerprint)
    from implicit_bench.world.truth import world_json

    assert "selection" not in world_json(world)["params"]


def test_cli_selection(tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from implicit_bench.cli.main import main

    rows = ["pool_id,candidate_id,utility,order,slot,chosen"]
    for p, (h, ch) in enumerate(zip(U, C, strict=True)):
        m = int(np.sum(~np.isnan(h)))
        for k in range(3):
            for i in range(m):
                rows.append(f"p{p},c{i},{h[i]},{k + 1},{(i - k) % m},{int(ch[k] == i)}")
    path = tmp_path / "d.csv"
    path.write_text("\n".join(rows) + "\n")
    out = tmp_path / "s.json"
    res = CliRunner().invoke(
        main, ["audit", "selection", str(path), "--out", str(out), "--n-boot", "100"]
    )
    assert res.exit_code == 0, res.output
    got = json.loads(out.read_text())
    assert got["policies"]["direct"]["regret"]["value"] == pytest.approx(1 / 3)
    assert got["policies"]["direct"]["by_group"]["all"]["pools"] == 3


def test_judge_audit_stage_writes_the_selection_block(tmp_path, monkeypatch) -> None:
    import importlib.util
    import json

    import pandas as pd
    import yaml
    from click.testing import CliRunner

    rows = [
        dict(config="c", unit_id="u1", variant="neutral", seed=42, judge="J", task="blind",
             value=v, valid=True, order=o, raw=v)
        for o, v in (("sa", "s"), ("as", "a"))
    ]  # fmt: skip
    (tmp_path / "data" / "judgements").mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(tmp_path / "data" / "judgements" / "judgements.parquet")
    params = {
        "judge_audit": {
            "bootstrap": {"n": 100},
            "selection": {"source": "sim", "protocols": ["main", "full_rotation"]},
        },
        "world": {"seed": 3, "selection": {"pools": 24}},
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    root = REPO_ROOT
    spec = importlib.util.spec_from_file_location("stage_ja", root / "stages" / "judge_audit.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    res = CliRunner().invoke(module.main, [], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    sel = json.loads((tmp_path / "metrics" / "judge_audit.json").read_text())["selection"]
    assert sel["simulated"] is True and sel["world_seed"] == 3
    assert sel["protocols"]["main"]["pools"] == 24
    assert sel["protocols"]["full_rotation"]["orders"]["orders"] == 4
    assert sel["protocols"]["main"]["timing"]["ratio"] == pytest.approx(3.0, rel=0.3)
    # source none (the model's default): no block; sim without pools: a one-line error
    params["world"]["selection"]["pools"] = 0
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    res = CliRunner().invoke(module.main, [])
    assert res.exit_code != 0 and "world.selection.pools" in res.output


def test_cross_model_gate_by_hand() -> None:
    from implicit_bench.audits.image_pick import cross_model_gate

    # a second judge's order-1 picks 1, 0, 2: it agrees with the first judge (0, 0, 2) on P2, P3
    second = Pools(U, np.array([[1, 1, 1], [0, 0, 0], [2, 2, 2]]), G)
    g = cross_model_gate(pools(), second)
    assert g["agreement"] == pytest.approx(2 / 3)
    assert g["gate"]["acted"] == 2 and v(g["gate"]["regret"]) == pytest.approx(0.0)
    assert v(g["gate"]["gain_over_random"]) == pytest.approx(0.25)
    assert v(g["first_on_rejected"]["regret"]) == pytest.approx(1.0)  # P1: h 0, best 1
    # the second judge on its own: P1 h .5 (regret .5), P2 and P3 regret 0
    assert v(g["second_direct"]["regret"]) == pytest.approx(1 / 6)
    with pytest.raises(ValueError, match="same pools"):
        cross_model_gate(pools(), Pools(U[:2], C[:2], G[:2]))


def test_content_scorer_against_the_judge_by_hand() -> None:
    from implicit_bench.audits.image_pick import scorer_report
    from implicit_bench.audits.image_pick_world import scorer_choices, scorer_truth
    from implicit_bench.world.params import SelectionJudgeWorld, SelectionScorerWorld
    from implicit_bench.world.params import SelectionWorld as SW

    # a scorer picking the best-rated candidates 2, 0, 0: gains .5, .5, 0 against the judge's
    # -.5, .5, 0 -> gain minus judge (1 + 0 + 0) / 3; it picks the judge's image on P2 only
    r = scorer_report(pools(), np.array([2, 0, 0]))
    assert v(r["gain_over_random"]) == pytest.approx(1 / 3)
    assert v(r["gain_minus_judge"]) == pytest.approx(1 / 3)
    assert r["agreement_with_judge"] == pytest.approx(1 / 3)
    # a simulated scorer with a huge content signal returns the best-rated image; its truth too
    world = SW(
        pools=40,
        judges={"j": SelectionJudgeWorld()},
        scorers={"sharp": SelectionScorerWorld(content=1e4)},
    )
    from implicit_bench.audits.image_pick_world import planted_pools

    u, _ = planted_pools(world, 1)
    picks = scorer_choices(world, 1, "sharp")
    assert np.allclose(u[np.arange(len(u)), picks], np.nanmax(u, axis=1))
    assert scorer_truth(world, 1, "sharp", "j")["regret"] == pytest.approx(0.0, abs=1e-9)
