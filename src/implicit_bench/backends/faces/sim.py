"""Backend ``sim`` of the face-judge registry: gender and age group read from a picture's pixels.

A picture without a figure (the subject is missing) or that cannot be read has no face. The
planted ``world.faces.error`` is the chance that gender, and separately the age group, is misread
(the age group then reads as one of the other two, equally likely), drawn from the pixels' hash.
"""

from __future__ import annotations

import hashlib

import numpy as np

from implicit_bench._util.hashing import derive_seed
from implicit_bench.backends.faces.base import FaceParams
from implicit_bench.world.model import load_world
from implicit_bench.world.picture import read
from implicit_bench.world.sampling import AGE_GROUPS


class SimFaceJudge:
    def __init__(self, config: FaceParams):
        self.config = config
        self.world = load_world(config.world)

    def identity(self) -> dict:
        return {
            "backend": "sim",
            "world": self.world.fingerprint,
            "middle_from": self.config.middle_from,
            "elderly_from": self.config.elderly_from,
        }

    def _age(self, group: str) -> int:
        c = self.config
        return {
            "young": max(0, c.middle_from - 8),
            "middle": (c.middle_from + c.elderly_from) // 2,
            "elderly": c.elderly_from + 10,
        }[group]

    def predict(self, image) -> list[dict]:
        shown = read(image)
        if shown is None or not shown.gender:
            return []
        digest = hashlib.sha256(np.asarray(image.convert("RGB")).tobytes()).hexdigest()
        rng = np.random.default_rng(derive_seed("sim-faces", digest))
        error = self.world.params.faces.error
        gender = shown.gender
        if rng.random() < error:
            gender = "male" if gender == "female" else "female"
        age = shown.age
        if rng.random() < error:
            others = [g for g in AGE_GROUPS if g != age]
            age = others[int(rng.integers(len(others)))]
        return [
            {
                "gender": gender,
                "gender_confidence": 100,
                "age": self._age(age),
                "age_confidence": 100,
                "box": [40, 40, 120, 120],
            }
        ]
