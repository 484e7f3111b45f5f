"""The params section ``debias`` (every debiasing stage validates it; a config module below the
entry modules ``debias.stage`` and ``debias.render.stage``, so the modules they call import it
without a circle)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from implicit_bench.backends.embedders import EmbedderParams
from implicit_bench.debias.configs import (
    TABLE_27,
    ConfigSpec,
    ScoringParams,
    bind_defaults,
    check_configs,
)
from implicit_bench.debias.retrieval import RetrievalTextParams
from implicit_bench.params import PositiveInt, SafeName, Seeds, StrictModel, SubsetParams
from implicit_bench.protocol.tables import UNITS_PATH
from implicit_bench.runtime.failures import DEFAULT_MAX_FAILURE_RATE, FailureRate


class DebiasParams(StrictModel):
    """params.yaml section ``debias``."""

    units: str = UNITS_PATH  # the bias KG (retrieval) and the prompt pool
    subset: SubsetParams = SubsetParams(
        max_units=6
    )  # units whose neutral prompts every configuration renders
    seeds: Seeds = [42, 1042, 2042]
    # the steering strength of every steering configuration that sets no ``alpha`` of its own
    # (the steer method's key: ``bind_defaults`` hands it to those configurations only)
    alpha: Annotated[float, Field(allow_inf_nan=False)] = 2.0
    generator: str = (
        "tiny"  # a generators catalogue entry: the model every configuration renders with
    )
    configs: dict[SafeName, ConfigSpec] = Field(
        default_factory=lambda: dict(TABLE_27), validate_default=True
    )
    embedder: EmbedderParams = EmbedderParams()
    retrieval: RetrievalTextParams = RetrievalTextParams()
    rewriter: str | None = (
        None  # the top-level ``llms`` entry that rewrites and writes the LLM pairs
    )
    rewrite_max_tokens: PositiveInt = 160
    max_failure_rate: FailureRate = DEFAULT_MAX_FAILURE_RATE  # rewrite: more failed calls -> exit 1
    pair_max_tokens: PositiveInt = 256
    scoring: ScoringParams = ScoringParams()

    @field_validator("configs")
    @classmethod
    def _non_empty(
        cls, value: dict[str, ConfigSpec], info: ValidationInfo
    ) -> dict[str, ConfigSpec]:
        if not value:
            raise ValueError("needs at least the unmodified configuration")
        # the keys above (alpha) are validated first: their values go to the methods that take them
        return {name: bind_defaults(spec, **info.data) for name, spec in value.items()}

    def checked(self) -> DebiasParams:
        check_configs(self.configs, self.scoring.unmodified)
        return self
