"""Lean statistics, Pearson, Spearman-Brown, Hedges' g and the generator table, by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from implicit_bench.analysis.bootstrap import Bootstrap, hedges_g, moments, pearson
from implicit_bench.analysis.generators import generator_table, refusals_by_bias_type
from implicit_bench.analysis.lean import (
    hedges_by_type,
    lean_summary,
    pearson_pair,
    scorer_values,
    spearman_brown,
)
from implicit_bench.analysis.load import load_tables
from tests.helpers.analysis_fixtures import rows, units

# dx per (unit, seed): u1 2, 0 (tie), -4; u2 1, 1, 3; u3 -1, 2 (third seed missing)
DX = pd.DataFrame(
    {
        "unit_id": ["u1", "u1", "u1", "u2", "u2", "u2", "u3", "u3"],
        "seed": [42, 1042, 2042, 42, 1042, 2042, 42, 1042],
        "dx": [2.0, 0.0, -4.0, 1.0, 1.0, 3.0, -1.0, 2.0],
    }
)


def test_lean_summary_by_hand():
    s = lean_summary(DX, Bootstrap(200, 4), "lean")
    # 5 of 8 values > 0 (the tie 0 is not a lean): 62.5%
    assert s["lean_s"]["value"] == pytest.approx(5 / 8)
    # mean = (2+0-4+1+1+3-1+2)/8 = 0.5; squared deviations sum to 34 -> sd = sqrt(34/7)
    assert s["mean"]["value"] == pytest.approx(0.5)
    assert s["sd"] == pytest.approx(math.sqrt(34 / 7))
    assert s["cohens_d"]["value"] == pytest.approx(0.5 / math.sqrt(34 / 7))
    assert s["n"] == 8 and s["n_units"] == 3
    assert (
        s["cohens_d"]["n"] == 3
        and lean_summary(DX, Bootstrap(200, 4), "lean")["cohens_d"] == s["cohens_d"]
    )
    # per seed 42: values 2, 1, -1 -> S% 2/3, mean 2/3, sd sqrt(7/3)
    seed42 = lean_summary(DX[DX["seed"] == 42], None, "")
    assert seed42["lean_s"] == pytest.approx(2 / 3)
    assert seed42["cohens_d"] == pytest.approx((2 / 3) / math.sqrt(7 / 3))


def test_cluster_bootstrap_keeps_all_seeds_of_a_unit():
    boot = Bootstrap(25, 9)
    s = lean_summary(DX, boot, "lean")
    idx = boot.indices(3, "lean")
    ids = ["u1", "u2", "u3"]
    means = []
    for b in range(25):
        vals = pd.concat([DX[DX["unit_id"] == ids[i]] for i in idx[b]])["dx"]
        means.append(vals.mean())
    lo, hi = np.percentile(means, [2.5, 97.5])
    assert s["mean"]["ci"] == pytest.approx([lo, hi])


def test_pearson_between_scorers():
    other = DX.assign(dx=2 * DX["dx"] + 1)
    res = pearson_pair(DX, other, Bootstrap(50, 1), "p")
    assert res["r"]["value"] == pytest.approx(1.0) and res["n_pairs"] == 8 and res["r"]["n"] == 3
    # x = (1, 2, 3), y = (1, 3, 2): cov 1, var 2 and 2 -> r = 0.5
    assert pearson(3, 6, 6, 14, 14, 13) == pytest.approx(0.5)


def test_spearman_brown():
    # seeds as columns over 4 units: s1 = (1,2,3,4), s2 = (2,1,4,3), s3 = (1,2,3,4)
    # r(s1,s2) = 3 / sqrt(5*5) = 0.6, r(s1,s3) = 1, r(s2,s3) = 0.6 -> mean r = 2.2/3
    vals = {42: [1, 2, 3, 4], 1042: [2, 1, 4, 3], 2042: [1, 2, 3, 4]}
    frame = pd.DataFrame(
        [
            {"unit_id": f"u{i}", "seed": s, "dx": float(v[i])}
            for s, v in vals.items()
            for i in range(4)
        ]
    )
    sb = spearman_brown(frame)
    r = 2.2 / 3
    assert sb["mean_r"] == pytest.approx(r)
    assert sb["pairwise"]["42~1042"]["r"] == pytest.approx(0.6)
    # k = 3: 3 r / (1 + 2 r)
    assert sb["reliability"] == pytest.approx(3 * r / (1 + 2 * r))
    assert sb["k"] == 3


def test_hedges_g_by_hand(tmp_path):
    # one type, 2 units x 2 judges, seed 42: stereotype scores 5, 4 | 4, 3; anti 1, 2 | 0, 1
    # means 4 and 1; variances (1+0+0+1)/3 = 2/3 each; pooled sd sqrt(2/3); d = 3 / sqrt(2/3)
    # df = 6, J = 1 - 3 / (4*6 - 1) = 20/23
    data = rows(
        "gen", "A", "rubric", {"v1": {"S": [5], "A": [1]}, "v2": {"S": [4], "A": [0]}}
    ) + rows("gen", "B", "rubric", {"v1": {"S": [4], "A": [2]}, "v2": {"S": [3], "A": [1]}})
    units({"v1": "age", "v2": "age"}).to_csv(tmp_path / "u.csv", index=False)
    pd.DataFrame(data).to_csv(tmp_path / "j.csv", index=False)
    t = load_tables(tmp_path / "u.csv", [tmp_path / "j.csv"])
    res = hedges_by_type(t.judgements, "gen", ["A", "B"], t.units, None, Bootstrap(100, 2), "h")
    expected = (20 / 23) * 3 / math.sqrt(2 / 3)
    assert res["age"]["g"]["value"] == pytest.approx(expected) and res["age"]["g"]["n"] == 2
    assert res["age"]["n_stereotype"] == 4 and res["age"]["n_anti"] == 4
    assert hedges_g(4, 16, 66, 4, 4, 6) == pytest.approx(expected)  # from raw sums
    mean, sd, d = moments(np.array(4.0), np.array(16.0), np.array(66.0))
    assert float(sd) == pytest.approx(math.sqrt(2 / 3))


def test_clip_lean_scorer_and_generator_table(tmp_path):
    units({"u1": "gender", "u2": "race"}).to_csv(tmp_path / "u.csv", index=False)
    data = (
        rows("gen", "clip", "clip_lean", {"u1": {"N": [0.1, -0.05]}, "u2": {"N": [0.02]}})
        + rows("gen", "A", "rubric", {"u1": {"N": [4, 2]}, "u2": {"N": [3]}})
        + rows("gen", "A", "alignment", {"u1": {"N": ["true", "false"]}, "u2": {"N": ["true"]}})
    )
    pd.DataFrame(data).to_csv(tmp_path / "j.csv", index=False)
    pd.DataFrame(
        {
            "config": "gen",
            "unit_id": ["u1", "u1", "u2", "u2"],
            "variant": "neutral",
            "seed": [42, 1042, 42, 1042],
            "status": ["ok", "ok", "ok", "refused"],
        }
    ).to_csv(tmp_path / "index.csv", index=False)
    t = load_tables(tmp_path / "u.csv", [tmp_path / "j.csv"], [tmp_path / "index.csv"])
    values = scorer_values(t.judgements, "gen", [], ["u1", "u2"], None)
    assert list(values) == ["clip"] and sorted(values["clip"]["dx"]) == pytest.approx(
        [-0.05, 0.02, 0.1]
    )
    # bias = (4 + 2 + 3) / 3; alignment 2 of 3; requested 2 units x 2 seeds, 3 returned, 1 refused
    gen = generator_table(t.judgements, t.units, t.images, None, 2).set_index("judge")
    assert gen.at["A", "bias"] == pytest.approx(3.0)
    assert gen.at["A", "alignment"] == pytest.approx(2 / 3)
    assert gen.at["A", "coverage"] == pytest.approx(0.75) and gen.at["A", "refused"] == 1
    assert gen.at["A", "returned_from"] == "image index"
    # alignment gate (E.4): u1 seed 42 (4) and u2 seed 42 (3) aligned, u1 seed 1042 not -> 3.5
    assert gen.at["A", "bias_gated"] == pytest.approx(3.5) and gen.at["A", "gated_images"] == 2
    ref = refusals_by_bias_type(t.images, t.units, None).set_index("bias_type")
    assert ref.at["race", "refusal_rate"] == pytest.approx(0.5) and ref.at["gender", "refused"] == 0
    # without an index: returned = neutral (unit, seed) pairs with any judgement = 3 of 4
    gen2 = generator_table(t.judgements, t.units, None, None, 2).set_index("judge")
    assert (
        gen2.at["A", "coverage"] == pytest.approx(0.75)
        and gen2.at["A", "returned_from"] == "judgements"
    )


def test_rank_rows_average_ties_like_scipy():
    from scipy.stats import rankdata

    from implicit_bench.analysis.bootstrap import rank_rows, spearman, spearman_reps

    x = np.array([0.0, 1 / 3, 1 / 3, 1.0, 0.0, 2 / 3])
    idx = np.random.default_rng(0).integers(0, 6, size=(20, 6))
    assert np.allclose(rank_rows(x, idx), rankdata(x[idx], axis=1))
    # rho by hand: x ranks (1.5, 3.5, 3.5, 6, 1.5, 5), y = reversed order of x's values
    y = -x
    assert spearman(x, y) == pytest.approx(-1.0)
    assert spearman_reps(x, x, idx) == pytest.approx(
        np.where(np.ptp(x[idx], axis=1) > 0, 1.0, np.nan), nan_ok=True
    )
