"""Text embedders behind a registry, with every embedding cached.

``build_embedder(config)`` returns a ``CachedEmbedder``: ``embed(texts) -> float32 array``
(one row per text, as the backend returns it; normalisation is the caller's choice). The
cache key holds the backend, the model reference (and, for the HTTP backend, its ``base_url``:
two servers may serve different weights under one name) and the text, so re-runs cost nothing
and a different model never reuses another's vectors. A vector with NaN or infinity is an
error and is never cached. The ``openai`` backend is streamed: ``concurrency`` batches in flight.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Sequence

import numpy as np

from implicit_bench.backends.embedders.base import (  # noqa: F401 - re-exported
    MINILM_PACKAGE,
    Embedder,
    EmbedderParams,
    resolve_model,
)
from implicit_bench.runtime.cache import DiskCache, cached_map, model_key
from implicit_bench.runtime.registry import Registry

EMBEDDERS: Registry[Embedder] = Registry("embedder", places=("debias.embedder",))
EMBEDDERS.register(
    "sentence_transformers",
    "implicit_bench.backends.embedders.st:SentenceTransformerEmbedder",
    "local",
)
EMBEDDERS.register("openai", "implicit_bench.backends.embedders.openai_http:OpenAIEmbedder", "http")


def _encode(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _decode(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4")


class CachedEmbedder:
    """Looks each text up in the cache; embeds the misses in batches; stores them at once."""

    def __init__(self, config: EmbedderParams, backend: Embedder | None = None):
        self.config = config
        self._backend = backend
        self.cache = DiskCache(config.cache)
        self.calls = 0
        self._lock = threading.Lock()

    @property
    def backend(self) -> Embedder:
        if self._backend is None:
            self._backend = EMBEDDERS.create(self.config.backend, self.config)
        return self._backend

    def key(self, text: str) -> str:
        # The model reference as written in params (a hub id, a directory, or the packaged
        # MiniLM), not a machine-specific resolved path.
        rev = {"revision": self.config.revision} if self.config.revision else {}
        if self.config.dtype:  # another precision gives other bits (None: the model's own)
            rev["dtype"] = self.config.dtype
        if EMBEDDERS.transport(self.config.backend) == "http" and self.config.base_url:
            rev["base_url"] = self.config.base_url.rstrip("/")
        return model_key(
            "embedding",
            {"backend": self.config.backend, "model": self.config.model, **rev},
            text=text,
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)

        def compute(chunk: list[str]) -> list[np.ndarray]:
            vectors = np.asarray(self.backend.embed(chunk), dtype=np.float32)
            with self._lock:
                self.calls += 1
            if vectors.shape[0] != len(chunk):
                raise RuntimeError(
                    f"embedder returned {vectors.shape[0]} vectors for {len(chunk)} texts"
                )
            if not np.isfinite(vectors).all():  # every backend: a NaN vector is never cached
                raise RuntimeError(
                    f"embedder {self.config.backend}:{self.config.model} returned NaN/inf values"
                )
            return [_decode(_encode(v)) for v in vectors]  # exactly what a cache hit returns

        http = EMBEDDERS.transport(self.config.backend) == "http"
        streams = self.config.concurrency if http else 1
        got = cached_map(
            self.cache,
            texts,
            self.key,
            compute,
            batch_size=self.config.batch_size,
            encode=lambda text, vector: _encode(vector),
            decode=_decode,
            concurrency=streams,
        )
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack(got.values)


def build_embedder(config: EmbedderParams) -> CachedEmbedder:
    return CachedEmbedder(config)


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError("cannot L2-normalise a zero embedding")
    return matrix / norms
