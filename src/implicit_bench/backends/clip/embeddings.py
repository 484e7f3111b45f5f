"""Embeddings computed once per image (keyed by the image's sha256) and once per text."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from implicit_bench.backends.clip import ClipBackend
from implicit_bench.runtime.cache import DiskCache, cached_map, model_key


class CachedEmbedder:
    """Wraps a CLIP backend with a DiskCache: a re-run embeds nothing it embedded before."""

    def __init__(self, backend: ClipBackend, cache: DiskCache):
        self.backend = backend
        self.cache = cache
        self.computed_images = 0
        self.computed_texts = 0

    def _map(
        self, kind: str, items: list[str], compute, batch: int | None
    ) -> dict[str, np.ndarray]:
        identity = self.backend.identity()
        got = cached_map(
            self.cache,
            items,
            lambda item: model_key(kind, identity, item=item),
            compute,
            batch_size=batch,
            encode=lambda item, vec: np.asarray(vec).tolist(),
            decode=lambda entry: np.asarray(entry, np.float32),
        )
        return dict(zip(items, got.values, strict=True))

    def images(
        self, shas: Iterable[str], load: Callable[[str], object], batch: int = 64
    ) -> dict[str, np.ndarray]:
        """``sha256 -> embedding``; ``load(sha)`` returns a PIL image for an uncached one."""

        def embed(chunk: list[str]) -> list[np.ndarray]:
            self.computed_images += len(chunk)
            return list(self.backend.embed_images([load(sha) for sha in chunk]))

        return self._map("clip_image", list(dict.fromkeys(shas)), embed, batch)

    def texts(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        def embed(chunk: list[str]) -> list[np.ndarray]:
            self.computed_texts += len(chunk)
            return list(self.backend.embed_texts(chunk))

        return self._map("clip_text", list(dict.fromkeys(texts)), embed, None)
