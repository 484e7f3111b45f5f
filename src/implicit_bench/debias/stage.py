"""Entry module of the debiasing stages: the params section ``debias`` and what the five stage
scripts call, each from its purpose-named module.

Stages (see docs/debiasing.md): ``retrieve`` (``debias.retrieve``) -> ``rewrite``
(``debias.rewriting``) -> ``debias_render@<config>`` (``debias.render.stage`` through the
configuration's method, ``debias.methods``; a sub-package with its own entry module, so the
other stages do not depend on the render machinery) -> ``debias_judge@<config>`` (``debias.judging``)
-> ``debias_score`` (``debias.scoring``); the units and the subset: ``debias.units``; paths:
the table catalogue (``implicit_bench.tables``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator

from implicit_bench.debias.configs import TABLE_27, ConfigSpec, ScoringParams, check_configs
from implicit_bench.debias.judging import judge_stage_params
from implicit_bench.debias.retrieval import RetrievalTextParams, own_hits, read_retrieval
from implicit_bench.debias.retrieve import run_retrieval
from implicit_bench.debias.rewriting import needed_llm_work, resolve_llm_block, run_rewriting
from implicit_bench.debias.scoring import score_judgements
from implicit_bench.debias.units import KG_COLUMNS, subset_units, unit_for
from implicit_bench.embedders import EmbedderConfig
from implicit_bench.failures import DEFAULT_MAX_FAILURE_RATE, FailureRate
from implicit_bench.llm import build_llm
from implicit_bench.params import PositiveInt, SafeName, Seeds, StrictModel, SubsetParams
from implicit_bench.tables import DEBIAS_IMAGES_DIR as IMAGES_DIR
from implicit_bench.tables import DEBIAS_JUDGEMENTS_DIR as JUDGEMENTS_DIR
from implicit_bench.tables import LLM_PAIRS_PATH as PAIRS_PATH
from implicit_bench.tables import RETRIEVAL_PATH, REWRITES_PATH, UNITS_PATH


class DebiasParams(StrictModel):
    """params.yaml section ``debias``."""

    units: str = UNITS_PATH  # the bias KG (retrieval) and the prompt pool
    subset: SubsetParams = SubsetParams(max_units=6)  # units whose neutral prompts every configuration renders
    seeds: Seeds = [42, 1042, 2042]
    alpha: Annotated[float, Field(allow_inf_nan=False)] = 2.0
    generator: str = "tiny"  # a generators catalogue entry: the model every configuration renders with
    configs: dict[SafeName, ConfigSpec] = dict(TABLE_27)
    embedder: EmbedderConfig = EmbedderConfig()
    retrieval: RetrievalTextParams = RetrievalTextParams()
    rewriter: str | None = None  # the top-level ``llms`` entry that rewrites and writes the LLM pairs
    rewrite_max_tokens: PositiveInt = 160
    max_failure_rate: FailureRate = DEFAULT_MAX_FAILURE_RATE  # rewrite: more failed calls -> exit 1
    pair_max_tokens: PositiveInt = 256
    scoring: ScoringParams = ScoringParams()

    @field_validator("configs")
    @classmethod
    def _non_empty(cls, value: dict[str, ConfigSpec]) -> dict[str, ConfigSpec]:
        if not value:
            raise ValueError("needs at least the unmodified configuration")
        return value

    def checked(self) -> DebiasParams:
        check_configs(self.configs, self.scoring.unmodified)
        return self

    def rewriter_block(self, llms: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        """(where, params block) of the rewriter LLM in the top-level ``llms`` catalogue (its
        answer lengths are the use site's ``rewrite_max_tokens`` / ``pair_max_tokens``)."""
        from implicit_bench.llm import llm_entry

        return f"llms.{self.rewriter}", resolve_llm_block(llm_entry(llms, self.rewriter, "debias.rewriter"))


__all__ = [
    "IMAGES_DIR",
    "KG_COLUMNS",
    "JUDGEMENTS_DIR",
    "PAIRS_PATH",
    "RETRIEVAL_PATH",
    "REWRITES_PATH",
    "DebiasParams",
    "build_llm",
    "judge_stage_params",
    "needed_llm_work",
    "own_hits",
    "read_retrieval",
    "resolve_llm_block",
    "run_retrieval",
    "run_rewriting",
    "score_judgements",
    "subset_units",
    "unit_for",
]
