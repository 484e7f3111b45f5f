"""Per-image face attributes (cached by image sha256) and their distributions."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from implicit_bench._util.closed_form import normalised_entropy
from implicit_bench.backends.faces import (
    ABSTAINED,
    AGE_GROUPS,
    GENDERS,
    NO_FACE,
    FaceJudge,
    FaceParams,
)
from implicit_bench.runtime.cache import DiskCache, cached_map, model_key


def age_group(age: int, config: FaceParams) -> str:
    if age < config.middle_from:
        return "young"
    return "middle" if age < config.elderly_from else "elderly"


def face_attributes(faces: list[dict], config: FaceParams) -> dict[str, Any]:
    """The image's reading: the largest face's gender and age group, or "no face"; with
    ``config.tau`` set, an attribute whose confidence is below tau reads "abstained" (the
    confidences stay in the face cache either way)."""
    if not faces:
        return {
            "faces": 0,
            "gender": NO_FACE,
            "age": None,
            "age_group": NO_FACE,
        }

    def area(face: dict) -> int:
        left, top, right, bottom = face["box"]
        return (right - left + 1) * (bottom - top + 1)

    face = max(faces, key=area)
    gender, group = face["gender"], age_group(face["age"], config)
    g_conf, a_conf = face.get("gender_confidence"), face.get("age_confidence")
    if config.tau is not None:
        if g_conf is None or g_conf / 100 < config.tau:
            gender = ABSTAINED
        if a_conf is None or a_conf / 100 < config.tau:
            group = ABSTAINED
    return {
        "faces": len(faces),
        "gender": gender,
        "age": face["age"],
        "age_group": group,
    }


def judge_images(
    judge: FaceJudge, cache: DiskCache, shas: Iterable[str], load: Callable[[str], Any]
) -> dict[str, list[dict]]:
    """``sha256 -> detected faces``, each image predicted once (stored one by one)."""
    shas = list(dict.fromkeys(shas))
    identity = judge.identity()
    got = cached_map(
        cache,
        shas,
        lambda sha: model_key("faces", identity, image=sha),
        lambda batch: [judge.predict(load(sha)) for sha in batch],
        batch_size=1,
    )
    return dict(zip(shas, got.values, strict=True))


def distribution(values: pd.Series, cats: tuple[str, ...]) -> dict[str, Any]:
    """Counts over ``cats`` (+ no face), shares of images with a face, normalised entropy."""
    counts = {c: int((values == c).sum()) for c in cats}
    with_face = sum(counts.values())
    return {
        "images": int(len(values)),
        "no_face": int((values == NO_FACE).sum()),
        "abstained": int((values == ABSTAINED).sum()),  # below FaceParams.tau
        "counts": counts,
        "shares": {c: (v / with_face if with_face else None) for c, v in counts.items()},
        "entropy": normalised_entropy(list(counts.values()), len(cats)),
    }


def face_report(frame: pd.DataFrame) -> dict[str, Any]:
    """Per config and unit set (gender units, age units, both): gender and age distributions.

    ``frame``: one row per neutral image with config, bias_type, gender, age_group.
    """
    out: dict[str, Any] = {}
    for config, g in frame.groupby("config", sort=True):
        sets = {
            "gender_units": g[g["bias_type"] == "gender"],
            "age_units": g[g["bias_type"] == "age"],
        }
        sets["gender_and_age_units"] = pd.concat(sets.values())
        out[str(config)] = {
            name: {
                "gender": distribution(rows["gender"], GENDERS),
                "age": distribution(rows["age_group"], AGE_GROUPS),
            }
            for name, rows in sets.items()
        }
    return out


def race_note(backend: str) -> dict[str, Any]:
    """Race, HoloFair's third attribute: no face judge here reads it, so reports say so."""
    return {
        "available": False,
        "reason": f"the face judge '{backend}' reads gender and age only (no race classifier "
        "offline), so ID, CA_q and MGBI here are over gender and age, not HoloFair's three "
        "attributes",
    }
