"""The `triplets` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from implicit_bench.construction.triplets.template import TemplateWriterParams
from implicit_bench.params import PositiveInt, StrictModel


class TripletsParams(StrictModel):
    writer: Literal["template", "llm"] = "template"
    template: TemplateWriterParams = TemplateWriterParams()
    llm: str | None = None  # an entry of the top-level llms catalogue, used when writer = llm
    max_tokens: PositiveInt = 160  # answer length of one triplet-writing call
    variant_hooks: list[str] = []  # names in triplets.VARIANT_HOOKS, applied in order
