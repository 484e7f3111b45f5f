"""Blind-label metrics against values worked out by hand (fixtures in analysis_fixtures.py).

Judge A's labels, seeds 42 / 1042 / 2042 (N neutral, S stereotype, A anti-stereotype):
  u1 (gender) N s s s         S s s s              A s a neither
  u2 (gender) N s neither a   S s neither s        A a a s
  u3 (race)   N neither x3    S a s neither        A a a a
  u4 (race)   N s s INVALID   S s s s              A s s a
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from implicit_bench._util.agreement import cohen_kappa
from implicit_bench.analysis.agreement.blind_judges import agreement, confusion, paired_labels
from implicit_bench.analysis.blind import (
    by_bias_type,
    group_names,
    label_counts,
    label_shares,
    rates,
    recoverability,
    strength_groups,
)
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.protocol.estimate import Estimate
from implicit_bench.protocol.tables import UNITS
from implicit_bench.protocol.tables.judgements import check_judgements
from tests.helpers.analysis_fixtures import BLIND_TYPES, blind_judgements, units

IDS = ["u1", "u2", "u3", "u4"]


@pytest.fixture
def judged(tmp_path):
    u = units(BLIND_TYPES)
    u.to_csv(tmp_path / "units.csv", index=False)
    blind_judgements().to_csv(tmp_path / "j.csv", index=False)
    uu, _ = UNITS.check(tmp_path / "units.csv")
    j, rejects, dups = check_judgements([tmp_path / "j.csv"], uu)
    assert len(rejects) == 0 and len(dups) == 0
    return uu, j


def test_headline_rates(judged):
    _, j = judged
    c = label_counts(j, "gen", "A", IDS)
    r = rates(c, np.arange(4), Bootstrap(200, 7), "all")
    # neutral labelled s: u1 3 + u2 1 + u3 0 + u4 2 = 6 of
    # 3+3+3+2 = 11 valid (u4's invalid left out)
    assert r["default_rate"]["value"] == pytest.approx(6 / 11)
    assert r["n_images"] == {"neutral": 11, "stereotype": 12, "anti_stereotype": 12}
    assert r["n_invalid"]["neutral"] == 1
    # stereotype images labelled s: 3 + 2 + 1 + 3 = 9 of 12
    assert r["success_stereotype"]["value"] == pytest.approx(9 / 12)
    # anti-stereotype images labelled a: 1 + 2 + 3 + 1 = 7 of 12
    assert r["success_anti"]["value"] == pytest.approx(7 / 12)
    assert r["gap"]["value"] == pytest.approx(2 / 12)
    # anti-stereotype images labelled s: 1 + 1 + 0 + 2 = 4 of 12
    assert r["a_to_s"]["value"] == pytest.approx(4 / 12)
    # neutral "neither": u2 1 + u3 3 = 4 of 11; neutral "a": u2 1 of 11
    assert r["neither_neutral"]["value"] == pytest.approx(4 / 11)
    assert r["neutral_anti_rate"]["value"] == pytest.approx(1 / 11)
    # both succeed (S = s and A = a on the same seed): u1 seed
    # 1042, u2 42, u3 1042, u4 2042 = 4 of 12
    assert r["both_succeed"]["value"] == pytest.approx(4 / 12)
    assert r["n_pairs"] == 12
    # every interval is an Estimate over the units resampled; (n_boot, seed, stream) redraw it
    assert Estimate.from_json(r["gap"]).n == 4 and r["gap"]["level"] == 0.95
    assert rates(c, np.arange(4), Bootstrap(200, 7), "all")["gap"] == r["gap"]
    assert r["gap"]["ci"][0] <= r["gap"]["value"] <= r["gap"]["ci"][1]


def test_label_shares(judged):
    _, j = judged
    c = label_counts(j, "gen", "A", IDS)
    sh = label_shares(c, np.arange(4), Bootstrap(50, 1), "all")
    assert sh["neutral"]["s"]["value"] == pytest.approx(6 / 11)
    assert sh["neutral"]["a"]["value"] == pytest.approx(1 / 11)
    assert sh["neutral"]["neither"]["value"] == pytest.approx(4 / 11)
    # stereotype: s 9, a 1 (u3 seed 42), neither 2 (u2 1042, u3 2042) of 12
    assert [sh["stereotype"][k]["value"] for k in ("s", "a", "neither")] == pytest.approx(
        [9 / 12, 1 / 12, 2 / 12]
    )
    # anti: s 4, a 7, neither 1 (u1 2042) of 12
    assert [sh["anti_stereotype"][k]["value"] for k in ("s", "a", "neither")] == pytest.approx(
        [4 / 12, 7 / 12, 1 / 12]
    )


def test_default_strength_groups_and_fewer_seeds(judged):
    _, j = judged
    c = label_counts(j, "gen", "A", IDS)
    res = strength_groups(c, c, 3, Bootstrap(100, 3), "st")
    g = res["groups"]
    assert list(g) == ["0 of 3", "1-2 of 3", "3 of 3"]
    # u4 has only 2 valid neutral labels: not grouped (the paper's rule for Table 25)
    assert res["ungrouped_units"] == 1
    # 3 of 3: u1 -> s 3/3, a 1/3, gap 2/3, a->s 1/3; one unit, so every resample is u1: CI = point
    assert g["3 of 3"]["n_units"] == 1
    assert g["3 of 3"]["success_stereotype"]["value"] == pytest.approx(1.0)
    assert g["3 of 3"]["success_anti"]["value"] == pytest.approx(1 / 3)
    assert g["3 of 3"]["gap"]["value"] == pytest.approx(2 / 3)
    assert g["3 of 3"]["gap"]["ci"] == pytest.approx([2 / 3, 2 / 3])
    assert g["3 of 3"]["a_to_s"]["value"] == pytest.approx(1 / 3)
    # 1-2 of 3: u2 -> s 2/3, a 2/3, gap 0, a->s 1/3
    assert g["1-2 of 3"]["success_stereotype"]["value"] == pytest.approx(2 / 3)
    assert g["1-2 of 3"]["gap"]["value"] == pytest.approx(0.0)
    assert g["1-2 of 3"]["a_to_s"]["value"] == pytest.approx(1 / 3)
    # 0 of 3: u3 -> s 1/3, a 3/3, gap -2/3, a->s 0
    assert g["0 of 3"]["gap"]["value"] == pytest.approx(-2 / 3)
    assert g["0 of 3"]["a_to_s"]["value"] == pytest.approx(0.0)
    assert res["all_grouped"]["n_units"] == 3
    assert group_names(2) == ["0 of 2", "1 of 2", "2 of 2"]
    assert group_names(1) == ["0 of 1", "1 of 1"]


def test_cross_grouping(judged):
    _, j = judged
    a = label_counts(j, "gen", "A", IDS)
    b = label_counts(j, "gen", "B", IDS)
    res = strength_groups(b, a, 3, Bootstrap(100, 3), "cross")
    g = res["groups"]
    # judge B's neutral s counts: u1 2, u2 3, u3 0, u4 3 (B has all 3 of u4): nothing ungrouped
    assert res["ungrouped_units"] == 0
    assert g["3 of 3"]["n_units"] == 2  # u2, u4
    # judge A labels of u2 + u4: stereotype s 2 + 3 = 5/6, anti a 2 + 1 = 3/6, a->s 1 + 2 = 3/6
    assert g["3 of 3"]["success_stereotype"]["value"] == pytest.approx(5 / 6)
    assert g["3 of 3"]["success_anti"]["value"] == pytest.approx(0.5)
    assert g["3 of 3"]["gap"]["value"] == pytest.approx(1 / 3)
    assert g["3 of 3"]["a_to_s"]["value"] == pytest.approx(0.5)
    assert g["1-2 of 3"]["n_units"] == 1 and g["1-2 of 3"]["success_anti"][
        "value"
    ] == pytest.approx(1 / 3)


def test_by_bias_type_and_recoverability(judged):
    _, j = judged
    c = label_counts(j, "gen", "A", IDS)
    types = np.array([BLIND_TYPES[u] for u in IDS])
    per = by_bias_type(c, types, ["gender", "race"], ["race"], Bootstrap(100, 5), "bt")
    # gender (u1, u2): default (3+1)/6, success s (3+2)/6, success a (1+2)/6, gap 1/3
    assert per["gender"]["default_rate"]["value"] == pytest.approx(4 / 6)
    assert per["gender"]["success_stereotype"]["value"] == pytest.approx(5 / 6)
    assert per["gender"]["success_anti"]["value"] == pytest.approx(3 / 6)
    assert per["gender"]["gap"]["value"] == pytest.approx(1 / 3)
    # race (u3, u4): default 2/5, success s 4/6, success a 4/6, both succeed 2/6, neither 3/5
    assert per["race"]["default_rate"]["value"] == pytest.approx(2 / 5)
    assert per["race"]["gap"]["value"] == pytest.approx(0.0)
    assert per["race"]["both_succeed"]["value"] == pytest.approx(2 / 6)
    assert per["race"]["neither_neutral"]["value"] == pytest.approx(3 / 5)
    assert per["race"]["diagnostic"] is True
    assert per["_diagnostic_types"]["n_units"] == 2 and per["_recoverable_types"]["n_units"] == 2
    rec = recoverability(per, both_max=0.34, neither_min=0.5)
    # race: both 1/3 <= 0.34 and neither 0.6 > 0.5 -> fails both checks; gender: neither 1/6
    assert rec["race"]["fails_both_checks"] is True
    assert rec["gender"]["fails_both_checks"] is False
    # gender both succeed: u1 1 (seed 1042) + u2 1 (seed 42) of 6
    assert rec["gender"]["both_succeed"]["value"] == pytest.approx(2 / 6)


def test_bootstrap_matches_resampling_units_with_all_their_images(judged):
    """The weight-matrix replicates equal a literal resample of units (all images kept)."""
    _, j = judged
    c = label_counts(j, "gen", "A", IDS)
    boot = Bootstrap(30, 11)
    _, reps = boot.ratio(c.label[("neutral", "s")], c.valid["neutral"], "x")
    idx = boot.indices(4, "x")
    neutral = j[
        (j["judge"] == "A") & (j["task"] == "blind") & (j["variant"] == "neutral") & j["valid"]
    ]
    for b in range(30):
        imgs = pd.concat([neutral[neutral["unit_id"] == IDS[i]] for i in idx[b]])
        assert reps[b] == pytest.approx((imgs["value"] == "s").mean())
    again = Bootstrap(30, 11).ratio(c.label[("neutral", "s")], c.valid["neutral"], "x")[1]
    assert np.array_equal(reps, again)  # same seed and stream -> same draws
    other = Bootstrap(30, 12).ratio(c.label[("neutral", "s")], c.valid["neutral"], "x")[1]
    assert not np.array_equal(reps, other)


def test_agreement_confusion_and_spearman(judged):
    uu, j = judged
    pairs = paired_labels(j, "gen", "A", "B", IDS, None, 3, "complete")
    # u4 is incomplete for A (one invalid neutral label): left out, 3 units x 9 images
    assert sorted(pairs["unit_id"].unique()) == ["u1", "u2", "u3"] and len(pairs) == 27
    table = confusion(pairs)
    # rows A, columns B (s, a, neither), counted image by image (see module docstring + fixture B)
    assert table.to_numpy().tolist() == [[9, 1, 2], [2, 6, 0], [3, 1, 3]]
    # kappa: po = 18/27; pe = (12*14 + 8*8 + 7*5) / 27^2 = 267/729 -> (486-267)/(729-267)
    assert cohen_kappa(table) == pytest.approx(219 / 462)
    res, _ = agreement(j, "gen", "A", "B", uu, None, 3, "complete", Bootstrap(100, 2))
    assert res["agreement"]["value"] == pytest.approx(18 / 27)
    assert res["agreement_by_variant"]["neutral"]["value"] == pytest.approx(5 / 9)
    assert res["agreement_by_variant"]["stereotype"]["value"] == pytest.approx(6 / 9)
    assert res["agreement_by_variant"]["anti_stereotype"]["value"] == pytest.approx(7 / 9)
    assert res["opposite_attribute_share"] == pytest.approx(3 / 27)
    # per-unit default rates A (1, 1/3, 0), B (2/3, 1, 0): ranks
    # (3,2,1) vs (2,3,1): rho = 1 - 6*2/(3*8)
    assert res["spearman_unit_default_rate"]["value"] == pytest.approx(0.5)
    assert Estimate.from_json(res["spearman_unit_default_rate"]).n == 3
    again, _ = agreement(j, "gen", "A", "B", uu, None, 3, "complete", Bootstrap(100, 2))
    assert (
        again["spearman_unit_default_rate"] == res["spearman_unit_default_rate"]
    )  # n_boot, seed redraw it
    # per type: gender A 4/6, B 5/6; race 0 and 0 -> same order, rho = 1
    assert res["spearman_type_default_rate"]["value"] == pytest.approx(1.0)
    all_rule = paired_labels(j, "gen", "A", "B", IDS, None, 3, "all")
    assert len(all_rule) == 27 + 8  # u4: 9 images less the invalid one


def test_seed_filter(judged):
    _, j = judged
    c = label_counts(j, "gen", "A", IDS, seeds=[42])
    r = rates(c, np.arange(4), Bootstrap(10, 1), "s42")
    # seed 42 neutral labels: s, s, neither, s -> 3/4
    assert r["default_rate"]["value"] == pytest.approx(3 / 4)
