"""Where the debiasing stages keep their tables and image stores (docs/debiasing.md)."""

from __future__ import annotations

RETRIEVAL_PATH = "data/processed/retrieval.parquet"
REWRITES_PATH = "data/processed/rewrites.parquet"
PAIRS_PATH = "data/processed/llm_pairs.parquet"
# data/images is the render stage's output directory (one DVC out), so the debiasing stores
# live apart: one DVC out per configuration.
IMAGES_DIR = "data/debias/images"
JUDGEMENTS_DIR = "data/debias/judgements"
