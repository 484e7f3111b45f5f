"""Every section of a params file validated at once, with the models the stages use
(``implicit-bench check`` and ``implicit-bench run``, before any model call): a value that
``dvc exp run -S`` or a profile sets wrong is one line naming the key here, not a failure
later in the stage that reads it (docs/errors.md, "Params checked at once")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from implicit_bench.params import (
    CATALOGUES,
    BaseParams,
    BootstrapParams,
    StrictModel,
    SubsetParams,
    catalogue,
    check_references,
    section,
)
from implicit_bench.runtime.cache_location import PARAMS_KEY, check_cache_dir

ANALYSIS_INHERIT = {"bootstrap": "bootstrap", "primary_order": "primary_order"}


def _sections() -> list[tuple[str, type[StrictModel], dict[str, Any]]]:
    """(section, model, ``section()`` keyword arguments) as the stages read them."""
    from implicit_bench.analysis.params import EvaluateParams, SelectParams
    from implicit_bench.audits.construction_ablation import ConstructionAblationParams
    from implicit_bench.audits.params import DiversityParams, JudgeAuditParams, NegationParams
    from implicit_bench.audits.study.stage import DiversityStudyParams
    from implicit_bench.backends.clip.params import ClipStageParams
    from implicit_bench.backends.judges.params import JudgeStageParams
    from implicit_bench.construction.kg.params import KGParams
    from implicit_bench.construction.sources.params import SourcesParams
    from implicit_bench.construction.triplets.cue_labels_llm import CueLabelPromptParams
    from implicit_bench.construction.triplets.hooks import NegationPromptParams
    from implicit_bench.construction.triplets.params import TripletsParams
    from implicit_bench.construction.triplets.scene_check_llm import SceneCheckPromptParams
    from implicit_bench.debias.stage import DebiasParams
    from implicit_bench.human_eval.bundle import HumanEvalParams
    from implicit_bench.release.benchmark import BenchmarkParams
    from implicit_bench.render.params import RenderParams
    from implicit_bench.report.stage import ReportParams
    from implicit_bench.world.params import WorldParams

    return [
        ("base", BaseParams, {}),
        ("bootstrap", BootstrapParams, {}),
        ("sources", SourcesParams, {}),
        ("kg", KGParams, {}),
        ("triplets", TripletsParams, {}),
        ("subset", SubsetParams, {}),
        ("benchmark", BenchmarkParams, {}),
        ("negation_prompts", NegationPromptParams, {}),
        ("scene_check_prompts", SceneCheckPromptParams, {}),
        ("cue_labels", CueLabelPromptParams, {}),
        ("world", WorldParams, {}),
        ("render", RenderParams, {"attach": {"generators": "configs"}}),
        ("judge", JudgeStageParams, {"attach": {"judges": "judges"}}),
        ("debias", DebiasParams, {"inherit": {"bootstrap": "scoring.bootstrap"}}),
        ("clip", ClipStageParams, {}),
        ("judge_audit", JudgeAuditParams, {"inherit": ANALYSIS_INHERIT}),
        ("negation", NegationParams, {"inherit": ANALYSIS_INHERIT}),
        ("diversity", DiversityParams, {"inherit": ANALYSIS_INHERIT}),
        ("diversity_study", DiversityStudyParams, {"inherit": {"bootstrap": "bootstrap"}}),
        ("select", SelectParams, {"inherit": ANALYSIS_INHERIT}),
        ("evaluate", EvaluateParams, {"inherit": ANALYSIS_INHERIT}),
        ("report", ReportParams, {}),
        ("human_eval", HumanEvalParams, {}),
        ("construction_ablation", ConstructionAblationParams, {}),
    ]


def validate_params(
    params: dict[str, Any], path: str | Path = "params.yaml", root: str | Path = "."
) -> None:
    """Validate every section ``params`` has with its stage's model, every catalogue entry
    with its backend's model, every catalogue name in use, and ``base.cache_dir``; the first
    problem is a one-line ``ConfigError`` naming the file and the key."""
    from implicit_bench.backends.judges import judge_params
    from implicit_bench.backends.llm import LLM_BACKENDS

    for kind in CATALOGUES:
        catalogue(params, kind, path)  # each entry a mapping under a safe name
    check_references(params, path)
    for name, block in catalogue(params, "llms", path).items():
        LLM_BACKENDS.validate(block, f"llms.{name}")
    for name, block in catalogue(params, "judges", path).items():
        judge_params(block, f"judges.{name}")
    for name, model, kwargs in _sections():
        if name in params or kwargs.get("attach"):
            checked = section(params, name, model, path, **kwargs)
            if name == "debias":
                checked.checked()
    cache = section(params, "base", BaseParams, path).cache_dir
    if cache:  # relative: against the working directory, as the stages read it (cache_location)
        check_cache_dir(Path(root) / str(cache), f"{path}: {PARAMS_KEY}")


__all__ = ["BaseParams", "validate_params"]
