"""Audits of the benchmark's own numbers: judge order bias and gates, negated prompts,
attribute diversity, CLIP baselines (see docs/audits.md)."""
