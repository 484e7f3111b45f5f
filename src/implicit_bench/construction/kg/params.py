"""The `kg` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from implicit_bench.construction.kg.minimal_pair import MinimalPairParams
from implicit_bench.params import NonNegInt, PositiveInt, StrictModel


class KGParams(StrictModel):
    extractor: Literal["minimal_pair", "llm"] = "minimal_pair"
    max_pairs: NonNegInt = 0  # 0 = all pairs; otherwise the first N (for trying an LLM cheaply)
    minimal_pair: MinimalPairParams = MinimalPairParams()
    llm: str | None = None  # an entry of the top-level llms catalogue, used when extractor = llm
    max_tokens: PositiveInt = 512  # answer length of one extraction call
