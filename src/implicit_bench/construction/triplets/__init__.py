"""Stage 2 of the paper: KG units -> prompt triplets (see docs/triplets.md).

A writer is one module behind ``TRIPLET_WRITERS`` (lazy ``"module:function"``) with the
signature ``write(units, pairs, params) -> list[WriteResult]``; checks, statistics and the
subset are writer-independent, so a new writer or an extra-variant hook (e.g. negated prompts)
plugs in without touching them.

Extra variants (e.g. the negated prompts) are *variant hooks*: a function
``hook(table: pd.DataFrame) -> pd.DataFrame`` that adds columns (``prompt_negated_0_1``...) to
the triplets table, registered in ``VARIANT_HOOKS`` and switched on by listing its name in
``triplets.variant_hooks``; the stage applies them in order after the checks, before the
subset is taken.
"""

from __future__ import annotations

from implicit_bench.runtime.registry import Registry

TRIPLET_WRITERS: Registry = Registry("triplet writer")
TRIPLET_WRITERS.register("template", "implicit_bench.construction.triplets.template:write")
TRIPLET_WRITERS.register("llm", "implicit_bench.construction.triplets.llm_writer:write")

# name -> "module:function" taking and returning the triplets table (see above)
VARIANT_HOOKS: Registry = Registry("triplet variant hook")
VARIANT_HOOKS.register(
    "negated", "implicit_bench.construction.triplets.hooks:negated_hook"
)  # docs/audits.md
VARIANT_HOOKS.register("negated_llm", "implicit_bench.construction.triplets.hooks:negated_llm_hook")
# App. C.1: second scene, LLM template, head_drawable (docs/audits.md)
VARIANT_HOOKS.register(
    "scene_check_llm", "implicit_bench.construction.triplets.scene_check_llm:scene_check_llm_hook"
)
# App. C.1's cue labels of the scene check's neutral texts (after scene_check_llm)
VARIANT_HOOKS.register(
    "cue_labels_llm", "implicit_bench.construction.triplets.cue_labels_llm:cue_labels_llm_hook"
)
# App. C.1's direct arm (triplets from the sentence pair, no unit): docs/audits.md
VARIANT_HOOKS.register("direct", "implicit_bench.construction.triplets.direct:direct_hook")
VARIANT_HOOKS.register("direct_llm", "implicit_bench.construction.triplets.direct:direct_llm_hook")
