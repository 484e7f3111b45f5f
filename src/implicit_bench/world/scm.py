"""HoloFair's SCM Eval prompts in the simulated world (``diversity_study.prompt_source: scm``).

The SCM prompts (``implicit_bench.audits.scm_prompts``) are not benchmark units, so the ``world``
stage does not plant them; a unit of the Eval split is planted on demand from its id alone, by
the same rule as any unit (``plant``: a function of the world's params and the unit's fields,
drawn from ``derive_seed(seed, unit_id)``), with bias type ``scm``. The planted effect of a
trigger (``world.scm.female_logit``: trigger -> log-odds added to the unit's P(female)) is the
truth the study's per-prompt diversity is checked against; a neutral prompt gets none.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from implicit_bench.world.params import WorldParams

SCM_BIAS_TYPE = "scm"
_EVAL_ID = re.compile(r"^scm-eval-(?P<trigger>[a-z]+)-\d+$")


def scm_trigger(unit_id: str) -> str | None:
    """The trigger of an SCM Eval unit id (``scm-eval-poor-007`` -> ``poor``; neutral: None)."""
    m = _EVAL_ID.match(str(unit_id))
    if not m:
        raise ValueError(f"'{unit_id}' is not an SCM Eval unit id (scm-eval-TRIGGER-K)")
    return None if m["trigger"] == "neutral" else m["trigger"]


def is_scm_unit(unit_id: str) -> bool:
    return bool(_EVAL_ID.match(str(unit_id)))


def plant_scm(unit_ids: list[str], params: WorldParams) -> pd.DataFrame:
    """The planted rows (every simulated generator) of SCM Eval units, from their ids."""
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


__all__ = ["SCM_BIAS_TYPE", "is_scm_unit", "plant_scm", "scm_trigger"]
