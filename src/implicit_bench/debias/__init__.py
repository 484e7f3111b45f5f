"""Debiasing with KG units (paper Section 5): retrieval, prompt rewriting, embedding steering
and the composite score. See docs/debiasing.md."""
