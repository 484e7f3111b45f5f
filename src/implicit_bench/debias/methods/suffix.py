"""Method ``suffix``: append a fixed instruction to the neutral prompt (a prompt-only baseline).

The classic baseline of ethical interventions (Bansal et al., EMNLP 2022: "... if all
individuals can be a lawyer irrespective of their gender"): no model access, no unit
information, the same words after every prompt.
"""

from __future__ import annotations

from pydantic import Field

from implicit_bench.debias.methods import DebiasMethod, MethodInputs, Prepared
from implicit_bench.params import StrictModel


class SuffixParams(StrictModel):
    suffix: str = Field(min_length=1)  # appended after one space


class PromptSuffix(DebiasMethod):
    name = "suffix"
    Params = SuffixParams

    def label(self, params: SuffixParams) -> str:
        return "Prompt suffix"

    def prepare(self, params: SuffixParams, inputs: MethodInputs) -> Prepared:
        out = super().prepare(params, inputs)
        out.prompts = {
            unit: f"{prompt.rstrip()} {params.suffix}" for unit, prompt in out.prompts.items()
        }
        return out


METHOD = PromptSuffix
