"""Method ``rewrite``: the LLM's rewrite of the neutral prompt (Table 27, exp 1-3).

The rewrites come from the rewrite stage (``data/processed/rewrites.parquet``, one per unit and
stereotype information); a unit whose rewrite is invalid or missing is not rendered (counted).
"""

from __future__ import annotations

from typing import Literal

import pandas as pd

from implicit_bench.debias.methods import DebiasMethod, LlmWork, MethodInputs, Prepared
from implicit_bench.params import StrictModel


class RewriteParams(StrictModel):
    # the stereotype information the rewriter gets: none, the unit retrieved with the own unit
    # removed from the KG, or the own unit
    info: Literal["none", "removed", "own"] = "none"


class Rewrite(DebiasMethod):
    name = "rewrite"
    Params = RewriteParams

    def label(self, params: RewriteParams) -> str:
        return "Rewrite"

    def llm_work(self, params: RewriteParams) -> LlmWork:
        return LlmWork(rewrite=params.info)

    def prepare(self, params: RewriteParams, inputs: MethodInputs) -> Prepared:
        out = super().prepare(params, inputs)
        rewrites = inputs.rewrites
        rows = rewrites[rewrites["info"] == params.info] if rewrites is not None else pd.DataFrame()
        valid = {r.unit_id: r.prompt for r in rows.itertuples() if bool(r.valid)}
        for unit in list(out.prompts):
            if unit in valid:
                out.prompts[unit] = valid[unit]
            else:
                out.skipped["rewrite invalid or missing"] += 1
                del out.prompts[unit]
        return out


METHOD = Rewrite
