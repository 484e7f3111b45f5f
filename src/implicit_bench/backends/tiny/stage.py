"""Tiny randomly initialised models, built locally from configs (nothing is downloaded).

Each kind is one module ``implicit_bench.backends.tiny.<kind>`` with ``build(out_dir, seed) ->
None``
that saves a model loadable through the same code path users use for hub ids or local
directories, and marks it with ``provenance.mark_random_init``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

# generator / vlm / clip / llm: the default profile's tiny models; the rest: the `tiny`
# profile's (profiles/tiny.yaml), one per paper model, each of the paper model's architecture.
KINDS: tuple[str, ...] = (
    "generator", "vlm", "clip", "llm",
    "qwen_image", "sd3", "qwen3vl", "gemma3", "openclip", "qwen3_embedding",
)  # fmt: skip


def build(kind: str, out_dir: str | Path, seed: int = 0) -> Path:
    """Build the tiny model of ``kind`` into ``out_dir``."""
    if kind not in KINDS:
        raise ValueError(f"unknown tiny model kind '{kind}'; known: {', '.join(KINDS)}")
    module = importlib.import_module(f"implicit_bench.backends.tiny.{kind}")
    out = Path(out_dir)
    module.build(out, seed)
    return out
