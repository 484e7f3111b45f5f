"""Embeddings computed once per image (keyed by the image's sha256) and once per text."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from implicit_bench.cache import DiskCache, cache_key
from implicit_bench.clip import ClipBackend


class CachedEmbedder:
    """Wraps a CLIP backend with a DiskCache: a re-run embeds nothing it embedded before."""

    def __init__(self, backend: ClipBackend, cache: DiskCache):
        self.backend = backend
        self.cache = cache
        self.computed_images = 0
        self.computed_texts = 0

    def _key(self, kind: str, item: str) -> str:
        return cache_key(kind=kind, model=self.backend.fingerprint(), item=item)

    def images(self, shas: Iterable[str], load: Callable[[str], object], batch: int = 64) -> dict[str, np.ndarray]:
        """``sha256 -> embedding``; ``load(sha)`` returns a PIL image for an uncached one."""
        shas = list(dict.fromkeys(shas))
        keys = {sha: self._key("clip_image", sha) for sha in shas}
        found = self.cache.get_many(keys.values())
        out = {sha: np.asarray(found[k], np.float32) for sha, k in keys.items() if k in found}
        todo = [sha for sha in shas if sha not in out]
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            vectors = self.backend.embed_images([load(sha) for sha in chunk])
            self.cache.put_many((keys[sha], vec.tolist()) for sha, vec in zip(chunk, vectors, strict=True))
            out.update(zip(chunk, vectors, strict=True))
            self.computed_images += len(chunk)
        return out

    def texts(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        texts = list(dict.fromkeys(texts))
        keys = {t: self._key("clip_text", t) for t in texts}
        found = self.cache.get_many(keys.values())
        out = {t: np.asarray(found[k], np.float32) for t, k in keys.items() if k in found}
        todo = [t for t in texts if t not in out]
        if todo:
            vectors = self.backend.embed_texts(todo)
            self.cache.put_many((keys[t], vec.tolist()) for t, vec in zip(todo, vectors, strict=True))
            out.update(zip(todo, vectors, strict=True))
            self.computed_texts += len(todo)
        return out
