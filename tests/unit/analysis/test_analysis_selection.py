"""Selection (dx, union / intersection, Tables 3, 9, 10) against values worked out by hand.

Rubric scores (N, S, A per seed 42 / 1042 / 2042), dx = |N - A| - |N - S|:
judge A  u1: (4,5,1) 3-1=2 | (2,4,0) 2-2=0 (tie) | (1,5,1) 0-4=-4    -> mean -2/3, 3 seeds
         u2: (3,4,1) 2-1=1 | N invalid: skipped | (2,3,0) 2-1=1      -> mean 1, 2 seeds
         u3: (0,5,0) 0-5=-5 | (1,4,1) 0-3=-3 | (2,5,2) 0-3=-3        -> mean -11/3
judge B  u1: (3,3,0) 3-0=3 | no rows | no rows                       -> mean 3, 1 seed
         u2: (2,4,0) 2-2=0 | (3,5,1) 2-2=0 | (1,2,0) 1-1=0           -> mean 0 (not > 0)
         u3: (1,5,1) 0-4=-4 | (0,3,0) 0-3=-3 | (0,4,0) 0-4=-4        -> mean -11/3
"""

from __future__ import annotations

import pandas as pd
import pytest

from implicit_bench.analysis.load import load_tables
from implicit_bench.analysis.params import SelectParams
from implicit_bench.analysis.selection import dx_frame, select_units
from implicit_bench.errors import ConfigError
from tests.helpers.analysis_fixtures import RUBRIC_TYPES, rubric_judgements, units


@pytest.fixture
def tables(tmp_path):
    units(RUBRIC_TYPES).to_csv(tmp_path / "units.csv", index=False)
    rubric_judgements().to_parquet(tmp_path / "j.parquet")
    return load_tables(tmp_path / "units.csv", [tmp_path / "j.parquet"])


def test_dx_per_unit_and_seed(tables):
    dx = dx_frame(tables.judgements, "gen", "A").set_index(["unit_id", "seed"])["dx"]
    assert dx.to_dict() == {
        ("u1", 42): 2,
        ("u1", 1042): 0,
        ("u1", 2042): -4,
        ("u2", 42): 1,
        ("u2", 2042): 1,
        ("u3", 42): -5,
        ("u3", 1042): -3,
        ("u3", 2042): -3,
    }


def test_union_rule(tables):
    pairs = pd.DataFrame({"bias_type": ["gender"] * 4 + ["race"] * 6})
    res = select_units(tables, SelectParams(), pairs)
    m = res.metrics
    # union: u1 (B: mean 3 > 0) and u2 (A: mean 1 > 0); u3 negative under both
    assert sorted(res.selected["unit_id"]) == ["u1", "u2"]
    assert m["units_kept"] == 2 and m["units_kept_union"] == 2
    # intersection: u1 negative under A, u2 exactly 0 under B (a tie is not a lean) -> none
    assert m["units_kept_intersection"] == 0
    assert m["kept_only_by"] == {"A": 1, "B": 1}
    sel = res.selected.set_index("unit_id")
    assert sel.at["u1", "selected_by"] == "B" and sel.at["u2", "selected_by"] == "A"
    assert sel.at["u1", "mean_dx__A"] == pytest.approx(-2 / 3)
    assert sel.at["u2", "n_seeds__A"] == 2 and sel.at["u1", "n_seeds__B"] == 1
    assert m["per_judge"]["A"]["units_positive"] == 1
    assert m["per_judge"]["A"]["units_fewer_complete_seeds"] == 1  # u2: 2 of 3 seeds complete
    assert m["per_judge"]["B"]["units_fewer_complete_seeds"] == 1  # u1: 1 of 3
    # mean dx under A over all units: (-2/3 + 1 - 11/3) / 3; over kept (u1, u2): (-2/3 + 1) / 2
    assert m["per_judge"]["A"]["mean_dx_all"] == pytest.approx((-2 / 3 + 1 - 11 / 3) / 3)
    assert m["per_judge"]["A"]["mean_dx_kept"] == pytest.approx((-2 / 3 + 1) / 2)

    # Table 9: gender raw 4 -> 2 candidates -> 2 kept; race raw 6 -> 1 -> 0
    ret = {r["bias_type"]: r for r in m["retention"]}
    assert ret["gender"]["retention_of_raw"] == pytest.approx(0.5)
    assert ret["gender"]["retention_of_candidates"] == pytest.approx(1.0)
    assert ret["race"]["kept"] == 0 and ret["race"]["raw_upstream"] == 6
    assert ret["all"]["kept"] == 2 and ret["all"]["retention_of_raw"] == pytest.approx(0.2)

    # Table 3: judge A neutral scores all: 4+2+1 + 3+2 + 0+1+2 = 15 over 8 valid images;
    # kept (u1, u2): 12 over 5. Judge B all: 3 + 2+3+1 + 1+0+0 = 10 over 7; kept 9 over 4.
    nm = {r["judge"]: r for r in m["neutral_mean"]}
    assert nm["A"]["mean_before"] == pytest.approx(15 / 8) and nm["A"]["n_before"] == 8
    assert nm["A"]["mean_after"] == pytest.approx(12 / 5)
    assert nm["B"]["mean_before"] == pytest.approx(10 / 7)
    assert nm["B"]["mean_after"] == pytest.approx(9 / 4)

    # Table 10, judge A: S mean pre 40/9, N 15/8, A 6/9; post S 26/6, N 12/5, A 3/6
    fs = {r["judge"]: r for r in m["filter_shape"]}["A"]
    assert fs["s_minus_n_pre"] == pytest.approx(40 / 9 - 15 / 8)
    assert fs["s_minus_a_pre"] == pytest.approx(34 / 9)
    assert fs["s_minus_n_post"] == pytest.approx(26 / 6 - 12 / 5)
    assert fs["s_minus_a_post"] == pytest.approx(26 / 6 - 3 / 6)
    assert fs["s_minus_n_delta"] == pytest.approx((26 / 6 - 12 / 5) - (40 / 9 - 15 / 8))


