"""The calibration set of the simulated world, corrected estimates in the fast path, power by
calibration size and the coverage benchmark's targets (docs/correction.md)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from benchmarks.coverage_study import targets
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.protocol.schema import BLIND_LABELS
from implicit_bench.world.params import CalibrationWorld, WorldParams
from implicit_bench.world.recovery.fastpath import calibration_set, estimates, simulate, truths
from implicit_bench.world.recovery.power import calibration_table

SEEDS = [42, 1042, 2042]


def _params(images: int, error: float = 0.0) -> WorldParams:
    return WorldParams(
        calibration=CalibrationWorld(images=images, rater_error=error),
        generators={"g": {}},
        judges={"j": {}},
    )


def test_calibration_params_are_checked() -> None:
    assert CalibrationWorld().images == 0  # no calibration set unless asked: nothing corrected
    with pytest.raises(ValidationError):
        CalibrationWorld(rater_error=0.5)
    with pytest.raises(ValidationError):
        CalibrationWorld(images=10, typo=1)
    conf = np.array(CalibrationWorld(rater_error=0.02).rater_confusion())
    assert (
        conf.sum(axis=1) == pytest.approx([1, 1, 1])
        and conf[0, 0] == pytest.approx(0.98)
        and conf[0, 1] == pytest.approx(0.01)
    )


def test_calibration_set_is_stratified_and_read_from_what_is_shown() -> None:
    params = _params(301)
    world = simulate(
        params,
        n_units=120,
        seeds=SEEDS,
        generator="g",
        api_generator=None,
        blind_judge="j",
        rubric_judges=["j"],
        rng=np.random.default_rng(0),
    )
    cal = calibration_set(world, params, "j", np.random.default_rng(1))
    strata, n = np.unique(cal.stratum, return_counts=True)
    assert dict(zip(strata, n, strict=True)) == {
        "anti_stereotype": 100,
        "neutral": 101,
        "stereotype": 100,
    }
    # a perfect rater (error 0) gives what the pictures show; the
    # judge's labels are its stored answers
    j = world.judgements
    pool = j[(j["task"] == "blind") & j["primary"] & j["valid"]]
    shown = np.bincount(pool["shown"], minlength=3) / len(pool)
    assert np.bincount(cal.reference, minlength=3) / len(cal) == pytest.approx(shown, abs=0.08)
    agree = (cal.reference == cal.judged).mean()
    assert 0.75 < agree < 1.0  # judge_a-like default confusion: mostly right, not always
    assert set(np.unique(cal.judged)) <= set(range(len(BLIND_LABELS)))
    assert calibration_set(world, _params(0), "j", np.random.default_rng(1)) is None


def test_fast_path_gives_corrected_beside_judged_and_rendered_truths() -> None:
    params = _params(600)
    world = simulate(
        params,
        n_units=300,
        seeds=SEEDS,
        generator="g",
        api_generator=None,
        blind_judge="j",
        rubric_judges=["j"],
        rng=np.random.default_rng(3),
    )
    cal = calibration_set(world, params, "j", np.random.default_rng(4))
    est = estimates(world, "j", ["j"], 3, Bootstrap(n=200, seed=1), cal)
    truth = truths(world, params, "j", ["j"], 3)
    for name in (
        "default_rate",
        "success_stereotype",
        "success_anti",
        "gap",
        "a_to_s",
        "success_anti [0 of 3]",
    ):
        assert est[name]["value"] is not None and est[f"{name} (corrected)"]["value"] is not None
        assert f"{name} (rendered)" in truth
    # the judge (slot-A preference, confusion) pulls the judged
    # stereotype success below what is rendered;
    # the corrected estimate moves toward the rendered truth
    judged, fixed = (
        est["success_stereotype"]["value"],
        est["success_stereotype (corrected)"]["value"],
    )
    rendered = truth["success_stereotype (rendered)"]
    assert abs(fixed - rendered) < abs(judged - rendered)
    lo, hi = est["success_stereotype (corrected)"]["ci"]
    assert lo <= rendered <= hi
    # without a calibration set nothing changes
    plain = estimates(world, "j", ["j"], 3, Bootstrap(n=200, seed=1))
    assert not any(k.endswith("(corrected)") for k in plain)
    assert plain["gap"] == est["gap"]


def test_coverage_targets() -> None:
    assert targets("gap (corrected)") == [("gap (corrected)", "gap (rendered)")]
    assert targets("gap") == [("gap", "gap"), ("gap (judged, vs rendered)", "gap (rendered)")]
    assert targets("hedges_g [age] (percentile)") == [
        ("hedges_g [age] (percentile)", "hedges_g [age]")
    ]


def test_power_by_calibration_size() -> None:
    rows = calibration_table(
        _params(0),
        sizes=[90, 600],
        n_units=120,
        seeds=SEEDS,
        worlds=1,
        n_boot=100,
        generator="g",
        judge="j",
    )
    assert [r["calibration"] for r in rows] == [90, 600]
    assert all(r["usable"] == 1 for r in rows)
    # more calibration images, narrower corrected intervals; always wider than the judged one
    assert rows[1]["gap_corrected_width"] < rows[0]["gap_corrected_width"]
    assert all(r["gap_corrected_width"] > r["gap_judged_width"] for r in rows)


def test_hedges_g_interval_follows_bootstrap_method() -> None:
    from implicit_bench.analysis.lean import hedges_by_type

    params = _params(0)
    world = simulate(
        params,
        n_units=120,
        seeds=SEEDS,
        generator="g",
        api_generator=None,
        blind_judge="j",
        rubric_judges=["j"],
        rng=np.random.default_rng(8),
    )
    primary = world.judgements[world.judgements["primary"]]
    out = {
        m: hedges_by_type(
            primary,
            "sim",
            ["j"],
            world.units,
            None,
            Bootstrap(n=200, seed=3, method={"hedges_g": m}),
            "h",
        )
        for m in ("percentile", "bca", "studentized")
    }
    g = {m: r["default"]["g"] for m, r in out.items()}
    assert g["percentile"]["value"] == g["bca"]["value"] == g["studentized"]["value"]
    assert (
        len({tuple(e["ci"]) for e in g.values()}) == 3
    )  # three different intervals on the same resamples
    for e in g.values():
        assert e["ci"][0] < e["value"] < e["ci"][1]
    assert (
        "studentized for hedges_g"
        in Bootstrap(method={"hedges_g": "studentized"}).block()["method"]
    )
