"""Stage 2 of the paper: KG units -> prompt triplets (see docs/triplets.md).

A writer is one module behind ``TRIPLET_WRITERS`` (lazy ``"module:function"``) with the
signature ``write(units, pairs, params) -> list[WriteResult]``; checks, statistics and the
subset are writer-independent, so a new writer or an extra-variant hook (e.g. negated prompts)
plugs in without touching them.
"""

from __future__ import annotations

from implicit_bench.registry import Registry

TRIPLET_WRITERS: Registry = Registry("triplet writer")
TRIPLET_WRITERS.register("template", "implicit_bench.triplets.template:write")
TRIPLET_WRITERS.register("llm", "implicit_bench.triplets.llm_writer:write")
