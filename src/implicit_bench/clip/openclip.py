"""open_clip backend (paper: ViT-L-14, pretrained "openai").

Needs ``open_clip_torch`` and a working torchvision (open_clip imports it at package import);
neither is available on this project's CPU machines, where the transformers backend serves
the same checkpoints (``openai/clip-vit-large-patch14``).
"""

from __future__ import annotations

import numpy as np

from implicit_bench.clip import ClipConfig
from implicit_bench.clip.hf import model_fingerprint


class OpenClip:
    def __init__(self, config: ClipConfig):
        import open_clip
        import torch

        self.config = config
        self._torch = torch
        model, _, preprocess = open_clip.create_model_and_transforms(
            config.model, pretrained=config.pretrained, device=config.device, precision="fp32" if config.dtype == "float32" else "fp16"
        )
        self.model = model.eval()
        self.preprocess = preprocess
        self.tokenizer = open_clip.get_tokenizer(config.model)
        self._fingerprint = model_fingerprint(
            config.pretrained or config.model, {"backend": "open_clip", "model": config.model, "dtype": config.dtype}
        )

    def fingerprint(self) -> str:
        return self._fingerprint

    def _norm(self, feats) -> np.ndarray:
        feats = feats.float()
        return (feats / feats.norm(dim=-1, keepdim=True).clamp_min(1e-12)).cpu().numpy().astype(np.float32)

    def embed_images(self, images: list) -> np.ndarray:
        chunks = []
        with self._torch.inference_mode():
            for start in range(0, len(images), self.config.batch_size):
                batch = self._torch.stack([self.preprocess(im.convert("RGB")) for im in images[start : start + self.config.batch_size]])
                chunks.append(self._norm(self.model.encode_image(batch.to(self.config.device))))
        return np.concatenate(chunks) if chunks else np.zeros((0, 0), np.float32)

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        chunks = []
        with self._torch.inference_mode():
            for start in range(0, len(texts), self.config.batch_size):
                tokens = self.tokenizer(texts[start : start + self.config.batch_size]).to(self.config.device)
                chunks.append(self._norm(self.model.encode_text(tokens)))
        return np.concatenate(chunks) if chunks else np.zeros((0, 0), np.float32)
