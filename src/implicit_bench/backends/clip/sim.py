"""Backend ``sim`` of the CLIP registry: image embeddings of what a picture shows.

An image is read from its pixels (``picture.read``); its embedding is the MiniLM embedding of
"a photo of {attribute}" (or of its head word when it shows no attribute) plus planted noise
(``world.clip.noise`` times a standard normal vector / sqrt(D), drawn from the pixels' hash),
L2-normalised. Texts are embedded by the same MiniLM model, so the CLIP lean and the CLIP
blind judge see the planted world through a noisy lens. An unreadable image embeds as noise.
"""

from __future__ import annotations

import hashlib

import numpy as np

from implicit_bench._util.hashing import derive_seed
from implicit_bench.backends.clip.base import ClipParams
from implicit_bench.backends.embedders import l2_normalise
from implicit_bench.world.model import load_world
from implicit_bench.world.picture import read


def shown_text(attribute: str, head: str) -> str:
    if attribute:
        return f"a photo of {attribute}"
    return f"a photo of {head}" if head else "an empty picture"


class SimClip:
    def __init__(self, config: ClipParams):
        self.config = config
        self.world = load_world(config.world)
        self.embedder = self.world.embedder()

    def identity(self) -> dict:
        return {"backend": "sim", "model": self.config.model, "world": self.world.fingerprint}

    def embed_images(self, images: list) -> np.ndarray:
        texts, seeds = [], []
        for image in images:
            pixels = np.asarray(image.convert("RGB"))
            shown = read(image)
            texts.append(shown_text(shown.attribute, shown.head) if shown else "")
            seeds.append(derive_seed("sim-clip", hashlib.sha256(pixels.tobytes()).hexdigest()))
        base = self.embedder.embed([t or "an empty picture" for t in texts]).astype(np.float64)
        dim = base.shape[1]
        out = np.empty_like(base)
        for i, (text, seed) in enumerate(zip(texts, seeds, strict=True)):
            z = np.random.default_rng(seed).standard_normal(dim) / np.sqrt(dim)
            out[i] = (base[i] if text else 0.0) + self.world.params.clip.noise * z
        return l2_normalise(out.astype(np.float32))

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        return l2_normalise(self.embedder.embed(list(texts)).astype(np.float32))
