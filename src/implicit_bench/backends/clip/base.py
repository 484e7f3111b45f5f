"""The CLIP config and backend protocol, below the registry (``clip/__init__``) and its backends."""

from __future__ import annotations

from typing import Literal, Protocol

import numpy as np
from pydantic import field_validator

from implicit_bench.params import PositiveInt, StrictModel
from implicit_bench.protocol.tables import WORLD_DIR
from implicit_bench.runtime.registry import registered_name


class ClipParams(StrictModel):
    backend: str = "transformers"  # a name registered in clip/__init__.py (CLIP_BACKENDS)
    model: str = "models/tiny/clip"  # hub id, local directory, or open_clip architecture name
    pretrained: str | None = None  # open_clip only: pretrained tag or checkpoint path
    revision: str | None = (
        None  # transformers only: hub commit to load (profiles/paper.yaml pins one)
    )
    device: str = "cpu"  # cpu, cuda, cuda:1, ... or auto (cuda when available, else cpu)
    dtype: Literal["float32", "float16", "bfloat16"] = "float32"
    batch_size: PositiveInt = 16
    # true: one input per forward pass, on one torch thread on the CPU (numerics.exact_threads),
    # so an embedding is the same bits whatever batch, cache state or OMP_NUM_THREADS (issue
    # 35); false: batch_size inputs per pass (faster on a GPU; last-bit differences)
    exact: bool = True
    world: str = WORLD_DIR  # sim only: the planted world (docs/world.md)

    @field_validator("backend")
    @classmethod
    def _registered(cls, value: str) -> str:
        return registered_name("clip", value)


class ClipBackend(Protocol):
    """L2-normalised embeddings (float32 numpy, one row per input)."""

    def identity(self) -> dict: ...  # cache.model_key: backend + what changes the embeddings

    def embed_images(self, images: list) -> np.ndarray: ...

    def embed_texts(self, texts: list[str]) -> np.ndarray: ...


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; anything else as given."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
