"""Registry of text-to-image generator backends (one module per backend, imported lazily).

The top-level ``generators`` catalogue in params maps a configuration name to a backend config::

    qwen_image: {backend: diffusers, model: Qwen/Qwen-Image, dtype: bfloat16, steps: 50, ...}

``create_generator(config)`` builds the backend once per worker; ``settings_hash(config)`` is
the hash of everything in a config that determines its images (used to decide which stored
images are still valid on resume).
"""

from __future__ import annotations

from typing import Any

from implicit_bench._util.hashing import stable_hash
from implicit_bench.backends.generators.base import (
    Generator,
    GeneratorParams,
    RenderRequest,
    RenderResult,
    png_bytes,
)
from implicit_bench.runtime.registry import Registry

GENERATORS: Registry[Generator] = Registry("generator", places=("generators",))
GENERATORS.register(
    "diffusers", "implicit_bench.backends.generators.diffusers_backend:DiffusersGenerator", "local"
)
GENERATORS.register(
    "openai_images",
    "implicit_bench.backends.generators.openai_images:OpenAIImagesGenerator",
    "http",
)
GENERATORS.register(
    "gemini", "implicit_bench.backends.generators.gemini:GeminiImagesGenerator", "http"
)  # Nano Banana 2
GENERATORS.register(
    "sim", "implicit_bench.backends.generators.sim:SimGenerator", "none"
)  # simulated world (docs/world.md)


def validate_config(
    config: dict[str, Any] | GeneratorParams, where: str = "generators"
) -> GeneratorParams:
    """The backend's pydantic config for ``config`` (unknown keys are an error)."""
    if isinstance(config, GeneratorParams):
        return config
    return GENERATORS.validate(config, where)[1]


def create_generator(config: dict[str, Any] | GeneratorParams) -> Generator:
    """Build (load) the generator of ``config``: call once per worker."""
    cfg = validate_config(config)
    return GENERATORS.resolve(cfg.backend)(cfg)


def settings_hash(config: dict[str, Any] | GeneratorParams) -> str:
    """Hash of the image-determining settings of a config (runtime keys left out)."""
    cfg = validate_config(config)
    runtime = type(cfg).runtime_keys  # declared by the backend's own config
    settings = {k: v for k, v in cfg.model_dump().items() if k not in runtime}
    return stable_hash(settings, length=16)


__all__ = [
    "GENERATORS",
    "Generator",
    "GeneratorParams",
    "RenderRequest",
    "RenderResult",
    "create_generator",
    "png_bytes",
    "settings_hash",
    "validate_config",
]