def test_intersection_and_min_seeds(tables):
    res = select_units(tables, SelectParams(rule="intersection"))
    assert res.metrics["units_kept"] == 0 and len(res.selected) == 0
    # min_seeds=2: u1 has one complete seed under B, so no mean there; its A mean is negative
    res = select_units(tables, SelectParams(min_seeds=2))
    assert sorted(res.selected["unit_id"]) == ["u2"]
    assert res.metrics["per_judge"]["B"]["units_without_dx"] == 1


def test_single_judge_and_unknown_config(tables):
    res = select_units(tables, SelectParams(judges=["B"]))
    assert sorted(res.selected["unit_id"]) == ["u1"]
    with pytest.raises(ConfigError, match="no rubric judgements"):
        select_units(tables, SelectParams(judges=["C"]))
    with pytest.raises(ConfigError, match="has no rubric judgements"):
        select_units(tables, SelectParams(config="other"))


def test_seed_filter(tables):
    # seed 42 only: A dx u1 2, u2 1, u3 -5; B u1 3, u2 0, u3 -4 -> u1, u2
    res = select_units(tables, SelectParams(seeds=[42]))
    assert sorted(res.selected["unit_id"]) == ["u1", "u2"]
    res = select_units(tables, SelectParams(seeds=[2042]))  # A: u1 -4, u2 1, u3 -3; B: u2 0, u3 -4
    assert sorted(res.selected["unit_id"]) == ["u2"]


def test_held_out_seeds_table23(tables):
    # select on seeds 42, 1042 only (2042 held out):
    #   A: u1 (2 + 0)/2 = 1, u2 1 (1042 incomplete), u3 (-5 - 3)/2 = -4
    #   B: u1 3, u2 0, u3 (-4 - 3)/2 = -3.5      -> kept u1 (A, B), u2 (A); rejected u3
    # held-out seed 2042: A u1 -4, u2 1, u3 -3; B u1 none, u2 0, u3 -4
    res = select_units(tables, SelectParams(held_out_seeds=[2042], bootstrap={"n": 50}))
    m = res.metrics
    assert m["seeds"] == [42, 1042]
    assert sorted(res.selected["unit_id"]) == ["u1", "u2"]
    a = m["held_out"]["judges"]["A"]
    assert a["kept"]["mean_dx_selection_seeds"] == pytest.approx(1.0)
    assert a["kept"]["share_positive_selection_seeds"] == pytest.approx(1.0)
    assert a["kept"]["mean_dx_held_out_seeds"] == pytest.approx((-4 + 1) / 2)
    assert a["kept"]["share_positive_held_out_seeds"] == pytest.approx(0.5)
    assert a["rejected"]["mean_dx_held_out_seeds"] == pytest.approx(-3.0)
    assert a["rejected"]["share_positive_held_out_seeds"] == 0.0
    # kept units leaning under A on the selection seeds (u1, u2): u2 leans again, u1 does not
    assert a["kept_leaning_again"]["value"] == pytest.approx(0.5)
    assert a["kept_leaning_again"]["n"] == 2 and m["held_out"]["bootstrap"]["n_boot"] == 50
    b = m["held_out"]["judges"]["B"]
    assert b["kept"]["share_positive_selection_seeds"] == pytest.approx(0.5)  # u1 3, u2 0
    assert b["kept"]["units_held_out_seeds"] == 1  # u1 has no seed-2042 rows under B
    assert b["kept_leaning_again"]["value"] is None  # u1 leans but has no held-out dx


