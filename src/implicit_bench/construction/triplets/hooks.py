"""Extra prompt columns of the units table: negated prompts and the subject-only template.

Applied by the ``triplets`` stage as variant hooks (``triplets.variant_hooks: [negated]`` or
``[negated_llm]``, registered in ``implicit_bench.construction.triplets.VARIANT_HOOKS``) to the
triplets table
before the subset is taken, so ``data/interim/units.parquet`` carries ``prompt_negated_0_1``,
``prompt_negated_1_1`` and ``prompt_subject`` like the other prompt columns and render / judge treat
them as variants (list them in ``render.variants``). A prompt that could not be written or failed
its check is null, with the reason in ``prompt_<variant>_check``.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd

from implicit_bench.construction.triplets.negated import (
    NegatedPrompts,
    add_negated_prompts,
    deterministic_negated,
    deterministic_subject,
    tails,
)
from implicit_bench.params import PositiveInt, StrictModel
from implicit_bench.runtime.failures import DEFAULT_MAX_FAILURE_RATE, FailureRate


class NegationPromptParams(StrictModel):
    enabled: bool = True
    writer: Literal["deterministic", "llm"] = "deterministic"
    llm: str | None = None  # an entry of the top-level llms catalogue; writer llm only
    max_tokens: PositiveInt = 160  # answer length of one negation-writing call
    subject_template: bool = True
    max_failure_rate: FailureRate = (
        DEFAULT_MAX_FAILURE_RATE  # writer llm: more failed calls -> exit 1
    )


def extend_units(
    units: pd.DataFrame,
    params: NegationPromptParams,
    llms: dict[str, dict[str, Any]] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Units with the extra prompt columns, and a small report for the triplets metrics
    (``llms``: the top-level catalogue the LLM writer's ``llm`` names)."""
    if not params.enabled:
        return units, {"enabled": False}
    report: dict[str, Any] = {"enabled": True, "writer": params.writer}
    if params.writer == "llm":
        from implicit_bench.backends.llm import InvalidCounter, build_llm, llm_entry
        from implicit_bench.construction.triplets.negated_llm import llm_negated

        block = llm_entry(llms or {}, params.llm, "negation_prompts.llm", params.max_tokens)
        counter = InvalidCounter("negation_prompts")
        written = llm_negated(units, build_llm(block, f"llms.{params.llm}"), counter)
        counter.check_calls(params.max_failure_rate)
        report["llm_answers"] = counter.as_dict()
    else:
        written = {
            str(r.unit_id): deterministic_negated(
                r.prompt_neutral,
                r.prompt_stereotype,
                r.prompt_anti_stereotype,
                " and ".join(tails(getattr(r, "stereotype_tails", None), r.stereotype)),
                getattr(r, "head", None),
            )
            for r in units.itertuples(index=False)
        }
    out = add_negated_prompts(units, written)
    for column in ("prompt_negated_0_1", "prompt_negated_1_1"):
        checks = out[f"{column}_check"]
        report[column] = {
            "written": int(out[column].notna().sum()),
            "failed": {str(k): int(v) for k, v in checks.value_counts().items()},
        }
    if params.subject_template:
        heads = out["head"] if "head" in out.columns else [None] * len(out)
        subjects = [
            deterministic_subject(n, s, h)
            for n, s, h in zip(out["prompt_neutral"], out["prompt_stereotype"], heads, strict=True)
        ]
        out["prompt_subject"] = subjects
        out["prompt_subject_check"] = [None if s else "subject_not_found" for s in subjects]
        report["prompt_subject"] = {"written": int(sum(s is not None for s in subjects))}
    return out, report


def negated_hook(table: pd.DataFrame) -> pd.DataFrame:
    """Variant hook ``negated``: deterministic negated prompts + subject-only template."""
    return extend_units(table, NegationPromptParams())[0]


def negated_llm_hook(table: pd.DataFrame, params_path: str = "params.yaml") -> pd.DataFrame:
    """Variant hook ``negated_llm``: the LLM writer, configured by
    ``negation_prompts`` in params.yaml.

    A hook receives only the table, so it reads its section from ``params_path`` (the stage
    runs at the repository root); list ``negation_prompts`` and its ``llms`` entry in the
    triplets stage's params.
    """
    from implicit_bench.params import catalogue, load_params, section

    raw = load_params(params_path)
    params = section(raw, "negation_prompts", NegationPromptParams, params_path)
    return extend_units(
        table, params.model_copy(update={"writer": "llm"}), catalogue(raw, "llms", params_path)
    )[0]


__all__ = [
    "NegatedPrompts",
    "NegationPromptParams",
    "extend_units",
    "negated_hook",
    "negated_llm_hook",
]
