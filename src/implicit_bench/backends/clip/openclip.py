"""open_clip backend (paper alternative: ViT-L-14, pretrained "openai").

``model`` is an open_clip architecture name (``ViT-L-14``, with ``pretrained`` a tag or a
checkpoint path), an ``hf-hub:org/repo`` id, or a local directory in open_clip's hub layout
(``open_clip_config.json`` + weights; written as ``local-dir:PATH`` or as the bare path), as the
tiny profile's ``models/tiny/openclip``. Needs ``open_clip_torch`` and torchvision (both in the
project's environment). Images and token ids are moved to the model's device, and images cast
to its dtype (open_clip's ``precision``: fp32, fp16 or bf16).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from implicit_bench._util.numerics import exact_threads
from implicit_bench.backends.clip.base import ClipParams, resolve_device
from implicit_bench.backends.clip.hf import model_fingerprint

PRECISION = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
LOCAL_DIR = "local-dir:"


def model_name(ref: str) -> str:
    """A local directory (bare path) -> open_clip's ``local-dir:`` form; anything else as is."""
    if not ref.startswith((LOCAL_DIR, "hf-hub:")) and Path(ref).is_dir():
        return LOCAL_DIR + ref
    return ref


class OpenClip:
    def __init__(self, config: ClipParams):
        import open_clip
        import torch

        self.config = config = config.model_copy(update={"device": resolve_device(config.device)})
        self._torch = torch
        self.dtype = getattr(torch, config.dtype)
        name = model_name(config.model)
        model, _, preprocess = open_clip.create_model_and_transforms(
            name,
            pretrained=config.pretrained,
            device=config.device,
            precision=PRECISION[config.dtype],
        )
        self.model = model.eval()
        self.preprocess = preprocess
        self.tokenizer = open_clip.get_tokenizer(name)
        local = name.removeprefix(LOCAL_DIR) if name.startswith(LOCAL_DIR) else None
        fingerprint = model_fingerprint(
            local or config.pretrained or config.model,
            {
                "backend": "open_clip",
                "model": config.model,
                "pretrained": config.pretrained,
                "dtype": config.dtype,
            },
        )
        self._identity = {
            "backend": "open_clip",
            "model": fingerprint,
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

    def _norm(self, feats) -> np.ndarray:
        feats = feats.float()
        return (
            (feats / feats.norm(dim=-1, keepdim=True).clamp_min(1e-12))
            .cpu()
            .numpy()
            .astype(np.float32)
        )

    def embed_images(self, images: list) -> np.ndarray:
        chunks = []
        with self._torch.inference_mode(), exact_threads(self._threads_on):
            for start in range(0, len(images), self._chunk):
                batch = self._torch.stack(
                    [
                        self.preprocess(im.convert("RGB"))
                        for im in images[start : start + self._chunk]
                    ]
                )
                pixels = batch.to(device=self.config.device, dtype=self.dtype)
                chunks.append(self._norm(self.model.encode_image(pixels)))
        return np.concatenate(chunks) if chunks else np.zeros((0, 0), np.float32)

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        chunks = []
        with self._torch.inference_mode(), exact_threads(self._threads_on):
            for start in range(0, len(texts), self._chunk):
                tokens = self.tokenizer(texts[start : start + self._chunk]).to(self.config.device)
                chunks.append(self._norm(self.model.encode_text(tokens)))
        return np.concatenate(chunks) if chunks else np.zeros((0, 0), np.float32)
