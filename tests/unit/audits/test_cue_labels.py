"""IMPLICIT-Bench App. C.1's cue analysis: cue shares per text source, the scene-vs-template MSD
on the units whose original scene has no cue, the lean difference by cue direction, the
simulated labeller and the LLM labelling hook through a real local server; by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from implicit_bench.audits.cue_labels import CueParams, cue_labels, cue_shares, lean_by_cue
from implicit_bench.audits.scene_check import SceneCheckParams, scene_check

ARMS = {"original_scene": "neutral", "template": "subject"}


def test_simulated_labels_plant_each_arms_no_cue_share():
    units = pd.DataFrame(
        {
            "unit_id": [f"u{i}" for i in range(4)],
            "prompt_neutral": ["a", "b", "c", None],
            "prompt_subject": ["a photo of x"] * 4,
        }
    )
    params = CueParams(
        sim_no_cue={"original_scene": 0.0, "template": 1.0}, sim_stereotype_share=1.0
    )
    labels = cue_labels(units, ARMS, params)
    # original scenes: never "none", always the stereotype; templates always "none"
    assert labels["original_scene"].iloc[:3].tolist() == ["stereotype"] * 3
    assert pd.isna(labels["original_scene"].iloc[3])  # no text, no label
    shares = cue_shares(labels)
    assert shares["original_scene"] == {
        "texts": 3,
        "none": 0,
        "stereotype": 3,
        "anti_stereotype": 0,
        "no_cue_share": 0.0,
        "unlabelled": 1,
    }
    assert shares["template"]["no_cue_share"] == 1.0 and shares["template"]["texts"] == 4
    # the paper's shares as planted, over many units: close to 0.37 / 0.98
    many = pd.DataFrame(
        {"unit_id": [str(i) for i in range(4000)], "prompt_neutral": "x", "prompt_subject": "y"}
    )
    planted = cue_shares(cue_labels(many, ARMS, CueParams()))
    assert planted["original_scene"]["no_cue_share"] == pytest.approx(0.37, abs=0.03)
    assert planted["template"]["no_cue_share"] == pytest.approx(0.98, abs=0.01)


def test_lean_difference_by_cue_direction_by_hand():
    scene = {"u1": np.array([1.0, 1.0]), "u2": np.array([-1.0, 0.0]), "u3": np.array([0.0, 0.0])}
    template = {"u1": np.array([0.0, 0.0]), "u2": np.zeros(2), "u3": np.array([1.0, -1.0])}
    cue = {"u1": "stereotype", "u2": "anti_stereotype", "u3": "none"}
    out = lean_by_cue(scene, template, cue)
    assert out["stereotype"] == {"units": 1, "mean_difference": 1.0}
    assert out["anti_stereotype"] == {"units": 1, "mean_difference": -0.5}
    assert out["none"] == {"units": 1, "mean_difference": 0.0}


def _primary() -> pd.DataFrame:
    labels = {
        ("u1", "neutral"): ["s", "s"],  # lean +1
        ("u1", "subject"): ["a", "neither"],  # lean -0.5
        ("u2", "neutral"): ["neither", "a"],  # lean -0.5
        ("u2", "subject"): ["s", "s"],  # lean +1
        ("u3", "neutral"): ["s", "neither"],  # lean +0.5
        ("u3", "subject"): ["s", "s"],  # lean +1
    }
    return pd.DataFrame(
        [
            {
                "unit_id": u,
                "variant": v,
                "seed": 42 + 1000 * k,
                "judge": "J",
                "config": "g",
                "label": x,
            }
            for (u, v), xs in labels.items()
            for k, x in enumerate(xs)
        ]
    )


def test_scene_check_with_the_hooks_cue_columns():
    units = pd.DataFrame(
        {
            "unit_id": ["u1", "u2", "u3"],
            "cue_original_scene": ["stereotype", "none", "none"],
            "cue_template": ["none", "none", "bogus"],  # an invalid label is left out, counted
        }
    )
    params = SceneCheckParams(shuffles=10, cues={"enabled": True, "labeller": "columns"})
    out = scene_check(_primary(), units, params)
    assert out["cues"]["simulated"] is False
    assert out["cues"]["share"]["original_scene"]["no_cue_share"] == pytest.approx(2 / 3)
    assert out["cues"]["share"]["template"]["unlabelled"] == 1
    cues = out["by_judge"]["J"]["g"]["cues"]
    # no-cue units u2, u3: (-0.5 - 1)^2 = 2.25 and (0.5 - 1)^2 = 0.25 -> MSD 1.25
    assert cues["no_cue_msd"]["units"] == 2 and cues["no_cue_msd"]["msd"] == pytest.approx(1.25)
    # u1 cues the stereotype: scene +1 - template -0.5 = +1.5
    assert cues["lean_by_cue"]["stereotype"] == {"units": 1, "mean_difference": 1.5}
    assert cues["lean_by_cue"]["anti_stereotype"]["units"] == 0


def test_llm_labelling_hook_through_a_local_server(tmp_path):
    from implicit_bench.backends.llm import InvalidCounter, build_llm
    from implicit_bench.construction.triplets import VARIANT_HOOKS
    from implicit_bench.construction.triplets.cue_labels_llm import (
        CueLabelPromptParams,
        cue_requests,
        llm_cue_labels,
    )
    from tests.helpers.chat_server import ChatServer, completion

    units = pd.DataFrame(
        {
            "unit_id": ["1", "2"],
            "stereotype": ["strong", "poor"],
            "anti_stereotype": ["weak", "rich"],
            "prompt_neutral": ["A strong mover lifting boxes.", "A person at a market."],
            "prompt_subject": ["A photo of a mover.", None],
        }
    )
    params = CueLabelPromptParams(arms=ARMS)
    requests, keys = cue_requests(units, params)
    assert len(requests) == 3  # unit 2 has no template text
    # the option order is fixed per (unit, arm) by a hash; the arm is never named
    assert all("original" not in r[0]["content"] for r in requests)

    def answer(body, n):
        text = body["messages"][-1]["content"]
        if "lifting boxes" in text:  # answers the option that names "strong"
            first = text.split("the person shown is ")[1].split(" or ")[0]
            return 200, completion('{"cue": "%s"}' % ("A" if first == "strong" else "B"))
        if "market" in text:
            return 200, completion('{"cue": "none"}')
        return 200, completion("not JSON")

    with ChatServer(answer) as server:
        config = {
            "backend": "openai",
            "model": "m",
            "base_url": server.base_url,
            "cache": str(tmp_path / "llm.sqlite"),
            "backoff_s": 0.0,
        }
        counter = InvalidCounter("cue_labels")
        out = llm_cue_labels(units, build_llm(config), params, counter)
    assert out["cue_original_scene"].tolist() == ["stereotype", "none"]
    assert out["cue_template"].iloc[0] is None and counter.as_dict()["invalid"] == 1
    assert "cue_labels_llm" in VARIANT_HOOKS.names()
