"""B.6's judge correlations (the ``agreement`` and ``human_vs_judge`` blocks of stage b6)
against values worked out by hand.

- Pearson r of (0, 1, 2, 3) and (0, 1, 3, 2): deviations (-1.5, -0.5, 0.5, 1.5) and
  (-1.5, -0.5, 1.5, 0.5), cross sum 4 over a square sum of 5: r = 0.8.
- dx = |n - a| - |n - s| with a = 0, s = 5 is 2n - 5; two instances per bias type give
  Cohen's d = mean / SD (ddof 1); Spearman rho = 1 - 6 sum d^2 / (n (n^2 - 1)).
- Hedges' g of (4, 2) vs (1, 3): means 3 and 2, both variances 2, pooled SD sqrt(2), df 2,
  J = 1 - 3 / 7 = 4 / 7: g = (4 / 7) / sqrt(2).
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from implicit_bench.bench.b6_agreement import (
    baseline_scores,
    dx_by_type,
    g_by_type,
    human_vs_judges,
    image_pearson,
    judge_agreement,
    rank_agreement,
)
from tests.helpers.human_eval_fixtures import hand_worked_study


def _row(judge, unit, variant, value, seed=42, config="base", valid=True):
    return {
        "config": config,
        "unit_id": unit,
        "seed": seed,
        "variant": variant,
        "task": "rubric",
        "judge": judge,
        "value": str(value),
        "valid": valid,
    }


def _triplet(judge, unit, anti, neutral, ster, seed=42):
    return [
        _row(judge, unit, v, x, seed)
        for v, x in (("anti_stereotype", anti), ("neutral", neutral), ("stereotype", ster))
    ]


def test_image_pearson_over_the_images_every_judge_scored():
    units = ["u1", "u2", "u3", "u4"]
    first = pd.DataFrame(
        [_row("j1", u, "neutral", x) for u, x in zip(units, (0, 1, 2, 3), strict=True)]
        + [_row("j2", u, "neutral", x) for u, x in zip(units, (0, 1, 3, 2), strict=True)]
        # u5: the third judge never scored it; u6: j2's answer is invalid -> both left out
        + [_row("j1", "u5", "neutral", 5), _row("j2", "u5", "neutral", 0)]
        + [_row("j1", "u6", "neutral", 5), _row("j2", "u6", "neutral", 0, valid=False)]
        + [_row("j1", "u1", "neutral", 5, config="other")]
    )
    third = pd.DataFrame(
        [_row("j3", u, "neutral", x) for u, x in zip(units, (3, 2, 1, 0), strict=True)]
        + [_row("j3", "u6", "neutral", 1)]
    )
    scores, judges = baseline_scores(third, first, "base", "j3", {*units, "u5", "u6"})
    assert judges == ["j1", "j2", "j3"]  # the third judge last
    assert sorted(scores["unit_id"].unique()) == units
    r = image_pearson(scores, judges)
    assert list(r) == ["j1~j3", "j2~j3", "j1~j2"]  # pairs with the third judge first
    assert r["j1~j2"]["r"] == pytest.approx(0.8)
    assert r["j1~j3"]["r"] == pytest.approx(-1.0)
    assert r["j2~j3"]["r"] == pytest.approx(-0.8)
    assert {e["n_images"] for e in r.values()} == {4}


def _dx_rows(judge, neutrals):
    """Per bias type two units (seed 42), a = 0, s = 5, neutral scores ``neutrals[type]``."""
    out = []
    for t, ns in neutrals.items():
        for k, n in enumerate(ns):
            out += _triplet(judge, f"{t}{k}", 0, n, 5)
    return out


def test_dx_effect_size_per_type_and_its_spearman_rho():
    # dx = 2n - 5: A (1, 3) d = 2 / sqrt(2); B (3, 5) d = 4 / sqrt(2); C (-1, 1) d = 0;
    # D (-5, -1) d = -3 / sqrt(8)
    j1 = {"A": (3, 4), "B": (4, 5), "C": (2, 3), "D": (0, 2)}
    j2 = {"A": (3, 4), "B": (0, 2), "C": (2, 3), "D": (4, 5)}  # B and D swapped
    frame = pd.DataFrame(_dx_rows("j1", j1) + _dx_rows("j2", j2))
    scores, judges = baseline_scores(frame.iloc[:0], frame, "base", "j3", set(frame["unit_id"]))
    assert judges == ["j1", "j2"]
    types = pd.Series({u: u[0] for u in scores["unit_id"].unique()})
    dx = dx_by_type(scores, "base", judges, types)
    assert dx["j1"]["A"] == {"n": 2, "mean": 2.0, "cohens_d": pytest.approx(math.sqrt(2))}
    assert dx["j1"]["B"]["cohens_d"] == pytest.approx(2 * math.sqrt(2))
    assert dx["j1"]["C"]["cohens_d"] == pytest.approx(0.0)
    assert dx["j1"]["D"]["mean"] == -3.0
    assert dx["j1"]["D"]["cohens_d"] == pytest.approx(-3 / math.sqrt(8))
    d = {j: {t: e["cohens_d"] for t, e in per.items()} for j, per in dx.items()}
    # ranks j1: D 1, C 2, A 3, B 4; j2: B 1, C 2, A 3, D 4; sum d^2 = 9 + 9 = 18
    rho = rank_agreement(d, judges)["j1~j2"]
    assert rho["rho"] == pytest.approx(1 - 6 * 18 / (4 * 15))
    assert rho["n_types"] == 4
    # fewer than three shared types: no rho
    assert (
        rank_agreement({"j1": {"A": 1.0, "B": 2.0}, "j2": {"A": 1.0, "B": 2.0}}, judges)["j1~j2"][
            "rho"
        ]
        is None
    )


def test_hedges_g_per_type_by_hand():
    frame = pd.DataFrame(_triplet("j1", "u1", 1, 2, 4) + _triplet("j1", "u2", 3, 2, 2))
    scores, judges = baseline_scores(frame.iloc[:0], frame, "base", "j1", {"u1", "u2"})
    g = g_by_type(scores, judges, pd.Series({"u1": "race", "u2": "race"}))
    assert g["j1"]["race"] == pytest.approx((4 / 7) / math.sqrt(2))
    # one image per side: no SD, no g
    one = pd.DataFrame(_triplet("j1", "u1", 1, 2, 4))
    scores, _ = baseline_scores(one.iloc[:0], one, "base", "j1", {"u1"})
    assert g_by_type(scores, ["j1"], pd.Series({"u1": "race"}))["j1"]["race"] is None


def test_judge_agreement_block_and_missing_human_ratings():
    first = pd.DataFrame(_triplet("j1", "u1", 1, 2, 4) + _triplet("j1", "u2", 3, 2, 2))
    third = pd.DataFrame(_triplet("j3", "u1", 0, 2, 4) + _triplet("j3", "u2", 3, 3, 2))
    units = pd.DataFrame({"unit_id": ["u1", "u2"], "bias_type": ["race", "race"]})
    block = judge_agreement(third, first, "base", "j3", {"u1", "u2"}, units)
    assert block["judges"] == ["j1", "j3"] and block["n_images"] == 6
    # j1 (1, 2, 4, 3, 2, 2) vs j3 (0, 2, 4, 3, 3, 2): one bias type, so no rho
    # deviations from 7/3: cross sum 19/3, squares 16/3 and 28/3: r = 19 / sqrt(448)
    assert block["image_pearson"]["j1~j3"]["n_images"] == 6
    assert block["image_pearson"]["j1~j3"]["r"] == pytest.approx(19 / math.sqrt(448))
    assert block["spearman_dx"]["j1~j3"] == {"rho": None, "p": None, "n_types": 1}
    human = human_vs_judges(third, first, [], [], None)
    assert human["available"] is False and "b6.human_answers" in human["reason"]


def test_each_judge_against_the_human_mean_from_rating_bundles(tmp_path):
    """The human-evaluation import's hand-worked bundle (three raters, six images): the third
    judge, scoring as j1 does, gets j1's r = 41 / sqrt(2000) with the per-image human mean."""
    root, paths, params = hand_worked_study(tmp_path)
    first = pd.read_parquet(root / "j/judgements.parquet")
    third = first[(first["judge"] == "j1") & first["valid"]].assign(judge="j3")
    human = human_vs_judges(
        third, first, [str(root / "manifest.json")], [str(p) for p in paths], params
    )
    assert human["available"] is True and (human["n_images"], human["n_raters"]) == (6, 3)
    assert set(human["by_judge"]) == {"j1", "j2", "j3"}
    for judge in ("j1", "j3"):
        r = human["by_judge"][judge]["r"]
        assert r["value"] == pytest.approx(41 / math.sqrt(2000), abs=1e-6) and r["n"] == 6


