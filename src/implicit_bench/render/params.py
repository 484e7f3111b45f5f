"""The `render` section of params.yaml."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, SerializeAsAny, field_validator
from pydantic_core import PydanticCustomError

from implicit_bench.backends.generators import (
    GeneratorParams,
    validate_config,
)
from implicit_bench.errors import ConfigError
from implicit_bench.params import SafeName, Seeds, StrictModel, UniqueNames, check_refs
from implicit_bench.protocol.schema import ALL_VARIANTS, VARIANTS
from implicit_bench.runtime.execution import ExecutorConfig
from implicit_bench.runtime.failures import DEFAULT_MAX_FAILURE_RATE, FailureRate


class RenderParams(StrictModel):
    """params.yaml section ``render``."""

    # the top-level generators catalogue (name -> backend config), attached by the stage's loader:
    # section(raw, "render", RenderParams, attach={"generators": "configs"}); each entry is
    # validated once, here, by its backend's own model (stages and workers get the typed config)
    configs: dict[SafeName, SerializeAsAny[GeneratorParams]]
    run: UniqueNames | None = None  # names of configs to render, each once; None: all
    seeds: Seeds = [42, 1042, 2042]
    variants: Annotated[list[str], Field(min_length=1)] = list(VARIANTS)

    @field_validator("configs", mode="before")
    @classmethod
    def _typed_configs(cls, configs: Any) -> Any:
        if not isinstance(configs, dict):
            return configs  # pydantic's own error names the type
        try:
            return {
                name: validate_config(config, where=f"generators.{name}")
                for name, config in configs.items()
            }
        except ConfigError as exc:
            raise PydanticCustomError(
                "generator_config", "{reason}", {"reason": str(exc)}
            ) from None

    @field_validator("variants")
    @classmethod
    def _known_variants(cls, variants: list[str]) -> list[str]:
        unknown = [v for v in variants if v not in ALL_VARIANTS]
        if unknown:
            raise ValueError(f"unknown variant(s) {unknown}; known: {', '.join(ALL_VARIANTS)}")
        repeated = sorted({v for v in variants if variants.count(v) > 1})
        if repeated:
            raise ValueError(f"repeated variant(s) {repeated}")
        return variants

    verify: bool = True  # re-hash stored bytes when resuming (a mismatch is re-rendered)
    retry_failed: bool = True  # try items that failed in an earlier run again
    # the share of a store's planned items that may fail before the stage exits non-zero (every
    # render stage: construction, benchmark phase, debiasing, diversity study; docs/errors.md)
    max_failure_rate: FailureRate = DEFAULT_MAX_FAILURE_RATE
    executor: ExecutorConfig = ExecutorConfig()
    executors: dict[SafeName, ExecutorConfig] = {}  # per-config override of ``executor``

    def selected(self) -> list[str]:
        names = self.run if self.run is not None else list(self.configs)
        check_refs(names, self.configs, "render.run", "generators")
        return names

    def executor_for(self, name: str) -> ExecutorConfig:
        return self.executors.get(name, self.executor)
