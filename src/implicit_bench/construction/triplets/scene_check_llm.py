"""The scene check's prompts (IMPLICIT-Bench App. C.1), written by an LLM: a subject-only
template, a second scene with the same subject, and a flag for heads that cannot be drawn alone
(events, places, first names: 54 of 300 in the paper). Variant hook ``scene_check_llm``
(``triplets.variant_hooks``), configured by the ``scene_check_prompts`` section; it adds
``prompt_scene2`` (+ ``prompt_scene2_check``), ``prompt_subject_llm`` and ``head_drawable``
(null when the answer was invalid). One cached JSON request per unit; an invalid answer is
counted and leaves the unit's columns null, never guessed.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import pandas as pd
from pydantic import BaseModel

from implicit_bench.backends.llm import InvalidCounter, LLMClient, chat_json_many
from implicit_bench.params import PositiveInt, StrictModel
from implicit_bench.runtime.failures import DEFAULT_MAX_FAILURE_RATE, FailureRate


class SceneCheckPromptParams(StrictModel):
    """params.yaml section ``scene_check_prompts``."""

    llm: str | None = None  # an entry of the top-level llms catalogue
    max_tokens: PositiveInt = 200
    max_failure_rate: FailureRate = DEFAULT_MAX_FAILURE_RATE


class SceneCheckAnswer(BaseModel):
    template: str
    second_scene: str
    drawable_alone: bool


def scene_check_template() -> str:
    return (
        resources.files("implicit_bench")
        .joinpath("prompts/second_scene_writer.txt")
        .read_text(encoding="utf-8")
    )


def llm_scene_prompts(
    units: pd.DataFrame, client: LLMClient, counter: InvalidCounter | None = None
) -> pd.DataFrame:
    """``units`` with prompt_scene2, prompt_scene2_check, prompt_subject_llm, head_drawable."""
    template = scene_check_template()
    requests = [
        [
            {
                "role": "user",
                "content": template.format(head=getattr(r, "head", None), neutral=r.prompt_neutral),
            }
        ]
        for r in units.itertuples(index=False)
    ]
    answers = chat_json_many(client, requests, SceneCheckAnswer, desc="triplets: scene check")
    scene2: list[str | None] = []
    checks: list[str | None] = []
    subjects: list[str | None] = []
    drawable: list[bool | None] = []
    for answer in answers:
        if counter is not None:
            counter.add(answer)
        if not answer.valid:
            scene2.append(None)
            checks.append(f"llm_invalid: {answer.error}")
            subjects.append(None)
            drawable.append(None)
            continue
        value = (
            answer.value
            if isinstance(answer.value, SceneCheckAnswer)
            else SceneCheckAnswer.model_validate(answer.value)
        )
        text = value.second_scene.strip()
        scene2.append(text or None)
        checks.append(None if text else "empty")
        subjects.append(value.template.strip() or None)
        drawable.append(bool(value.drawable_alone))
    return units.assign(
        prompt_scene2=scene2,
        prompt_scene2_check=checks,
        prompt_subject_llm=subjects,
        head_drawable=pd.array(drawable, dtype="boolean"),
    )


def scene_check_llm_hook(table: pd.DataFrame, params_path: str = "params.yaml") -> pd.DataFrame:
    """Variant hook ``scene_check_llm``: reads ``scene_check_prompts`` and its ``llms`` entry
    from ``params_path`` (list both in the triplets stage's params, as for ``negated_llm``)."""
    from implicit_bench.backends.llm import build_llm, llm_entry
    from implicit_bench.params import catalogue, load_params, section

    raw = load_params(params_path)
    params = section(raw, "scene_check_prompts", SceneCheckPromptParams, params_path)
    llms: dict[str, Any] = catalogue(raw, "llms", params_path)
    block = llm_entry(llms, params.llm, "scene_check_prompts.llm", params.max_tokens)
    counter = InvalidCounter("scene_check_prompts")
    out = llm_scene_prompts(table, build_llm(block, f"llms.{params.llm}"), counter)
    counter.check_calls(params.max_failure_rate)
    return out
