"""CLIP-Score (HoloFair E.1) and the CLIP backbone comparison (When the Judge Acts T15) of the
clip stage: hand-worked values and a run on the tiny random CLIP."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from implicit_bench.backends.clip import ClipParams
from implicit_bench.backends.clip.params import ClipStageParams
from implicit_bench.backends.clip.quality import (
    backbone_comparison,
    clip_score_summary,
    clip_scores,
)
from implicit_bench.backends.clip.stage import run_clip
from implicit_bench.backends.tiny.stage import build
from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore


def test_clip_score_by_hand():
    images = pd.DataFrame(
        {
            "config": ["g", "g", "g"],
            "unit_id": ["u1", "u1", "u2"],
            "variant": ["neutral", "stereotype", "neutral"],
            "seed": [42, 42, 42],
            "sha256": ["i1", "i2", "i3"],
            "prompt": ["p1", "p2", "p1"],
        }
    )
    img = {"i1": np.array([1.0, 0.0]), "i2": np.array([1.0, 0.0]), "i3": np.array([0.0, 1.0])}
    txt = {"p1": np.array([0.6, 0.8]), "p2": np.array([-0.6, 0.8])}
    scores = clip_scores(images, img, txt)
    assert scores["cos"].tolist() == pytest.approx([0.6, -0.6, 0.8])
    out = clip_score_summary(scores)["g"]
    assert out["all"]["n"] == 3
    assert out["all"]["clip_score"] == pytest.approx((0.6 - 0.6 + 0.8) / 3)
    # Hessel et al.: 2.5 * max(cos, 0)
    assert out["all"]["clipscore_hessel"] == pytest.approx(2.5 * (0.6 + 0 + 0.8) / 3)
    assert out["by_variant"]["neutral"]["clip_score"] == pytest.approx(0.7)
    assert out["by_variant"]["stereotype"]["clipscore_hessel"] == 0.0


def test_backbone_comparison_by_hand():
    key = {"config": ["g"] * 4, "unit_id": ["u1", "u2", "u3", "u4"], "seed": [42] * 4}
    primary = pd.DataFrame({**key, "lean": [0.3, -0.1, 0.2, 0.05]})
    other = pd.DataFrame({**key, "lean": [0.2, 0.1, 0.1, 0.0]})
    bkey = {**key, "variant": ["neutral"] * 4}
    p_blind = pd.DataFrame({**bkey, "value": ["s", "a", "s", "a"]})
    o_blind = pd.DataFrame({**bkey, "value": ["s", "a", "a", "a"]})
    out = backbone_comparison(primary, other, p_blind, o_blind)
    assert out["lean_pairs"] == 4
    assert out["lean_pearson"] == pytest.approx(np.corrcoef(primary["lean"], other["lean"])[0, 1])
    # ranks 4,1,3,2 vs 4,2.5,2.5,1: sum dx dy = 3, sum dx^2 = 5, sum dy^2 = 4.5
    assert out["lean_spearman"] == pytest.approx(3 / np.sqrt(5 * 4.5))
    # signs: + / + agree, - / + not, + / + agree, + / 0 not
    assert out["lean_sign_agreement"] == 0.5
    assert out["lean_s_share"] == {"primary": 0.75, "other": 0.75}
    assert out["blind_agreement"] == 0.75
    # kappa: po = 0.75, pe = 0.5 * 0.25 + 0.5 * 0.75 = 0.5 -> 0.5
    assert out["blind_kappa"] == pytest.approx(0.5)


def _png(colour) -> bytes:
    arr = np.zeros((40, 48, 3), np.uint8)
    arr[:, :24] = colour
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def test_run_clip_writes_clip_score_and_backbone_sensitivity(tmp_path):
    first, second = tmp_path / "clip_a", tmp_path / "clip_b"
    build("clip", first, seed=0)
    build("clip", second, seed=1)
    store = ImageStore(tmp_path / "images" / "cfg")
    colours = {"neutral": (255, 0, 0), "stereotype": (250, 5, 0), "anti_stereotype": (0, 0, 255)}
    for seed in (42, 1042):
        for variant, colour in colours.items():
            store.put(
                ImageRecord(ImageKey("cfg", "u1", variant, seed), "tiny", f"a {variant}", "ok"),
                _png(colour),
            )
    store.finalize()
    store.close()
    units = pd.DataFrame({"unit_id": ["u1"], "stereotype": ["man"], "anti_stereotype": ["woman"]})
    params = ClipStageParams(
        model=ClipParams(model=str(first)),
        images_root=str(tmp_path / "images"),
        cache=str(tmp_path / "clip.sqlite"),
        compare_models={"same": ClipParams(model=str(first)), "b": ClipParams(model=str(second))},
    )
    rows, metrics = run_clip(params, units)
    assert set(rows["judge"]) == {"clip"}  # the compared models write no judgements
    score = metrics["clip_score"]["cfg"]
    assert score["all"]["n"] == 6 and set(score["by_variant"]) == set(colours)
    assert -1 <= score["all"]["clip_score"] <= 1
    same = metrics["backbone_sensitivity"]["same"]
    assert same["blind_agreement"] == 1.0 and same["lean_sign_agreement"] == 1.0
    assert same["lean_mean"]["primary"] == pytest.approx(same["lean_mean"]["other"])
    other = metrics["backbone_sensitivity"]["b"]
    assert other["primary"] == str(first) and other["other"] == str(second)
    assert other["blind_images"] == 6 and other["lean_pairs"] == 2
