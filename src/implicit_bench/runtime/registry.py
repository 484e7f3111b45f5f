"""A small typed registry of lazily imported backends.

Each backend is one module; the registry maps a short name to ``"module:attr"`` so that
heavy imports (torch, transformers, diffusers, ray) happen only when a backend is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from implicit_bench.errors import ConfigError

T = TypeVar("T")

# Catalogue keys that size a run and change no answer
# (``implicit-bench plan``, docs/experiments.md):
# taken out before the backend validates its block, so they are in no identity or settings hash.
COST_KEYS = ("seconds_per_item", "usd_per_item")
# Backends that call a model over HTTP (an API or a server such as vLLM): the preflight checks
# their key and endpoint, and ``plan`` counts their time as API time, not GPU time.
HTTP_BACKENDS = frozenset({"openai", "openai_images", "gemini"})


def is_http_block(block: dict[str, Any]) -> bool:
    """A backend block that calls its model over HTTP."""
    return block.get("backend") in HTTP_BACKENDS or "base_url" in block


def import_target(ref: str) -> Any:
    """The object a ``"module:attr"`` string names, importing the module on first use (every
    lazy registry of the project: backends, answer kinds, metrics, analyze extensions)."""
    module_name, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module_name), attr)


class Registry(Generic[T]):
    """Name -> lazily imported factory."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, str | Callable[..., T]] = {}

    def register(self, name: str, target: str | Callable[..., T]) -> None:
        if name in self._entries:
            raise ConfigError(f"{self.kind} backend '{name}' is already registered")
        self._entries[name] = target

    def names(self) -> list[str]:
        return sorted(self._entries)

    def resolve(self, name: str) -> Callable[..., T]:
        try:
            target = self._entries[name]
        except KeyError:
            raise ConfigError(
                f"unknown {self.kind} backend '{name}'; known: {', '.join(self.names())}"
            ) from None
        if isinstance(target, str):
            target = import_target(target)
            self._entries[name] = target
        return target

    def validate(
        self, config: Any, where: str, model_attr: str = "Params"
    ) -> tuple[Callable[..., T], Any]:
        """(backend class, validated config) for a params block ``{backend: NAME, ...}``.

        The block is validated by the backend's own pydantic model (``cls.<model_attr>``,
        unknown keys rejected); errors name the block (``where``) and the key.
        """
        from pydantic import ValidationError

        from implicit_bench.params import format_validation_errors

        if not isinstance(config, dict) or "backend" not in config:
            raise ConfigError(f"{where}: needs a 'backend' key (one of {', '.join(self.names())})")
        cls = self.resolve(str(config["backend"]))
        config = {k: v for k, v in config.items() if k not in COST_KEYS}
        try:
            return cls, getattr(cls, model_attr).model_validate(config)
        except ValidationError as exc:
            raise ConfigError(
                f"invalid {self.kind} params: {format_validation_errors(exc, where)}"
            ) from None

    def create(self, name: str, *args: Any, **kwargs: Any) -> T:
        return self.resolve(name)(*args, **kwargs)
