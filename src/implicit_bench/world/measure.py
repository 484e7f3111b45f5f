"""What the simulated judges report in expectation: the exact link between the planted truth
(what a picture shows) and the labels and scores the benchmark's estimators see.

All functions take ``probs`` (n, 3): P(the picture shows s, a, neither) per image.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from implicit_bench.protocol.schema import BLIND_LABELS
from implicit_bench.world.params import CLASSES, SimJudgeWorld

BLIND = BLIND_LABELS


def confusion(spec: SimJudgeWorld) -> np.ndarray:
    return np.array([[spec.confusion[t][r] for r in CLASSES] for t in CLASSES])


def perceived(probs: np.ndarray, spec: SimJudgeWorld) -> np.ndarray:
    return np.atleast_2d(probs) @ confusion(spec)


def blind_stored(probs: np.ndarray, spec: SimJudgeWorld, orders: np.ndarray) -> np.ndarray:
    """(n, 3) P(stored label s, a, neither | the answer is valid) under each image's order."""
    q = perceived(probs, spec)
    sa = np.asarray(orders) == "sa"
    unsure_a = q[:, 2] * spec.slot_a
    return np.stack(
        [
            q[:, 0] + np.where(sa, unsure_a, 0.0),
            q[:, 1] + np.where(sa, 0.0, unsure_a),
            q[:, 2] * (1 - spec.slot_a),
        ],
        axis=1,
    )


def slot_a(probs: np.ndarray, spec: SimJudgeWorld, orders: np.ndarray) -> np.ndarray:
    """P(the valid answer is letter A) per image and order."""
    q = perceived(probs, spec)
    first = np.where(np.asarray(orders) == "sa", q[:, 0], q[:, 1])
    return first + q[:, 2] * spec.slot_a


def flip(probs: np.ndarray, spec: SimJudgeWorld) -> np.ndarray:
    """P(the stored labels under the two orders differ | both valid): the perception is shared by
    the two calls, the slot-A preference is drawn per call."""
    q = perceived(probs, spec)
    return q[:, 2] * (1 - (1 - spec.slot_a) ** 2)


def score_pmf(spec: SimJudgeWorld) -> np.ndarray:
    """(3, 6) P(rubric score j | perceived class): round-half-up(N(mean, sd)) clipped to 0..5."""
    out = np.zeros((3, 6))
    for k, c in enumerate(CLASSES):
        mu, sd = spec.rubric_mean[c], spec.rubric_sd
        edges = np.array([-np.inf, 0.5, 1.5, 2.5, 3.5, 4.5, np.inf])
        if sd == 0:
            j = int(min(5, max(0, np.floor(mu + 0.5))))
            out[k, j] = 1.0
            continue
        cdf = np.array(
            [
                0.0 if e == -np.inf else 1.0 if e == np.inf else NormalDist(mu, sd).cdf(e)
                for e in edges
            ]
        )
        out[k] = np.diff(cdf)
    return out


def scores(probs: np.ndarray, spec: SimJudgeWorld) -> np.ndarray:
    """(n, 6) P(rubric score 0..5) per image."""
    return perceived(probs, spec) @ score_pmf(spec)


def score_moments(probs: np.ndarray, spec: SimJudgeWorld) -> tuple[np.ndarray, np.ndarray]:
    pmf = scores(probs, spec)
    j = np.arange(6)
    return pmf @ j, pmf @ (j**2)


def pooled_score_moments(
    parts: list[tuple[np.ndarray, np.ndarray, float]],
) -> tuple[float, float]:
    """Mean and variance of rubric scores pooled over judges: ``parts`` holds each judge's
    per-image first and second moments and the probability that its answer is valid. A judge's
    images weigh by that probability, as the estimator pools valid answers only (a judge with
    more invalid answers contributes fewer scores)."""
    weight = sum(w * len(m1) for m1, _, w in parts)
    e1 = sum(w * float(np.sum(m1)) for m1, _, w in parts) / weight
    e2 = sum(w * float(np.sum(m2)) for _, m2, w in parts) / weight
    return e1, e2 - e1**2


def aligned(off_prompt: np.ndarray, spec: SimJudgeWorld) -> np.ndarray:
    """P(the alignment answer is true): the subject is drawn and read
    right, or missing and misread."""
    off = np.asarray(off_prompt, dtype=float)
    return (1 - off) * (1 - spec.alignment_error) + off * spec.alignment_error


def normalised_entropy(p: np.ndarray) -> np.ndarray:
    p = np.atleast_2d(p)
    p = p / np.where(p.sum(axis=1, keepdims=True) > 0, p.sum(axis=1, keepdims=True), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.nansum(np.where(p > 0, p * np.log(p), 0.0), axis=1)
    return h / np.log(p.shape[1])
