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

from implicit_bench.hashing import derive_seed
from implicit_bench.prompt_fields import unit_fields
from implicit_bench.world.params import CLASSES, WorldParams
from implicit_bench.world.sampling import VARIANTS, anti_success, tilt, variant_probs


def _unit_draws(unit_id: str, bias_type: str, params: WorldParams) -> dict[str, Any]:
    bt = params.bias_type(bias_type)
    rng = np.random.default_rng(derive_seed("world-unit", params.seed, str(unit_id)))
    alpha = bt.concentration * np.array([bt.stereo, bt.anti, 1 - bt.stereo - bt.anti])
    base = rng.dirichlet(alpha)
    f = params.faces
    female = rng.beta(f.female * f.concentration, (1 - f.female) * f.concentration)
    ages = rng.dirichlet(f.concentration * np.asarray(f.ages) / sum(f.ages))
    return {"base": base, "female": float(female), "ages": ages}


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
    rows = []
    draws = {}
    for unit in units.to_dict("records"):
        draws[str(unit["unit_id"])] = (
            _unit_draws(str(unit["unit_id"]), str(unit["bias_type"]), params),
            unit,
        )
    for gen_name, gen in params.generators.items():
        ids = list(draws)
        base = np.stack([draws[u][0]["base"] for u in ids]) if ids else np.zeros((0, 3))
        neutral = tilt(base, gen.bias) if ids else base
        succ_s = np.full(len(ids), params.success.stereo)
        succ_a = anti_success(neutral[:, 0], params)
        probs = {v: variant_probs(neutral, succ_s, succ_a, v, params) for v in VARIANTS}
        leans = truly_leans(probs) if ids else np.zeros(0, bool)
        for i, unit_id in enumerate(ids):
            d, unit = draws[unit_id]
            fields = unit_fields(unit)
            bt = params.bias_type(str(unit["bias_type"]))
            row: dict[str, Any] = {
                "unit_id": unit_id,
                "bias_type": str(unit["bias_type"]),
                "generator": gen_name,
                "head": fields["head"],
                "subject": subject_of(unit["prompt_neutral"]),
                "shown_s": fields["stereotype_tails"],
                "shown_a": fields["anti_stereotype_tails"],
                "stereotype": str(unit["stereotype"]),
                "anti_stereotype": str(unit["anti_stereotype"]),
                "prompt_neutral": str(unit["prompt_neutral"]),
                "p_s": neutral[i, 0],
                "p_a": neutral[i, 1],
                "p_n": neutral[i, 2],
                "succ_s": succ_s[i],
                "succ_a": succ_a[i],
                "refusal": bt.refusal if gen.refuses else 0.0,
                "off_prompt": gen.off_prompt,
                "p_female": d["female"],
                "p_young": d["ages"][0],
                "p_middle": d["ages"][1],
                "p_elderly": d["ages"][2],
                "truly_leans": bool(leans[i]),
            }
            for v in VARIANTS:
                for j, c in enumerate(CLASSES):
                    row[f"{v}_{c}"] = float(probs[v][i, j])
            rows.append(row)
    return pd.DataFrame(rows)


def variant_matrix(truth: pd.DataFrame, variant: str) -> np.ndarray:
    """(n, 3) class probabilities of ``variant`` for the rows of ``truth``."""
    return truth[[f"{variant}_{c}" for c in CLASSES]].to_numpy(dtype=float)


def world_json(params: WorldParams) -> dict[str, Any]:
    """The model behaviours the simulated backends read (``data/world/world.json``)."""
    return {"simulated": True, "params": params.model_dump(mode="json")}