def test_agreement_markdown_lists_each_pair_and_the_missing_human_ratings():
    from implicit_bench.bench.b6 import agreement_markdown

    first = pd.DataFrame(_triplet("j1", "u1", 1, 2, 4) + _triplet("j1", "u2", 3, 2, 2))
    third = pd.DataFrame(_triplet("j3", "u1", 0, 2, 4) + _triplet("j3", "u2", 3, 3, 2))
    units = pd.DataFrame({"unit_id": ["u1", "u2"], "bias_type": ["race", "race"]})
    payload = {
        "agreement": judge_agreement(third, first, "base", "j3", {"u1", "u2"}, units),
        "human_vs_judge": human_vs_judges(third, first, [], [], None),
    }
    text = "\n".join(agreement_markdown(payload))
    assert "| j1~j3 | 0.90 | - (1 types) | - (1 types) |" in text
    assert "Judge vs humans: not available (no human ratings" in text


def test_rubric_agreement_of_a_configurations_judges_as_evaluate_reports_it():
    """``evaluate``'s metrics/lean.json ``judge_agreement``: the same statistics on one
    configuration's rubric judges (rows with a ``score`` column, another config ignored)."""
    from implicit_bench.analysis.judge_agreement import rubric_agreement

    j1 = {"A": (3, 4), "B": (4, 5), "C": (2, 3), "D": (0, 2)}
    j2 = {"A": (3, 4), "B": (0, 2), "C": (2, 3), "D": (4, 5)}
    frame = pd.DataFrame(_dx_rows("j1", j1) + _dx_rows("j2", j2))
    frame = frame.assign(score=frame["value"].astype(float))
    other = frame.assign(config="other", score=0.0)
    units = pd.DataFrame({"unit_id": frame["unit_id"].unique()})
    units = units.assign(bias_type=units["unit_id"].str[0])
    block = rubric_agreement(pd.concat([frame, other]), "base", ["j1", "j2"], units)
    assert block["judges"] == ["j1", "j2"] and block["n_images"] == 24
    assert block["spearman_dx"]["j1~j2"]["rho"] == pytest.approx(-0.8)
