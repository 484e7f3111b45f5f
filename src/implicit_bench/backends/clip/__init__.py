"""CLIP backends behind a registry, cached image/text embeddings, the CLIP lean and blind judge.

Backends (one module each, imported lazily):

- ``transformers``: ``CLIPModel`` + ``AutoProcessor`` from a hub id (paper:
  ``openai/clip-vit-large-patch14``) or a local directory;
- ``open_clip``: ``open_clip.create_model_and_transforms(model, pretrained=...)`` (paper:
  ``ViT-L-14`` / ``openai``; the tiny profile's local ``models/tiny/openclip``).
"""

from __future__ import annotations

from implicit_bench.backends.clip.base import ClipBackend, ClipParams, resolve_device  # noqa: F401 - re-exported
from implicit_bench.runtime.registry import Registry

CLIP_BACKENDS: Registry[ClipBackend] = Registry("clip", places=("clip.model",))
CLIP_BACKENDS.register("transformers", "implicit_bench.backends.clip.hf:TransformersClip", "local")
CLIP_BACKENDS.register("open_clip", "implicit_bench.backends.clip.openclip:OpenClip", "local")
CLIP_BACKENDS.register(
    "sim", "implicit_bench.backends.clip.sim:SimClip", "none"
)  # simulated world (docs/world.md)


def create(config: ClipParams) -> ClipBackend:
    return CLIP_BACKENDS.create(config.backend, config)
