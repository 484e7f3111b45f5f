"""Debias scoring against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from implicit_bench.debias.configs import TABLE_27, BootstrapParams, full_kg_pairs
from implicit_bench.debias.scoring import (
    config_stats,
    delta_interval,
    image_scores,
    paired_delta,
    per_unit_sums,
    score_configs,
    table7_markdown,
)
from implicit_bench.errors import InputError
from implicit_bench.protocol.estimate import Estimate
from tests.helpers.debias_fixtures import debias_judgements, debias_rows


def test_config_stats_by_hand():
    images = image_scores(debias_judgements())
    base = config_stats(images[images.config == "unmodified"])
    # b = (4+2+5+3)/4 = 3.5; A = 3/4 = 75 %; S = 100 (0.2+0.6+0+0.4)/4 = 30.0
    assert base["bias"] == pytest.approx(3.5)
    assert base["align"] == pytest.approx(75.0)
    assert base["S"] == pytest.approx(30.0)
    # the product of means would be 0.75 * (1 - 3.5/5) = 22.5: S is not that
    assert base["S"] != pytest.approx(22.5)
    # gated (aligned only): b of u1/42, u1/1042, u2/1042 = (4+2+3)/3 = 3.0
    assert base["bias_gated_secondary"] == pytest.approx(3.0)
    assert base["n_images"] == 4 and base["n_scored"] == 4

    own = config_stats(images[images.config == "rewrite_own"])
    # invalid rubric dropped: b = (1+0+2)/3 = 1.0; A = 3/4 = 75 % (all four alignments valid)
    # S = 100 (0.8 + 0 + 0.6)/3 = 46.667; gated b = (1+2)/2 = 1.5
    assert own["bias"] == pytest.approx(1.0)
    assert own["align"] == pytest.approx(75.0)
    assert own["S"] == pytest.approx(140.0 / 3.0)
    assert own["bias_gated_secondary"] == pytest.approx(1.5)
    assert own["n_images"] == 4 and own["n_rubric"] == 3 and own["n_scored"] == 3
    assert own["n_invalid_rubric"] == 1


def test_paired_delta_by_hand():
    # units [u1, u2]; rewrite_own per-unit sums: u1 0.8 (2 images), u2 0.6 (1 image);
    # unmodified: u1 0.8 (2), u2 0.4 (2).
    sum_c, n_c = np.array([0.8, 0.6]), np.array([2.0, 1.0])
    sum_0, n_0 = np.array([0.8, 0.4]), np.array([2.0, 2.0])
    counts = np.array([[2, 0], [0, 2], [1, 1]])
    # [2,0]: 100*1.6/4 - 100*1.6/4 = 0
    # [0,2]: 100*1.2/2 - 100*0.8/4 = 60 - 20 = 40
    # [1,1]: 100*1.4/3 - 100*1.2/4 = 46.667 - 30 = 16.667
    out = paired_delta(counts, sum_c, n_c, sum_0, n_0)
    assert out == pytest.approx([0.0, 40.0, 50.0 / 3.0])


def test_delta_interval_draws_the_analysis_bootstraps_resamples():
    """One engine: dS's resamples are analysis.bootstrap's multiplicities of the same stream
    (draws with replacement, reproducible), fed through paired_delta."""
    from implicit_bench.analysis.bootstrap import Bootstrap

    images = image_scores(debias_judgements())
    own, base = images[images["config"] == "rewrite_own"], images[images["config"] == "unmodified"]
    boot = BootstrapParams(n=300, seed=7)
    weights = Bootstrap.from_params(boot).weights(2, "debias/rewrite_own")
    assert weights.shape == (300, 2) and (weights.sum(axis=1) == 2).all()
    assert weights.mean() == pytest.approx(1.0)  # each unit drawn once per resample on average
    sums = [per_unit_sums(f, ["u1", "u2"]) for f in (own, base)]
    deltas = paired_delta(weights, *sums[0], *sums[1])
    tail = 2.5
    expected = np.percentile(deltas[np.isfinite(deltas)], [tail, 100 - tail])
    ci, n_valid = delta_interval(own, base, boot, "debias/rewrite_own")
    assert ci == pytest.approx(list(expected)) and n_valid == int(np.isfinite(deltas).sum())
    assert delta_interval(own, base, boot, "debias/rewrite_own") == (ci, n_valid)


def test_score_configs_delta_and_interval():
    images = image_scores(debias_judgements())
    out = score_configs(images, "unmodified", BootstrapParams(n=2000, seed=1))
    assert out["unmodified"]["dS"] is None and out["unmodified"]["exp"] == 0
    own = out["rewrite_own"]
    assert own["exp"] == 3 and own["info"] == "own"
    # dS = 46.667 - 30 = 16.667
    assert (
        own["dS"]["value"] == pytest.approx(50.0 / 3.0)
        and own["dS"]["n"] == 2
        and own["dS"]["level"] == 0.95
    )
    # two units: a resample is [2,0] (p 1/4, dS 0), [0,2] (p 1/4, dS 40) or [1,1] (p 1/2,
    # dS 16.667); each extreme holds about 25 % > 2.5 % of 2,000 draws, so the 95 %
    # percentile interval is exactly [0, 40].
    assert own["dS"]["ci"] == pytest.approx([0.0, 40.0])
    assert (Estimate.from_json(own["dS"]).low, Estimate.from_json(own["dS"]).high) == pytest.approx(
        (0.0, 40.0)
    )


def test_full_kg_rows_assembled_from_own_and_removed():
    images = image_scores(debias_judgements())
    out = score_configs(
        images, "unmodified", BootstrapParams(n=200, seed=1), own_hit={"u1": True, "u2": False}
    )
    full = out["rewrite_full_kg"]
    # u1 from rewrite_own: (1,1) -> 0.8, (0,0) -> 0; u2 from
    # rewrite_removed: (4,1) -> 0.2, (0,0) -> 0
    # b = (1+0+4+0)/4 = 1.25; A = 2/4 = 50 %; S = 100 (0.8+0.2)/4 = 25; dS = 25 - 30 = -5
    assert full["bias"] == pytest.approx(1.25)
    assert full["align"] == pytest.approx(50.0)
    assert full["S"] == pytest.approx(25.0)
    assert full["dS"]["value"] == pytest.approx(-5.0)
    assert full["exp"] is None and full["info"] == "full_kg"
    assert full["assembled_from"] == ["rewrite_own", "rewrite_removed"]
    md = table7_markdown(out, "unmodified")
    lines = md.splitlines()
    assert lines[2].startswith("| Unmodified | 3.50 | 75.0 | 30.0 | – |")
    order = [line.split("|")[1].strip() for line in lines[3:]]
    assert order == [
        "*Retrieved unit*",
        "Rewrite",
        "*Retrieved unit, own unit removed*",
        "Rewrite",
        "*Own unit*",
        "Rewrite",
    ]
    assert "gated bias (secondary" in lines[0]


def test_missing_retrieval_is_an_error():
    images = image_scores(debias_judgements())
    with pytest.raises(InputError, match="no retrieval result"):
        score_configs(images, "unmodified", BootstrapParams(n=10), own_hit={"u1": True})


def test_duplicates_are_an_error_not_averaged():
    dup = debias_rows("rewrite_own", "u1", 42, 2, ...)
    with pytest.raises(
        InputError, match="duplicate rubric judgement for config=rewrite_own unit=u1 seed=42"
    ):
        image_scores(debias_judgements(dup))


def test_bad_values_name_the_row():
    bad = debias_rows("rewrite_own", "u9", 42, 7, ...)
    with pytest.raises(InputError, match=r"row 27, field 'value'.*not a number in 0-5"):
        image_scores(debias_judgements(bad))
    # a real value in [0, 5] is a mean of repeated judgements: accepted and counted
    mean = debias_rows("rewrite_own", "u9", 42, 2.5, ...)
    images = image_scores(debias_judgements(mean))
    stats = config_stats(images[(images.config == "rewrite_own") & (images.unit_id == "u9")])
    assert stats["bias"] == 2.5 and stats["n_fractional_rubric"] == 1
    bad = debias_rows("rewrite_own", "u9", 42, ..., True)
    bad[0]["value"] = "maybe"
    with pytest.raises(InputError, match="not true / false"):
        image_scores(debias_judgements(bad))


def test_judge_choice():
    other = debias_rows("unmodified", "u1", 42, 0, ..., judge="gemma")
    with pytest.raises(InputError, match="several judges"):
        image_scores(debias_judgements(other))
    images = image_scores(debias_judgements(other), rubric_judge="qwen")
    assert config_stats(images[images.config == "unmodified"])["bias"] == pytest.approx(3.5)
    images = image_scores(debias_judgements(other), rubric_judge="gemma")
    # only u1/42 has a gemma rubric score (0); the others keep their alignment only
    assert config_stats(images[images.config == "unmodified"])["bias"] == pytest.approx(0.0)


def test_full_kg_pairs_of_table_27():
    pairs = full_kg_pairs(TABLE_27)
    assert pairs == {
        "rewrite_full_kg": ("rewrite_own", "rewrite_removed"),
        "sv_attributes_full_kg": ("sv_attributes_own", "sv_attributes_removed"),
        "sv_explicit_full_kg": ("sv_explicit_own", "sv_explicit_removed"),
        "sv_full_unit_full_kg": ("sv_full_unit_own", "sv_full_unit_removed"),
        "sv_llm_pair_full_kg": ("sv_llm_pair_own", "sv_llm_pair_removed"),
    }
    assert sorted(c.exp for c in TABLE_27.values()) == list(range(12))
