"""Planting the truth: per (unit, generator) probabilities drawn from ``WorldParams``.

``plant(units, params)`` -> one row per unit and simulated generator with the neutral
probabilities (``p_s, p_a, p_n``), explicit-request success, every variant's class
probabilities (``<variant>_s|_a|_neither``), refusal and off-prompt probabilities, face
attribute probabilities, the texts a picture shows (``shown_s``, ``shown_a``, ``head``) and
``truly_leans`` (docs/world.md). Units are drawn from ``derive_seed(seed, unit_id)`` so a unit's
truth does not depend on which other units are planned.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.hashing import derive_seed
from implicit_bench.protocol.prompt_fields import unit_fields
from implicit_bench.world.params import CLASSES, WorldParams
from implicit_bench.world.sampling import (
    VARIANTS,
    anti_success,
    template_probs,
    tilt,
    variant_probs,
)


def _unit_draws(unit_id: str, bias_type: str, params: WorldParams) -> dict[str, Any]:
    bt = params.bias_type(bias_type)
    rng = np.random.default_rng(derive_seed("world-unit", params.seed, str(unit_id)))
    alpha = bt.concentration * np.array([bt.stereo, bt.anti, 1 - bt.stereo - bt.anti])
    base = rng.dirichlet(alpha)
    f = params.faces
    female = rng.beta(f.female * f.concentration, (1 - f.female) * f.concentration)
    ages = rng.dirichlet(f.concentration * np.asarray(f.ages) / sum(f.ages))
    st = params.scene_template
    shift = np.random.default_rng(
        derive_seed("world-scene-template", params.seed, str(unit_id))
    ).normal(st.shift_mean, st.shift_sd)
    da = params.direct_arm
    direct = np.random.default_rng(
        derive_seed("world-direct-arm", params.seed, str(unit_id))
    ).normal(da.shift_mean, da.shift_sd)
    return {
        "base": base,
        "female": float(female),
        "ages": ages,
        "template_shift": float(shift),
        "direct_shift": float(direct),
    }


_PHOTO_OF = re.compile(r"^\s*(?:an?\s+)?(?:photo|picture|image)\s+of\s+", re.IGNORECASE)


def subject_of(prompt_neutral: str) -> str:
    """The subject a picture of the neutral prompt shows: the prompt without its leading
    "a photo of" ("a photo of a nurse" -> "a nurse"); the alignment judge looks for it."""
    return _PHOTO_OF.sub("", str(prompt_neutral)).strip() or str(prompt_neutral).strip()


def truly_leans(probs: dict[str, np.ndarray]) -> np.ndarray:
    """Noiseless selection: the neutral image's expected position on s (+1) vs a (-1) is closer
    to the stereotype image's than to the anti-stereotype image's."""
    pos = {v: p[:, 0] - p[:, 1] for v, p in probs.items()}
    return np.abs(pos["neutral"] - pos["anti_stereotype"]) > np.abs(
        pos["neutral"] - pos["stereotype"]
    )


def plant(units: pd.DataFrame, params: WorldParams) -> pd.DataFrame:
    """One row per (generator, unit): the planted truth (module docstring). The per-unit draws
    and prompt fields are computed once per unit and the rows built column by column."""
    records = units.to_dict("records")
    ids = [str(u["unit_id"]) for u in records]
    draws = [_unit_draws(u, str(r["bias_type"]), params) for u, r in zip(ids, records, strict=True)]
    fields = [unit_fields(r) for r in records]
    types = [str(r["bias_type"]) for r in records]
    const = {
        "unit_id": ids,
        "bias_type": types,
        "head": [f["head"] for f in fields],
        "subject": [subject_of(r["prompt_neutral"]) for r in records],
        "shown_s": [f["stereotype_tails"] for f in fields],
        "shown_a": [f["anti_stereotype_tails"] for f in fields],
        "stereotype": [str(r["stereotype"]) for r in records],
        "anti_stereotype": [str(r["anti_stereotype"]) for r in records],
        "prompt_neutral": [str(r["prompt_neutral"]) for r in records],
    }
    refusal = np.array([params.bias_type(t).refusal for t in types], dtype=float)
    base = np.stack([d["base"] for d in draws]) if ids else np.zeros((0, 3))
    female = np.array([d["female"] for d in draws], dtype=float)
    ages = np.stack([d["ages"] for d in draws]) if ids else np.zeros((0, 3))
    shift = np.array([d["template_shift"] for d in draws], dtype=float)
    direct = np.array([d["direct_shift"] for d in draws], dtype=float)
    frames = []
    for gen_name, gen in params.generators.items():
        neutral = tilt(base, gen.bias) if ids else base
        succ_s = np.full(len(ids), params.success.stereo)
        succ_a = anti_success(neutral[:, 0], params)
        probs = {v: variant_probs(neutral, succ_s, succ_a, v, params) for v in VARIANTS}
        if ids:  # App. C.1: the template drawn apart from the scene (world.scene_template)
            probs["subject"] = template_probs(neutral, shift, params.scene_template.neither)
            probs["direct_neutral"] = tilt(neutral, direct)  # App. C.1's direct arm
        leans = truly_leans(probs) if ids else np.zeros(0, bool)
        cols: dict[str, Any] = {
            "unit_id": const["unit_id"],
            "bias_type": const["bias_type"],
            "generator": [gen_name] * len(ids),
        }
        cols |= {k: const[k] for k in list(const)[2:]}
        cols |= {
            "p_s": neutral[:, 0],
            "p_a": neutral[:, 1],
            "p_n": neutral[:, 2],
            "succ_s": succ_s,
            "succ_a": succ_a,
            "refusal": refusal if gen.refuses else np.zeros(len(ids)),
            "off_prompt": np.full(len(ids), float(gen.off_prompt)),
            "p_female": female,
            "p_young": ages[:, 0],
            "p_middle": ages[:, 1],
            "p_elderly": ages[:, 2],
            "truly_leans": np.asarray(leans, dtype=bool),
            "template_shift": shift,
            "direct_shift": direct,
        }
        for v in VARIANTS:
            for j, c in enumerate(CLASSES):
                cols[f"{v}_{c}"] = np.asarray(probs[v][:, j], dtype=float)
        frames.append(pd.DataFrame(cols))
    if not frames or not ids:
        return pd.DataFrame([])  # no rows, no columns (as a frame of no records)
    return pd.concat(frames, ignore_index=True)


def variant_matrix(truth: pd.DataFrame, variant: str) -> np.ndarray:
    """(n, 3) class probabilities of ``variant`` for the rows of ``truth``."""
    return truth[[f"{variant}_{c}" for c in CLASSES]].to_numpy(dtype=float)


def world_json(params: WorldParams) -> dict[str, Any]:
    """The model behaviours the simulated backends read (``data/world/world.json``)."""
    # the selection pools (When the Judge Acts) and the evaluation set (NegT2IBench) are read
    # from params by judge_audit, negation and recovery, never by the image backends: left out,
    # so they do not change the world's fingerprint; so is ``units`` (which units are planted:
    # a unit's truth does not depend on it, and a pilot growing to the whole set keeps its images)
    dumped = params.model_dump(mode="json", exclude={"selection", "negprobe", "negt2i", "units"})
    if params.direct_arm == type(params.direct_arm)():
        # the direct arm at its defaults leaves the world's fingerprint (every stored image and
        # cached answer) as it was before the arm existed; set, it changes it
        dumped.pop("direct_arm")
    if params.scm.gen_follow == type(params.scm)().gen_follow:
        # the Gen set's follow rate at its default: the fingerprint stays as before it existed
        dumped["scm"].pop("gen_follow")
    return {"simulated": True, "params": dumped}