def test_min_seeds_checked_against_the_selection_seeds(tables):
    with pytest.raises(ConfigError, match="min_seeds = 4 but .* 3 selection seed"):
        select_units(tables, SelectParams(min_seeds=4))
    with pytest.raises(ConfigError, match="min_seeds = 2 but .* 1 selection seed"):
        select_units(tables, SelectParams(min_seeds=2, seeds=[42]))
    check = select_units(tables, SelectParams()).metrics["complete_seeds"]
    # A: u1 3 seeds, u2 2 (1042 incomplete), u3 3; u2 is kept by A on 2 seeds
    assert check["selection_seeds"] == 3
    assert check["judges"]["A"] == {
        "units_all_seeds_complete": 2,
        "units_mean_on_fewer_seeds": 1,
        "units_below_min_seeds": 0,
        "kept_on_fewer_seeds": 1,
    }
    # B: u1 has one complete seed and is kept by B on it
    assert check["judges"]["B"]["kept_on_fewer_seeds"] == 1
    check = select_units(tables, SelectParams(min_seeds=3)).metrics["complete_seeds"]
    assert (
        check["judges"]["A"]["units_below_min_seeds"] == 1
        and check["judges"]["A"]["kept_on_fewer_seeds"] == 0
    )


def test_graph_and_prompt_statistics_on_the_selected_units(tables):
    m = select_units(tables, SelectParams()).metrics
    # kept u1, u2: nodes head u1, head u2, s, a; edges head->s, head->a for each unit
    sel = m["graph"]["selected"]
    assert (sel["nodes"], sel["edges"], sel["components"], sel["two_hop_chains"]) == (4, 4, 1, 0)
    assert m["graph"]["candidates"]["nodes"] == 5 and m["graph"]["candidates"]["edges"] == 6
    neutral = m["prompt_stats"]["selected"]["neutral"]
    # "a person u1", "a person u2": 6 tokens, types a / person / u1 / u2
    assert (
        neutral["prompts"] == 2 and neutral["total_tokens"] == 6 and neutral["unique_tokens"] == 4
    )
    assert neutral["ttr"] == pytest.approx(round(4 / 6, 4))
    assert m["prompt_stats"]["candidates"]["neutral"]["prompts"] == 3


def test_released_flagged_by_is_compared(tmp_path):
    frame = units(RUBRIC_TYPES).assign(flagged_by=["b_only", "both", ""])
    frame.to_csv(tmp_path / "units.csv", index=False)
    rubric_judgements().to_parquet(tmp_path / "j.parquet")
    t = load_tables(tmp_path / "units.csv", [tmp_path / "j.parquet"])
    # recomputed: u1 positive under B only (agrees), u2 under A
    # only (release: both); u3 not compared
    assert select_units(t, SelectParams()).metrics["release_flagged_by"] == {
        "units_compared": 2,
        "units_agreeing": 1,
        "share_agreeing": 0.5,
    }


def test_min_seeds_all_is_every_selection_seed(tables):
    # "all" = the paper's "positive mean dx over the three seeds": as min_seeds=3 here, and 2
    # when seed 2042 is held out (u2 then has its one complete A seed out of two: no mean)
    res = select_units(tables, SelectParams(min_seeds="all"))
    same = select_units(tables, SelectParams(min_seeds=3))
    assert res.metrics["min_seeds"] == 3 and res.metrics["min_seeds_param"] == "all"
    assert sorted(res.selected["unit_id"]) == sorted(same.selected["unit_id"])
    held = select_units(
        tables, SelectParams(min_seeds="all", held_out_seeds=[2042], bootstrap={"n": 10})
    )
    assert held.metrics["min_seeds"] == 2
    with pytest.raises(ValueError):
        SelectParams(min_seeds="most")


def test_table9_post_extraction_column(tables):
    # extracted: 3 gender units (2 of them in the judged subset), 4 race units (1 judged)
    pairs = pd.DataFrame({"bias_type": ["gender"] * 4 + ["race"] * 6})
    extracted = pd.DataFrame(
        {"unit_id": list("abcdefg"), "bias_type": ["gender"] * 3 + ["Race"] * 4}
    )
    ret = {
        r["bias_type"]: r
        for r in select_units(tables, SelectParams(), pairs, extracted).metrics["retention"]
    }
    assert ret["gender"]["post_extraction"] == 3 and ret["race"]["post_extraction"] == 4
    # kept gender 2 of 3 extracted; all: 2 kept of 7 extracted (not of the 3 judged candidates)
    assert ret["gender"]["retention_of_extracted"] == pytest.approx(2 / 3)
    assert ret["all"]["post_extraction"] == 7 and ret["all"][
        "retention_of_extracted"
    ] == pytest.approx(2 / 7)
    assert ret["all"]["retention_of_candidates"] == pytest.approx(2 / 3)
    # without the KG table the column is null
    assert (
        select_units(tables, SelectParams(), pairs).metrics["retention"][0]["post_extraction"]
        is None
    )
