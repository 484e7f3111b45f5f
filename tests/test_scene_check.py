"""IMPLICIT-Bench App. C.1 scene check (issue 39): identification rate per arm and the mean
squared difference of scene vs template lean against within-unit shuffled labels, by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from implicit_bench.audits.scene_check import SceneCheckParams, scene_check


def _primary() -> pd.DataFrame:
    labels = {
        ("u1", "neutral"): ["s", "s"],  # lean +1
        ("u1", "subject"): ["a", "neither"],  # lean -0.5
        ("u2", "neutral"): ["neither", "a"],  # lean -0.5
        ("u2", "subject"): ["s", "s"],  # lean +1
        ("u3", "neutral"): ["s", "s"],  # u3's head cannot be drawn alone: left out
        ("u3", "subject"): ["s", "s"],
    }
    rows = [
        {"unit_id": u, "variant": v, "seed": 42 + 1000 * k, "judge": "J", "config": "g", "label": x}
        for (u, v), xs in labels.items()
        for k, x in enumerate(xs)
    ]
    rows.append({**rows[0], "seed": 9, "label": None})  # an invalid answer is not counted
    return pd.DataFrame(rows)


UNITS = pd.DataFrame({"unit_id": ["u1", "u2", "u3"], "head_drawable": [True, True, False]})


def test_identification_and_msd_by_hand():
    params = SceneCheckParams(shuffles=4000, seed=0)
    out = scene_check(_primary(), UNITS, params)
    assert out["units_not_drawable"] == 1
    res = out["by_judge"]["J"]["g"]
    # original scene: s, s, neither, a -> 3 of 4 identified; template: a, neither, s, s -> 3/4
    assert res["identification"]["original_scene"] == {"images": 4, "identification_rate": 0.75}
    assert res["identification"]["template"]["identification_rate"] == 0.75
    assert res["missing_arms"] == ["second_scene"]
    msd = res["lean_msd"]["original_scene_vs_template"]
    # (1 - (-0.5))^2 = 2.25 for both units
    assert msd["units"] == 2 and msd["msd"] == pytest.approx(2.25)
    # shuffled: each unit pools {+1, +1, -1, 0}; of the 6 equally likely 2/2 splits, 2 give
    # 2.25 and 4 give 0.25 -> E = 5.5 / 6; P(shuffled MSD >= 2.25) = (2/6)^2 = 1/9
    assert msd["msd_shuffled"] == pytest.approx(5.5 / 6, abs=0.03)
    assert msd["p_shuffled"] == pytest.approx(1 / 9, abs=0.02)


def test_without_a_drawable_column_every_unit_counts():
    out = scene_check(_primary(), UNITS[["unit_id"]], SceneCheckParams(shuffles=10))
    assert out["units_not_drawable"] == 0 and "no head_drawable column" in out["units"]
    res = out["by_judge"]["J"]["g"]
    assert res["identification"]["original_scene"]["images"] == 6
    # u3: lean +1 in both arms adds 0: (2.25 + 2.25 + 0) / 3
    assert res["lean_msd"]["original_scene_vs_template"]["msd"] == pytest.approx(1.5)
