"""When the Judge Acts' secondary outcomes and breakdowns, against values worked out by hand:
cultural-error differences from matched random choice (pointwise and Bonferroni intervals,
sensitive pools), Table 6's outcome definitions, generator shares and slots, the stereotype
decomposition by generator, near-tie split, strata, consensus split and output validity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.audits.image_pick import Pools, policy, policy_report, selection_audit
from implicit_bench.audits.image_pick_breakdown import (
    consensus_split,
    generator_by_slot,
    generator_shares,
    near_tie_split,
    output_validity,
    selection_breakdowns,
    stereotype_by_generator,
    strata,
)
from implicit_bench.audits.image_pick_outcomes import outcome_definitions, secondary_outcomes

NAN = math.nan
# the selection audit's hand-worked pools (tests/unit/audits/test_audit_selection.py):
#   P1 (g1): h = 0, .5, 1       choices 0, 1, 2   direct pick 0
#   P2 (g2): h = 1, .5, .5, 0   choices 0, 0, 1   direct pick 0
#   P3 (g1): h = .5, .5, .5     choices 2, 2, 2   direct pick 2
U = np.array([[0.0, 0.5, 1.0, NAN], [1.0, 0.5, 0.5, 0.0], [0.5, 0.5, 0.5, NAN]])
C = np.array([[0, 1, 2], [0, 0, 1], [2, 2, 2]])
S = np.array([[0, 0, 0], [0, 2, 1], [2, 1, 0]])
SEC = np.array([[3.0, 4.0, 5.0], [2.0, 2.0, 2.0], [1.0, 1.0, 1.0]])
G = np.array(["g1", "g2", "g1"], dtype=object)
T = 1 / 3
ST = np.array([[0, T, 2 * T, NAN], [T, T, T, T], [1, 0, 0, NAN]])  # stereotype rates
ME = np.array([[1, 0.5, 0, NAN], [0, 0, 1, 1], [0, 0, 0, NAN]])  # missing explicit
MI = np.array([[0.5, 0.5, 0, NAN], [0, 1, 0, 0], [0, 0, 1, NAN]])  # missing implicit
SAT = np.array([[0.25, 0.5, 0.75, NAN], [1, 0.5, 0.5, 0], [0, 0.5, 1, NAN]])
GEN = np.array([["a", "b", "c", ""], ["a", "b", "c", "d"], ["b", "c", "a", ""]], dtype=object)
# slot of candidate i under order k: (i - k) mod m
POS = np.full((3, 3, 4), -1)
for _p, _m in enumerate((3, 4, 3)):
    for _k in range(3):
        for _i in range(_m):
            POS[_p, _k, _i] = (_i - _k) % _m


def pools(**kw) -> Pools:
    base = dict(
        outcomes={"stereotype": ST, "missing_explicit": ME, "missing_implicit": MI,
                  "satisfaction": SAT},
        generators=GEN,
        positions=POS,
        categories=np.array(["x", "y", "x"], dtype=object),
        disagreement=np.array([0.1, 0.2, 0.3]),
    )  # fmt: skip
    base.update(kw)
    return Pools(U, C, G, S, SEC, **base)


def v(x):
    return x["value"] if isinstance(x, dict) else x


def test_cultural_error_differences_by_hand() -> None:
    chosen, acts = policy(C, 4, "direct")
    out = secondary_outcomes(U, pools().outcomes, chosen, acts)
    st = out["stereotype"]
    # picks: P1 c0 (0, pool mean 1/3), P2 c0 (1/3, mean 1/3), P3 c2 (0, mean 1/3)
    assert st["selected"] == pytest.approx(1 / 9) and st["random"] == pytest.approx(1 / 3)
    assert v(st["difference"]) == pytest.approx(-2 / 9)
    # sensitive pools: P1, P3 (P2's candidates all 1/3): regret (1 + 0) / 2, difference -1/3
    sens = st["sensitive"]
    assert sens["pools"] == 2 and sens["regret"] == pytest.approx(0.5)
    assert v(sens["difference"]) == pytest.approx(-1 / 3)
    assert sens["selected"] == pytest.approx(0.0) and sens["random"] == pytest.approx(1 / 3)
    # missing explicit: P1 1 - .5, P2 0 - .5, P3 0 - 0 -> 0; sensitive P1, P2
    me = out["missing_explicit"]
    assert v(me["difference"]) == pytest.approx(0.0) and me["sensitive"]["pools"] == 2
    # missing implicit: P1 .5 - 1/3, P2 0 - 1/4, P3 1 - 1/3 -> (1/6 - 1/4 + 2/3) / 3
    assert v(out["missing_implicit"]["difference"]) == pytest.approx((1 / 6 - 1 / 4 + 2 / 3) / 3)
    # satisfaction (higher is better): P1 .25 - .5, P2 1 - .5, P3 1 - .5 -> .25
    sat = out["satisfaction"]
    assert not sat["lower_is_better"] and v(sat["difference"]) == pytest.approx(0.25)
    assert "difference_bonferroni" not in sat
    assert out["bonferroni"]["tests"] == 3


def test_bonferroni_interval_is_the_adjusted_percentile_of_the_same_resamples() -> None:
    rng = np.random.default_rng(5)
    n = 60
    u = rng.integers(0, 7, size=(n, 3)) / 6
    x = {k: rng.integers(0, 4, size=(n, 3)) / 3 for k in ("stereotype", "missing_explicit")}
    chosen = rng.integers(0, 3, size=n)
    acts = np.ones(n, bool)
    boot = Bootstrap(n=400, seed=9)
    out = secondary_outcomes(u, x, chosen, acts, boot, "s")
    idx = boot.indices(n, "s")
    diff = x["stereotype"][np.arange(n), chosen] - x["stereotype"].mean(axis=1)
    reps = diff[idx].mean(axis=1)
    assert out["stereotype"]["difference"]["ci"] == pytest.approx(
        np.percentile(reps, [2.5, 97.5]).tolist()
    )
    # two error types in the family: level 1 - .05 / 2
    assert out["bonferroni"]["tests"] == 2 and out["bonferroni"]["level"] == pytest.approx(0.975)
    assert out["stereotype"]["difference_bonferroni"]["ci"] == pytest.approx(
        np.percentile(reps, [1.25, 98.75]).tolist()
    )
    lo, hi = out["stereotype"]["difference"]["ci"]
    blo, bhi = out["stereotype"]["difference_bonferroni"]["ci"]
    assert blo <= lo and bhi >= hi


def test_outcome_definitions_by_hand() -> None:
    chosen, acts = policy(C, 4, "direct")
    d = outcome_definitions(U, chosen, acts, near_best_delta=0.05, margin=0.05, satisfaction=SAT)
    # regrets 1, 0, 0 (median 0); random regrets .5, .5, 0 (median .5)
    assert d["median_regret"] == 0.0 and d["random_median_regret"] == pytest.approx(0.5)
    # below mean - .05: P1 only; random (1/3 + 1/4 + 0) / 3
    assert d["below_mean_margin"] == pytest.approx(1 / 3)
    assert d["random_below_mean_margin"] == pytest.approx(7 / 36)
    # near-best: P2, P3; random (1/3 + 1/4 + 1) / 3
    assert d["near_best"] == pytest.approx(2 / 3)
    assert d["random_near_best"] == pytest.approx(19 / 36)
    # below the candidate median (.5 in every pool): P1 only; random (1/3 + 1/4 + 0) / 3
    assert d["below_median"] == pytest.approx(1 / 3)
    assert d["random_below_median"] == pytest.approx(7 / 36)
    # satisfaction regret: .75 - .25, 1 - 1, 1 - 1; random .25, .5, .5
    assert d["satisfaction_regret"] == pytest.approx(1 / 6)
    assert d["random_satisfaction_regret"] == pytest.approx(5 / 12)


def test_policy_report_and_audit_carry_the_secondary_outcomes() -> None:
    chosen, acts = policy(C, 4, "unanimity")  # P3 only: stereotype 0 - 1/3
    r = policy_report(pools(), chosen, acts, Bootstrap(n=50, seed=1), "s")
    assert v(r["secondary"]["stereotype"]["difference"]) == pytest.approx(-1 / 3)
    assert r["outcome_definitions"]["pools"] == 1
    a = selection_audit(pools(), Bootstrap(n=50, seed=1), "s")
    rej = a["policies"]["unanimity"]["direct_on_rejected"]["secondary"]["stereotype"]
    assert v(rej["difference"]) == pytest.approx((-1 / 3 + 0) / 2)  # P1, P2
    b = selection_breakdowns(pools(), Bootstrap(n=50, seed=1), "s")
    assert b["generators"]["generators"]["a"]["images"] == 3
    assert b["validity"]["calls"] == 9 and b["by_category"]["y"]["pools"] == 1


def test_generator_shares_and_slots_by_hand() -> None:
    g = generator_shares(pools())
    # picks over the 9 calls: P1 a, b, c; P2 a, a, b; P3 a, a, a
    shares = {k: r["judge_share"] for k, r in g["generators"].items()}
    assert shares == pytest.approx({"a": 6 / 9, "b": 2 / 9, "c": 1 / 9, "d": 0.0})
    # uniform: 3 calls x 1/3 + 3 x 1/4 + 3 x 1/3 for a, b, c; 3 x 1/4 for d
    assert g["generators"]["a"]["uniform_share"] == pytest.approx(2.75 / 9)
    assert g["generators"]["d"]["uniform_share"] == pytest.approx(0.75 / 9)
    assert g["generators"]["c"]["mean_utility"] == pytest.approx(2 / 3)
    s = generator_by_slot(pools())["a"]
    # a shown in slot A at P1 k0, P2 k0, P3 k2 (all picked); B at P1 k2, P3 k1 (P3 picked);
    # C at P1 k1, P2 k2, P3 k0 (P3 picked); D at P2 k1 (picked)
    assert s["A"] == {"presentations": 3, "choice_rate": 1.0}
    assert s["B"] == {"presentations": 2, "choice_rate": 0.5}
    assert s["C"]["presentations"] == 3 and s["C"]["choice_rate"] == pytest.approx(1 / 3)
    assert s["D"] == {"presentations": 1, "choice_rate": 1.0}
    assert s["all"]["presentations"] == 9 and s["all"]["choice_rate"] == pytest.approx(2 / 3)


def test_stereotype_by_generator_by_hand() -> None:
    chosen, acts = policy(C, 4, "direct")
    t = stereotype_by_generator(pools(), chosen, acts)
    a = t["by_generator"]["a"]
    # every direct pick is a's image: share 1; uniform (1/3 + 1/4 + 1/3) / 3
    assert a["judge_share"] == 1.0 and a["uniform_share"] == pytest.approx(11 / 36)
    # a's ratings 0, 1/3, 0; minus their pools' means 1/3, 1/3, 1/3
    assert a["mean_rating"] == pytest.approx(1 / 9)
    assert a["within_pool"] == pytest.approx(-2 / 9)
    assert v(a["delta_when_chosen"]) == pytest.approx(-2 / 9)
    assert a["contribution"] == pytest.approx(-2 / 9) and v(t["all"]) == pytest.approx(-2 / 9)
    assert t["by_generator"]["b"]["judge_share"] == 0.0
    assert t["by_generator"]["b"]["contribution"] is None


def test_near_ties_strata_and_consensus_by_hand() -> None:
    kw = {"group_weights": {}, "sensitivity_margin": None}
    nt = near_tie_split(pools(), None, "s", kw)
    # P3's three candidates tie for the best; P1, P2 have one best each
    assert nt["best_tied"]["pools"] == 1 and nt["unique_best"]["pools"] == 2
    assert v(nt["unique_best"]["direct"]["regret"]) == pytest.approx(0.5)
    assert v(nt["best_tied"]["oracle"]["delta_stereotype"]) == pytest.approx(1 - 1 / 3)
    st = strata(pools(), G, None, "s", kw)
    assert v(st["g1"]["direct"]["regret"]) == pytest.approx(0.5)
    assert st["g1"]["unanimity"]["n"] == 1
    o = st["g1"]["orders"]
    # g1 = P1, P3: slots 0,0,0 and 2,1,0 -> 4 of 6 in A; uniform 1/3; P1 flips, P3 not
    assert o["first_slot_share"] == pytest.approx(4 / 6)
    assert o["uniform_first_slot"] == pytest.approx(1 / 3) and o["flip_rate"] == 0.5
    cs = consensus_split(pools(), None, "s", kw)
    # disagreement .1, .2, .3: median .2, high consensus (strictly below) P1 only
    assert cs["median_disagreement"] == pytest.approx(0.2)
    assert cs["high_consensus"]["pools"] == 1 and cs["low_consensus"]["pools"] == 2
    assert v(cs["high_consensus"]["direct"]["regret"]) == 1.0
    assert cs["low_consensus"]["unanimity"]["n"] == 1
    assert cs["unique_best"]["pools"] == 2


def test_output_validity_by_hand() -> None:
    c = np.array([[0, 1, -1], [0, 0, 1], [2, -1, 2]])
    status = np.array(
        [["exact", "exact", "parse_fail"], ["exact", "recovered", "exact"],
         ["exact", "runtime_fail", "exact"]], dtype=object
    )  # fmt: skip
    ok = np.array([[True, True, False], [True, False, True], [True, False, True]], dtype=object)
    p = Pools(U, c, G, None, SEC, status=status, json_ok=ok)
    got = output_validity(p)
    assert got["calls"] == 9 and got["valid"] == 7 and got["exact"] == 6
    assert got["recovered"] == 1 and got["parse_fail"] == 1 and got["runtime_fail"] == 1
    assert got["non_json"] == 3 and got["hours"] == pytest.approx(21 / 3600)
    bare = output_validity(Pools(U, c, G))
    assert bare["calls"] == 9 and bare["valid"] == 7 and bare["parse_fail"] == 2
    assert bare["exact"] is None


def test_decisions_file_with_the_optional_columns(tmp_path) -> None:
    from implicit_bench.audits.image_pick_table import read_decisions
    from implicit_bench.errors import InputError

    head = (
        "pool_id,candidate_id,utility,group,order,slot,chosen,seconds,stereotype,"
        "missing_explicit,missing_implicit,satisfaction,generator,rating_variance,category,"
        "status,json"
    )
    rows = [head]
    for p in range(3):
        m = int(np.sum(~np.isnan(U[p])))
        for k in range(3):
            for i in range(m):
                var = "" if (p, i) == (0, 0) else f"{0.1 * (i + 1)}"
                rows.append(
                    f"p{p},c{i},{U[p, i]},{G[p]},{k + 1},{(i - k) % m},"
                    f"{'true' if C[p, k] == i else 'false'},{SEC[p, k]},{ST[p, i]},{ME[p, i]},"
                    f"{MI[p, i]},{SAT[p, i]},{GEN[p, i]},{var},{'xyx'[p]},exact,true"
                )
    path = tmp_path / "d.csv"
    path.write_text("\n".join(rows) + "\n")
    got = read_decisions(path)
    assert np.allclose(got.outcomes["stereotype"], ST, equal_nan=True)
    assert got.generators.tolist() == GEN.tolist()
    assert got.positions.tolist() == POS.tolist()
    assert got.categories.tolist() == ["x", "y", "x"]
    # P1: c0 has no variance -> mean of .2, .3; P2: mean of .1 .. .4; P3: .1 .. .3
    assert got.disagreement == pytest.approx([0.25, 0.25, 0.2])
    assert (got.status == "exact").all() and got.json_ok.all()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([head, rows[1].replace(",exact,", ",maybe,")]) + "\n")
    with pytest.raises(InputError, match="row 1, field 'status'"):
        read_decisions(bad)
    # rows 1-3 are one call (p0, order 1): its status must agree
    bad.write_text("\n".join([head, rows[1], rows[2].replace(",exact,", ",recovered,")]) + "\n")
    with pytest.raises(InputError, match="row 1, field 'status': differs between rows"):
        read_decisions(bad)
    lines = rows[:2] + [rows[2].replace(f",{ST[0, 1]},", ",1.5,")]
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="row 2, field 'stereotype'"):
        read_decisions(bad)


def _decisions(path, choices, extra: bool = True) -> None:
    head = "pool_id,candidate_id,utility,group,order,slot,chosen" + (",stereotype" if extra else "")
    rows = [head]
    for p in range(3):
        m = int(np.sum(~np.isnan(U[p])))
        for k in range(3):
            for i in range(m):
                tail = f",{ST[p, i]}" if extra else ""
                rows.append(
                    f"p{p},c{i},{U[p, i]},{G[p]},{k + 1},{(i - k) % m},"
                    f"{int(choices[p, k] == i)}{tail}"
                )
    path.write_text("\n".join(rows) + "\n")


def test_cli_takes_a_second_judge_and_ablations(tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from implicit_bench.cli.main import main

    main_file, second, abl = tmp_path / "m.csv", tmp_path / "s.csv", tmp_path / "a.csv"
    _decisions(main_file, C)
    # the second judge's order-1 picks 1, 0, 2 agree with the first judge's 0, 0, 2 on P2, P3
    _decisions(second, np.array([[1, 1, 1], [0, 0, 0], [2, 2, 2]]))
    _decisions(abl, np.array([[2, 2, 2], [0, 0, 0], [0, 0, 0]]))  # an ablation picking the best
    out = tmp_path / "o.json"
    args = ["audit", "selection", str(main_file), "--out", str(out), "--n-boot", "50"]
    args += ["--second", str(second), "--ablation", f"choice_only={abl}"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    got = json.loads(out.read_text())
    gate = got["cross_model"]
    assert gate["agreement"] == pytest.approx(2 / 3) and gate["gate"]["acted"] == 2
    # the gate keeps P2 (stereotype 1/3 - 1/3) and P3 (0 - 1/3): -1/6
    assert v(gate["gate"]["secondary"]["stereotype"]["difference"]) == pytest.approx(-1 / 6)
    assert v(got["policies"]["direct"]["secondary"]["stereotype"]["difference"]) == pytest.approx(
        -2 / 9
    )
    assert v(got["ablations"]["choice_only"]["policies"]["direct"]["regret"]) == 0.0
    bad = CliRunner().invoke(main, [*args[:7], "--ablation", "nofile"])
    assert bad.exit_code == 2 and "NAME=FILE" in bad.output
    # a second judge on other pools: one line naming the file
    other = tmp_path / "o.csv"
    other.write_text(main_file.read_text().replace("p2,", "p9,"))
    res = CliRunner().invoke(main, [*args[:7], "--second", str(other)])
    assert res.exit_code != 0 and "o.csv" in res.output and "same pools" in res.output


def test_simulated_world_plants_the_secondary_ratings() -> None:
    from implicit_bench.audits.image_pick_world import (
        PROTOCOLS,
        planted_pools,
        selection_truth,
        simulate_selection,
    )
    from implicit_bench.world.params import (
        SelectionJudgeWorld,
        SelectionOutcomeWorld,
        SelectionWorld,
    )

    plain = SelectionWorld(pools=150, judges={"j": SelectionJudgeWorld(content=5)})
    world = plain.model_copy(
        update={
            "outcomes": {
                "stereotype": SelectionOutcomeWorld(intercept=0.1, slope=0.1),
                "missing_explicit": SelectionOutcomeWorld(intercept=0.8, slope=-0.6),
                "satisfaction": SelectionOutcomeWorld(intercept=0.1, slope=0.8, levels=4),
            },
            "generators": {"a": {"stereotype": 0.2}, "b": {}, "c": {}, "d": {}},
            "categories": ["x", "y"],
        }
    )
    p0, _ = simulate_selection(plain, 3, "j", PROTOCOLS["main"])
    p1, _ = simulate_selection(world, 3, "j", PROTOCOLS["main"])
    # the extras come from their own streams: utilities and choices are unchanged
    assert np.array_equal(p0.choices, p1.choices)
    assert np.allclose(p0.utilities, p1.utilities, equal_nan=True)
    assert np.allclose(planted_pools(world, 3)[0], p1.utilities, equal_nan=True)
    valid = ~np.isnan(p1.utilities)
    assert set(p1.outcomes) == {"stereotype", "missing_explicit", "satisfaction"}
    assert np.isfinite(p1.outcomes["stereotype"][valid]).all()
    # annotators 3, levels 1: rates in thirds; satisfaction in twelfths
    assert np.allclose(p1.outcomes["stereotype"][valid] * 3 % 1, 0)
    assert np.allclose(p1.outcomes["satisfaction"][valid] * 12 % 1, 0, atol=1e-9)
    # each pool's generators distinct; generator a's planted shift shows in its mean rating
    gens = p1.generators
    assert all(len(set(row[row != ""])) == int((row != "").sum()) for row in gens)
    st = p1.outcomes["stereotype"]
    assert st[gens == "a"].mean() > st[(gens != "a") & valid].mean() + 0.1
    assert set(p1.categories) == {"x", "y"} and np.isfinite(p1.disagreement).all()
    # positions: the slot of each shown candidate; status exact / parse_fail
    assert (np.sort(p1.positions[0, 0][valid[0]]) == np.arange(valid[0].sum())).all()
    assert set(p1.status.ravel()) <= {"exact", "parse_fail"}
    audit = selection_audit(p1, Bootstrap(n=1000, seed=4), "t")
    truth = selection_truth(world, 3, "j", PROTOCOLS["main"])
    for pol in ("direct", "majority"):
        for name in ("stereotype", "missing_explicit"):
            est = audit["policies"][pol]["secondary"][name]["difference"]
            want = truth["policies"][pol][f"delta_{name}"]
            assert est["ci"][0] <= want <= est["ci"][1], (pol, name)
    # a content-driven judge lowers missing explicit expectations (planted slope -0.6)
    assert truth["policies"]["direct"]["delta_missing_explicit"] < -0.02


def test_stage_block_from_decisions_files(tmp_path) -> None:
    from implicit_bench.audits.params import SelectionAuditParams
    from implicit_bench.audits.stage import selection_report

    main_file, second = tmp_path / "m.csv", tmp_path / "s.csv"
    _decisions(main_file, C)
    _decisions(second, np.array([[1, 1, 1], [0, 0, 0], [2, 2, 2]]), extra=False)
    params = SelectionAuditParams(
        source="file",
        decisions=str(main_file),
        second_decisions=str(second),
        ablations={"opaque_labels": str(second)},
    )
    block = selection_report(params, None, Bootstrap(n=50, seed=2))
    assert block["simulated"] is False
    assert block["main"]["cross_model"]["gate"]["acted"] == 2
    assert block["main"]["breakdowns"]["near_tie_split"]["best_tied"]["pools"] == 1
    abl = block["ablations"]["opaque_labels"]
    assert abl["source"] == str(second) and "breakdowns" not in abl
    # the second file has no error columns: its audit has none either
    assert "secondary" not in abl["policies"]["direct"]


def test_judge_audit_stage_writes_figure_7(tmp_path, monkeypatch) -> None:
    import importlib.util

    import pandas as pd
    import yaml
    from click.testing import CliRunner

    from tests.helpers.paths import REPO_ROOT

    rows = [
        dict(config="c", unit_id="u1", variant="neutral", seed=42, judge="J", task="blind",
             value=x, valid=True, order=o, raw=x)
        for o, x in (("sa", "s"), ("as", "a"))
    ]  # fmt: skip
    (tmp_path / "data" / "judgements").mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(tmp_path / "data" / "judgements" / "judgements.parquet")
    outcomes = {k: {"intercept": 0.3, "slope": -0.2} for k in ("stereotype", "missing_explicit")}
    params = {
        "judge_audit": {
            "bootstrap": {"n": 100},
            "selection": {"source": "sim", "protocols": ["main"]},
        },
        "world": {"seed": 3, "selection": {"pools": 30, "outcomes": outcomes}},
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.spec_from_file_location(
        "stage_ja2", REPO_ROOT / "stages" / "judge_audit.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    res = CliRunner().invoke(module.main, [], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    plot = pd.read_csv(tmp_path / "plots" / "selection_errors.csv")
    assert plot["outcome"].tolist() == ["stereotype"] * 2 + ["missing explicit"] * 2
    assert plot["series"].tolist() == ["pointwise", "Bonferroni"] * 2
    sel = __import__("json").loads((tmp_path / "metrics" / "judge_audit.json").read_text())
    st = sel["selection"]["protocols"]["main"]["policies"]["direct"]["secondary"]["stereotype"]
    assert plot["difference"][0] == pytest.approx(st["difference"]["value"])
    assert plot["ci_low"][1] == pytest.approx(st["difference_bonferroni"]["ci"][0])
    assert sel["selection"]["protocols"]["main"]["breakdowns"]["validity"]["calls"] == 90
