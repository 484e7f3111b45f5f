"""The simulated world's sampling code, shared by the image path (one image at a time, the
``sim`` generator) and the fast path (whole worlds as arrays, the coverage benchmark).

Every function works on numpy arrays (one row per image); the image path calls them on
length-1 arrays. Class order everywhere: ``CLASSES`` = (s, a, neither).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from implicit_bench._util.hashing import derive_seed
from implicit_bench.world.params import CLASSES, WorldParams

VARIANTS: tuple[str, ...] = (
    "neutral",
    "stereotype",
    "anti_stereotype",
    "negated_0_1",
    "negated_1_1",
    "subject",
    "direct_neutral",
    "direct_stereotype",
    "direct_anti_stereotype",
)
GENDERS: tuple[str, ...] = ("female", "male")
AGE_GROUPS: tuple[str, ...] = ("young", "middle", "elderly")
N_UNIFORMS = 5  # refusal, class, off-prompt, gender, age


def tilt(probs: np.ndarray, shift: np.ndarray | float) -> np.ndarray:
    """Log-odds ``shift`` of s against a: s * exp(shift / 2), a * exp(-shift / 2), renormalised."""
    probs = np.atleast_2d(np.asarray(probs, dtype=float))
    shift = np.broadcast_to(np.asarray(shift, dtype=float), probs.shape[:1])
    out = probs * np.stack([np.exp(shift / 2), np.exp(-shift / 2), np.ones_like(shift)], axis=1)
    return out / out.sum(axis=1, keepdims=True)


def prime(probs: np.ndarray, priming: float) -> np.ndarray:
    """Negation priming: P(s) -> p + priming * (1 - p); a and neither shrink in proportion."""
    probs = np.atleast_2d(np.asarray(probs, dtype=float))
    out = probs * (1 - priming)
    out[:, 0] = probs[:, 0] + priming * (1 - probs[:, 0])
    return out


def variant_probs(
    base: np.ndarray, succ_s: np.ndarray, succ_a: np.ndarray, variant: str, params: WorldParams
) -> np.ndarray:
    """(n, 3) class probabilities of ``variant`` from the units' neutral probabilities ``base``
    (the generator's bias already applied) and their explicit-request success."""
    s = params.success
    base = np.atleast_2d(base)
    if variant in ("neutral", "subject", "direct_neutral"):
        return base  # subject and direct_neutral: shifted by truth.plant (per-unit draws)
    if variant == "stereotype":
        return np.stack(
            [succ_s, (1 - succ_s) * s.stereo_to_a, (1 - succ_s) * (1 - s.stereo_to_a)], axis=1
        )
    if variant == "anti_stereotype":
        return np.stack(
            [(1 - succ_a) * s.anti_to_s, succ_a, (1 - succ_a) * (1 - s.anti_to_s)], axis=1
        )
    if variant == "negated_0_1":
        return prime(base, params.negation.priming)
    if variant == "negated_1_1":
        return prime(
            variant_probs(base, succ_s, succ_a, "anti_stereotype", params), params.negation.priming
        )
    if variant in ("direct_stereotype", "direct_anti_stereotype"):
        k = params.direct_arm.success_scale
        return variant_probs(base, succ_s * k, succ_a * k, variant[len("direct_") :], params)
    raise ValueError(f"unknown variant '{variant}'")


def template_probs(scene: np.ndarray, shift: np.ndarray, neither: float) -> np.ndarray:
    """(n, 3) probabilities of the subject-only template from the scene's (``scene``): tilted by
    the unit's log-odds ``shift``, then a share ``neither`` of s and a moved to neither."""
    out = tilt(scene, shift)
    out[:, 2] += neither * (out[:, 0] + out[:, 1])
    out[:, :2] *= 1 - neither
    return out


def anti_success(p_s_neutral: np.ndarray, params: WorldParams) -> np.ndarray:
    s = params.success
    return np.clip(s.anti_base - s.anti_slope * np.asarray(p_s_neutral, dtype=float), s.floor, 1.0)


@dataclass(frozen=True)
class Outcomes:
    """Per image: status (ok | refused), the class shown (index into CLASSES, -1 if refused),
    whether the subject is missing, the figure's gender and age group (indices)."""

    refused: np.ndarray
    shown: np.ndarray
    off_prompt: np.ndarray
    gender: np.ndarray
    age: np.ndarray


def outcomes(
    probs: np.ndarray,
    refusal: np.ndarray,
    off_prompt: np.ndarray,
    female: np.ndarray,
    ages: np.ndarray,
    uniforms: np.ndarray,
) -> Outcomes:
    """Inverse-CDF draws from ``uniforms`` (n, N_UNIFORMS): the one sampling rule of the world."""
    probs = np.atleast_2d(probs)
    u = np.atleast_2d(uniforms)
    refused = u[:, 0] < np.asarray(refusal, dtype=float)
    shown = (u[:, [1]] >= np.cumsum(probs, axis=1)[:, :2]).sum(axis=1)
    shown = np.where(refused, -1, shown)
    off = (u[:, 2] < np.asarray(off_prompt, dtype=float)) & ~refused
    gender = (u[:, 3] >= np.asarray(female, dtype=float)).astype(int)  # 0 female, 1 male
    age = (u[:, [4]] >= np.cumsum(np.atleast_2d(ages), axis=1)[:, :2]).sum(axis=1)
    return Outcomes(refused, shown, off, gender, age)


def image_uniforms(
    world_seed: int, generator: str, unit_id: str, variant: str, seed: int
) -> np.ndarray:
    """The uniforms of one image: shared by every prompt rendered for (unit, variant, seed), so
    debiasing configurations are compared on common random numbers (like a shared initial
    noise at one seed)."""
    rng = np.random.default_rng(
        derive_seed("world-image", world_seed, generator, str(unit_id), variant, int(seed))
    )
    return rng.random(N_UNIFORMS)


def class_name(index: int) -> str:
    return CLASSES[index]


def perceive_many(shown: np.ndarray, confusion: np.ndarray, u: np.ndarray) -> np.ndarray:
    """What a judge perceives (class index) given what each picture shows, by inverse CDF of the
    confusion row; the one perception rule of the simulated judges."""
    shown = np.asarray(shown, dtype=int)
    cum = np.cumsum(confusion, axis=1)[shown]
    return np.minimum(2, (np.asarray(u)[:, None] >= cum[:, :2]).sum(axis=1))


def rubric_scores(perceived: np.ndarray, spec, u: np.ndarray) -> np.ndarray:
    """round-half-up(N(rubric_mean[perceived], rubric_sd)) clipped to 0..5, from uniforms."""
    from scipy.stats import norm

    mean = np.array([spec.rubric_mean[c] for c in CLASSES])[np.asarray(perceived, dtype=int)]
    z = norm.ppf(np.clip(np.asarray(u, dtype=float), 1e-12, 1 - 1e-12))
    return np.clip(np.floor(mean + spec.rubric_sd * z + 0.5), 0, 5).astype(int)
