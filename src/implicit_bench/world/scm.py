"""HoloFair's SCM Eval and Gen prompts in the simulated world (``diversity_study.prompt_source``
``scm`` and ``gen``).

The SCM prompts (``implicit_bench.audits.scm_prompts``) are not benchmark units, so the ``world``
stage does not plant them; a unit of the Eval split is planted on demand from its id alone, by
the same rule as any unit (``plant``: a function of the world's params and the unit's fields,
drawn from ``derive_seed(seed, unit_id)``), with bias type ``scm``. The planted effect of a
trigger (``world.scm.female_logit``: trigger -> log-odds added to the unit's P(female)) is the
truth the study's per-prompt diversity is checked against; a neutral prompt gets none.

A Gen-set unit (``scm-gen-RACE-AGE-GENDER``, C.3.2) is planted the same way, then its P(female)
set to ``world.scm.gen_follow`` when the prompt asks for a woman (1 - that for a man) and its
age groups to ``gen_follow`` for the group asked, the rest split equally: the truth the face
judge's reading of the Gen images is checked against.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from implicit_bench.world.params import WorldParams

SCM_BIAS_TYPE = "scm"
_EVAL_ID = re.compile(r"^scm-eval-(?P<trigger>[a-z]+)-\d+$")
_GEN_ID = re.compile(
    r"^scm-gen-(?P<race>[a-z]+)-(?P<age>young|middle|elderly)-(?P<gender>female|male)$"
)
_AGES = ("young", "middle", "elderly")


def scm_trigger(unit_id: str) -> str | None:
    """The trigger of an SCM Eval unit id (``scm-eval-poor-007`` -> ``poor``; neutral: None)."""
    m = _EVAL_ID.match(str(unit_id))
    if not m:
        raise ValueError(f"'{unit_id}' is not an SCM Eval unit id (scm-eval-TRIGGER-K)")
    return None if m["trigger"] == "neutral" else m["trigger"]


def is_gen_unit(unit_id: str) -> bool:
    return bool(_GEN_ID.match(str(unit_id)))


def is_scm_unit(unit_id: str) -> bool:
    """An SCM prompt planted on demand: an Eval or a Gen unit id."""
    return bool(_EVAL_ID.match(str(unit_id))) or is_gen_unit(unit_id)


def gen_request(unit_id: str) -> dict[str, str]:
    """The race, age group and gender a Gen unit id asks (``scm-gen-asian-young-female``)."""
    m = _GEN_ID.match(str(unit_id))
    if not m:
        raise ValueError(f"'{unit_id}' is not an SCM Gen unit id (scm-gen-RACE-AGE-GENDER)")
    return {"race": m["race"], "age_group": m["age"], "gender": m["gender"]}


def plant_scm(unit_ids: list[str], params: WorldParams) -> pd.DataFrame:
    """The planted rows (every simulated generator) of SCM Eval and Gen units, from their ids."""
    gen = [u for u in unit_ids if is_gen_unit(u)]
    evals = [u for u in unit_ids if not is_gen_unit(u)]
    frames = [f for f in (_plant_eval(evals, params), plant_gen(gen, params)) if len(f)]
    if not frames:
        return _plant_eval([], params)
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def plant_gen(unit_ids: list[str], params: WorldParams) -> pd.DataFrame:
    """Gen units planted as any SCM unit, then P(female) and the age groups set by the request
    (``world.scm.gen_follow``)."""
    if not unit_ids:
        return _plant_eval([], params)
    from implicit_bench.world.truth import plant

    asked = [gen_request(u) for u in unit_ids]

    units = pd.DataFrame(
        {
            "unit_id": [str(u) for u in unit_ids],
            "bias_type": SCM_BIAS_TYPE,
            "head": "person",
            "stereotype": "ordinary",
            "anti_stereotype": "unusual",
            "prompt_neutral": [
                f"a photo of a {a['race']} {a['age_group']} {a['gender']}" for a in asked
            ],
            "trigger": None,
        }
    )
    truth = plant(units, params)
    if truth.empty:
        return truth
    follow = params.scm.gen_follow
    by_id = dict(zip(units["unit_id"], asked, strict=True))
    wants = truth["unit_id"].map(by_id)
    truth["p_female"] = [follow if w["gender"] == "female" else 1 - follow for w in wants]
    for age in _AGES:
        truth[f"p_{age}"] = [follow if w["age_group"] == age else (1 - follow) / 2 for w in wants]
    truth["trigger"] = None
    return truth


def _plant_eval(unit_ids: list[str], params: WorldParams) -> pd.DataFrame:
    from implicit_bench.world.truth import plant

    triggers = [scm_trigger(u) for u in unit_ids]
    units = pd.DataFrame(
        {
            "unit_id": [str(u) for u in unit_ids],
            "bias_type": SCM_BIAS_TYPE,
            "head": "person",
            "stereotype": [t or "ordinary" for t in triggers],
            "anti_stereotype": [f"not {t}" if t else "unusual" for t in triggers],
            "prompt_neutral": "a photo of a person",
            "trigger": triggers,
        }
    )
    truth = plant(units, params)
    if truth.empty:
        return truth
    shift = truth["unit_id"].map(lambda u: params.scm.female_logit.get(scm_trigger(u) or "", 0.0))
    p = truth["p_female"].clip(1e-9, 1 - 1e-9)
    truth["p_female"] = 1 / (1 + np.exp(-(np.log(p / (1 - p)) + shift)))
    truth["trigger"] = truth["unit_id"].map(scm_trigger)
    return truth


__all__ = [
    "SCM_BIAS_TYPE",
    "gen_request",
    "is_gen_unit",
    "is_scm_unit",
    "plant_gen",
    "plant_scm",
    "scm_trigger",
]
