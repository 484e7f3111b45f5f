"""Comparing runs: ``implicit-bench diff`` (headline changes with intervals and a verdict),
``implicit-bench exps`` (the headline table across DVC experiments), the multi-run leaderboard
of ``implicit-bench report`` and the per-run results file (docs/compare.md)."""
