"""Checks before a run: endpoints, parallelism, dialects, stage inputs, and every params section
at once (``params_check``: above the packages whose params models it validates)."""
