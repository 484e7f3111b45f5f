"""sentence-transformers backend: any model loadable by ``SentenceTransformer`` (hub id or
local directory), loaded once per process."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from implicit_bench.backends.embedders.base import EmbedderParams, resolve_model


class SentenceTransformerEmbedder:
    def __init__(self, config: EmbedderParams):
        from sentence_transformers import SentenceTransformer

        self.name = f"sentence_transformers:{config.model}"
        self.config = config
        kwargs = {}
        if config.dtype is not None:
            import torch

            kwargs["model_kwargs"] = {"torch_dtype": getattr(torch, config.dtype)}
        if config.revision:
            kwargs["revision"] = config.revision
        self.model = SentenceTransformer(
            resolve_model(config.model), device=config.device, **kwargs
        )
        if config.max_seq_length is not None:
            self.model.max_seq_length = config.max_seq_length

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from implicit_bench._util.numerics import exact_threads

        device = self.model.device.type if self.config.exact else "unfixed"
        with exact_threads(device):  # exact: one CPU thread (numerics.exact_threads)
            vectors = self.model.encode(
                list(texts),
                batch_size=1 if self.config.exact else self.config.batch_size,  # .exact
                convert_to_numpy=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)
