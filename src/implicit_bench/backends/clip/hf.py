"""transformers CLIP backend: ``CLIPModel`` + ``AutoProcessor``, hub id or local directory."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from implicit_bench._util.hashing import sha256_file, stable_hash
from implicit_bench._util.numerics import exact_threads
from implicit_bench.backends.clip.base import ClipParams, resolve_device


def model_fingerprint(ref: str, extra: object = None) -> str:
    """A hub id as given; a local directory by the hashes of its weights and configs."""
    path = Path(ref)
    if not path.is_dir():
        return stable_hash({"ref": ref, "extra": extra})
    files = sorted(
        p
        for p in path.iterdir()
        if p.is_file() and p.suffix in (".safetensors", ".bin", ".json", ".txt", ".pt")
    )
    return stable_hash({"files": {p.name: sha256_file(p) for p in files}, "extra": extra})


class TransformersClip:
    def __init__(self, config: ClipParams):
        import torch
        from transformers import AutoProcessor, CLIPModel

        self.config = config = config.model_copy(update={"device": resolve_device(config.device)})
        self._torch = torch
        self.dtype = getattr(torch, config.dtype)
        rev = {"revision": config.revision} if config.revision else {}
        self.model = (
            CLIPModel.from_pretrained(config.model, dtype=self.dtype, **rev)
            .to(config.device)
            .eval()
        )
        self.processor = AutoProcessor.from_pretrained(config.model, **rev)
        self._identity = {
            "backend": "transformers",
            "model": model_fingerprint(
                config.model, {"backend": "transformers", "dtype": config.dtype, **rev}
            ),
            **({"exact": True} if config.exact else {}),  # batched answers are other numbers
        }

    @property
    def _chunk(self) -> int:
        return 1 if self.config.exact else self.config.batch_size

    @property
    def _threads_on(self) -> str:
        """The device for ``exact_threads`` (a non-device when not exact: threads as they are)."""
        return self.config.device if self.config.exact else "unfixed"

    def identity(self) -> dict:
        return self._identity

    def _features(self, out) -> np.ndarray:
        feats = out if isinstance(out, self._torch.Tensor) else out.pooler_output
        feats = feats.float()
        feats = feats / feats.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        return feats.cpu().numpy().astype(np.float32)

    def embed_images(self, images: list) -> np.ndarray:
        chunks = []
        with self._torch.inference_mode(), exact_threads(self._threads_on):
            for start in range(0, len(images), self._chunk):
                batch = [im.convert("RGB") for im in images[start : start + self._chunk]]
                inputs = self.processor(images=batch, return_tensors="pt")
                pixels = inputs["pixel_values"].to(self.config.device, self.dtype)
                chunks.append(self._features(self.model.get_image_features(pixel_values=pixels)))
        return np.concatenate(chunks) if chunks else np.zeros((0, 0), np.float32)

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        chunks = []
        with self._torch.inference_mode(), exact_threads(self._threads_on):
            for start in range(0, len(texts), self._chunk):
                inputs = self.processor(
                    text=texts[start : start + self._chunk],
                    return_tensors="pt",
                    padding=True,
                    truncation=True,
                )
                inputs = {k: v.to(self.config.device) for k, v in inputs.items()}
                chunks.append(self._features(self.model.get_text_features(**inputs)))
        return np.concatenate(chunks) if chunks else np.zeros((0, 0), np.float32)
