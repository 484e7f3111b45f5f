"""Table 18 statistics: kept here for the triplets stage; the code is
``implicit_bench.protocol.prompt_stats`` (outside this package, so the select and evaluate stages
can report them on the selected units without importing the triplet writers)."""

from implicit_bench.protocol.prompt_stats import VARIANT_COLUMNS, prompt_stats, text_stats

__all__ = ["VARIANT_COLUMNS", "prompt_stats", "text_stats"]
