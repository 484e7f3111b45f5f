"""IMPLICIT-Bench E.4 step 4: at least one blind judge from outside the Qwen and Gemma families.

The paper selected its units with Qwen3-VL and Gemma-4 rubric scores, so its usage guideline
asks for the label-blind A/B/C question with at least one judge of another family. A judge's
family is read from its model id (the catalogue entry's ``model``, or the judgements table's
``model`` column): the id, lower-cased, contains ``qwen`` or ``gemma``. Anything else (GPT-5.4,
Claude, the simulated world's ``sim:judge_c``, CLIP) counts as outside. ``implicit-bench check``
warns (it does not fail) and ``judge_audit`` records the check (``blind_judge_families``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SELECTION_FAMILIES: tuple[str, ...] = ("qwen", "gemma")  # the families used for selection


def model_family(model: str | None) -> str | None:
    """``"qwen"`` / ``"gemma"`` when the model id names a selection family, else None."""
    text = str(model or "").lower()
    return next((f for f in SELECTION_FAMILIES if f in text), None)


def blind_family_check(models: Mapping[str, str | None]) -> dict[str, Any]:
    """``{judge name: model id}`` of the blind judges -> the E.4 step-4 record.

    ``ok``: at least one judge is outside the selection families (no judge: not ok)."""
    judges = {
        str(name): {"model": None if model is None else str(model), "family": model_family(model)}
        for name, model in sorted(models.items())
    }
    outside = [name for name, j in judges.items() if j["family"] is None]
    ok = bool(outside)
    return {
        "rule": "E.4 step 4: at least one blind judge outside the Qwen and Gemma families",
        "selection_families": list(SELECTION_FAMILIES),
        "judges": judges,
        "outside": outside,
        "ok": ok,
        "warning": None
        if ok
        else (
            "no blind judge outside the Qwen and Gemma families (the families used for "
            f"selection): {', '.join(judges) or 'no blind judge'}; add one (paper E.4 step 4)"
        ),
    }


def blind_models_from_params(params: Mapping[str, Any]) -> dict[str, str | None]:
    """The blind task's judges (``judge.tasks.blind.judges``; null: every ``judges`` entry; no
    ``blind`` task: none) -> their catalogue model ids."""
    catalogue = params.get("judges") or {}
    tasks = (params.get("judge") or {}).get("tasks") or {}  # raw: `check` reads any params file
    if not isinstance(tasks, Mapping) or "blind" not in tasks:
        names: list[str] = []  # the blind question is not asked
    else:
        chosen = (tasks["blind"] or {}).get("judges")  # judge.py: null = every judges entry
        names = list(catalogue) if chosen is None else list(chosen)
    return {
        n: (catalogue.get(n) or {}).get("model") if isinstance(catalogue.get(n), Mapping) else None
        for n in names
    }


def blind_models_from_judgements(judgements: Any) -> dict[str, str | None]:
    """Blind rows of a judgements table -> ``{judge: model}`` (the first model id seen). Only
    judges asked the A/B/C question count: their rows carry an option order; the CLIP blind
    judge's rows have none (it compares two texts, no options)."""
    blind = judgements[judgements["task"] == "blind"]
    if "order" in blind.columns:
        blind = blind[blind["order"].notna()]
    if "model" not in blind.columns:
        return dict.fromkeys(sorted(blind["judge"].astype(str).unique()))
    out: dict[str, str | None] = {}
    for judge, model in zip(blind["judge"].astype(str), blind["model"], strict=True):
        if judge not in out or out[judge] is None:
            out[judge] = None if model is None or model != model else str(model)
    return out
