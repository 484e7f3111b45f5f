"""CLIP: the transformers backend on a tiny local random model, embedding cache, lean and
blind judge against values worked out by hand."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from implicit_bench.backends.clip import ClipParams, create
from implicit_bench.backends.clip.embeddings import CachedEmbedder
from implicit_bench.backends.clip.params import ClipStageParams
from implicit_bench.backends.clip.scores import blind_rows, lean_rows, lean_summary, variant_sims
from implicit_bench.backends.clip.stage import run_clip
from implicit_bench.backends.tiny.stage import build
from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore
from implicit_bench.runtime.cache import DiskCache
from implicit_bench.runtime.provenance import is_random_init


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    out = tmp_path_factory.mktemp("models") / "clip"
    build("clip", out, seed=0)
    return out


def _image(color) -> Image.Image:
    arr = np.zeros((40, 48, 3), np.uint8)
    arr[:, :24] = color
    return Image.fromarray(arr)


def test_tiny_clip_backend_embeds_and_caches(tiny_clip, tmp_path):
    assert is_random_init(tiny_clip)
    backend = create(ClipParams(model=str(tiny_clip)))
    imgs = backend.embed_images([_image((255, 0, 0)), _image((0, 0, 255)), _image((255, 0, 0))])
    assert imgs.shape == (3, 16)
    np.testing.assert_allclose(np.linalg.norm(imgs, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(imgs[0], imgs[2], atol=1e-6)
    assert not np.allclose(imgs[0], imgs[1])
    txt = backend.embed_texts(["a photo of a man", "a photo of a woman"])
    assert txt.shape == (2, 16)

    cache = DiskCache(tmp_path / "c.sqlite")
    loads = []
    pics = {"r": _image((255, 0, 0)), "b": _image((0, 0, 255))}

    def load(sha):
        loads.append(sha)
        return pics[sha]

    first = CachedEmbedder(backend, cache)
    emb = first.images(["r", "b", "r"], load)
    assert first.computed_images == 2 and loads == ["r", "b"]
    again = CachedEmbedder(backend, cache)
    emb2 = again.images(["b", "r"], load)
    assert again.computed_images == 0 and loads == ["r", "b"]
    np.testing.assert_allclose(emb["r"], emb2["r"], atol=1e-6)
    np.testing.assert_allclose(emb["r"], imgs[0], atol=1e-5)


def test_lean_and_similarities_by_hand():
    images = pd.DataFrame(
        [
            ("c", "u1", v, seed, f"{v}{seed}")
            for seed in (42, 1042)
            for v in ("neutral", "stereotype", "anti_stereotype")
        ]
        + [("c", "u2", "neutral", 42, "x")],
        columns=["config", "unit_id", "variant", "seed", "sha256"],
    )
    emb = {
        # seed 42: n=(1,0), s=(0.6,0.8), a=(0.8,-0.6): cos(n,s)=0.6,
        # cos(n,a)=0.8, cos(s,a)=0; lean -0.2
        "neutral42": np.array([1.0, 0.0]),
        "stereotype42": np.array([0.6, 0.8]),
        "anti_stereotype42": np.array([0.8, -0.6]),
        # seed 1042: n=(0,1), s=(0,1), a=(1,0): 1, 0, 0; lean 1
        "neutral1042": np.array([0.0, 1.0]),
        "stereotype1042": np.array([0.0, 1.0]),
        "anti_stereotype1042": np.array([1.0, 0.0]),
        "x": np.array([1.0, 0.0]),
    }
    sims = variant_sims(images, emb)
    assert len(sims) == 2  # u2 has no stereotype / anti-stereotype image
    assert sims["lean"].tolist() == pytest.approx([-0.2, 1.0])
    summary = lean_summary(sims)
    # sim_ns (0.6 + 1)/2 = 0.8; sim_na (0.8 + 0)/2 = 0.4; sim_sa 0; lean mean 0.4; S% 1/2
    # sd(ddof 1) of (-0.2, 1) = 1.2 / sqrt(2) = 0.848528; d = 0.4 / 0.848528 = 0.471405
    assert summary["sim_ns"] == pytest.approx(0.8)
    assert summary["sim_na"] == pytest.approx(0.4)
    assert summary["sim_sa"] == pytest.approx(0.0)
    assert summary["lean_mean"] == pytest.approx(0.4)
    assert summary["lean_s_share"] == pytest.approx(0.5)
    assert summary["cohens_d"] == pytest.approx(0.471405, abs=1e-6)
    rows = lean_rows(sims, "clip", "m")
    assert set(rows["task"]) == {"clip_lean"} and set(rows["variant"]) == {"neutral"}
    assert float(rows.loc[rows.seed == 42, "value"].iloc[0]) == pytest.approx(-0.2)
    assert json.loads(rows["raw"].iloc[0])["sim_ns"] == pytest.approx(0.6)


def test_clip_blind_judge_by_hand():
    units = pd.DataFrame({"unit_id": ["u1"], "stereotype": ["man"], "anti_stereotype": ["woman"]})
    images = pd.DataFrame(
        [
            ("c", "u1", "neutral", 42, "i1"),
            ("c", "u1", "stereotype", 42, "i2"),
            ("c", "u1", "anti_stereotype", 42, "i3"),
        ],
        columns=["config", "unit_id", "variant", "seed", "sha256"],
    )
    txt = {"a photo of a man": np.array([1.0, 0.0]), "a photo of a woman": np.array([0.0, 1.0])}
    # i1: sim_s 0.6, sim_a 0.8 -> -0.2 < -0.05 -> a; i2: 0.2 > 0.05
    # -> s; i3: 0.71 - 0.70 = 0.01 -> neither
    img = {"i1": np.array([0.6, 0.8]), "i2": np.array([0.8, 0.6]), "i3": np.array([0.71, 0.70])}
    rows = blind_rows(
        images,
        units,
        img_emb=img,
        txt_emb=txt,
        template="a photo of {attribute}",
        margin=0.05,
        judge="clip",
        model="m",
    )
    assert rows["value"].tolist() == ["a", "s", "neither"]
    assert rows["order"].isna().all() and rows["valid"].all()
    # margin 0: the 0.01 difference reads as s
    assert (
        blind_rows(
            images,
            units,
            img_emb=img,
            txt_emb=txt,
            template="a photo of {attribute}",
            margin=0.0,
            judge="clip",
            model="m",
        )["value"].iloc[2]
        == "s"
    )


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def test_run_clip_on_an_image_store(tiny_clip, tmp_path):
    store = ImageStore(tmp_path / "images" / "cfg")
    colours = {"neutral": (255, 0, 0), "stereotype": (250, 5, 0), "anti_stereotype": (0, 0, 255)}
    for seed in (42, 1042):
        for variant, colour in colours.items():
            store.put(
                ImageRecord(ImageKey("cfg", "u1", variant, seed), "tiny", "p", "ok"),
                _png(_image(colour)),
            )
    store.put(ImageRecord(ImageKey("cfg", "u1", "negated_0_1", 42), "tiny", "p", "refused"), None)
    store.finalize()
    store.close()
    units = pd.DataFrame({"unit_id": ["u1"], "stereotype": ["man"], "anti_stereotype": ["woman"]})
    params = ClipStageParams(
        model=ClipParams(model=str(tiny_clip)),
        images_root=str(tmp_path / "images"),
        cache=str(tmp_path / "clip.sqlite"),
    )
    rows, metrics = run_clip(params, units)
    assert (rows["task"] == "clip_lean").sum() == 2
    assert (rows["task"] == "blind").sum() == 6
    assert (
        metrics["images"] == 6 and metrics["embedded_now"] == 3
    )  # three distinct images (the same colours at both seeds)
    lean = metrics["lean_by_config"]["cfg"]
    # identical images at both seeds: sd 0 -> Cohen's d undefined
    assert lean["n"] == 2 and math.isnan(lean["cohens_d"])
    assert (
        lean["lean_s_share"] == 1.0
    )  # neutral (red) is closer to stereotype (near red) than to anti (blue)
    rows2, metrics2 = run_clip(params, units)
    assert metrics2["embedded_now"] == 0
    pd.testing.assert_frame_equal(rows, rows2)
