"""A small typed registry of lazily imported backends.

Each backend is one module; the registry maps a short name to ``"module:attr"`` so that
heavy imports (torch, transformers, diffusers, ray) happen only when a backend is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

from implicit_bench.errors import ConfigError

T = TypeVar("T")

# Catalogue keys that size a run and change no answer (``implicit-bench plan``,
# docs/experiments.md): every catalogue entry may carry them, whatever its backend, so they
# belong to the registry that validates entries, not to one backend. Taken out before the
# backend validates its block, so they are in no identity or settings hash.
COST_KEYS = ("seconds_per_item", "usd_per_item")

# How a model backend reaches its model, declared where it registers (``register(...,
# transport=...)``) and read from there only: ``http`` calls an API or a server such as vLLM
# (the preflight checks its key and endpoint, ``plan`` counts API time, not GPU time);
# ``local`` loads a model on this machine (a hub id, a directory or a package: the preflight
# looks it up); ``none`` has no model (simulated answers, recorded answers).
Transport = Literal["http", "local", "none"]
TRANSPORTS: tuple[Transport, ...] = ("http", "local", "none")

# params place -> the registry whose backends its blocks name, filled as each registry is created
# (``Registry(..., places=...)``): the preflight and ``plan`` find a block's backend facts here
# without importing any backend package themselves.
_PLACES: dict[str, Registry[Any]] = {}
# kind -> the first registry created under it (a config shared by a registry's backends checks
# its ``backend`` name here: ``registered_name``)
_KINDS: dict[str, Registry[Any]] = {}


def registered_name(kind: str, name: str) -> str:
    """``name`` if the ``kind`` registry has it (a shared config's ``backend`` validator, so the
    registrations are the one list of names); a ValueError naming the known ones otherwise."""
    registry = _KINDS.get(kind)
    if registry is not None and name not in registry.names():
        raise ValueError(f"unknown {kind} backend {name!r}; known: {', '.join(registry.names())}")
    return name


def registered_places() -> dict[str, Registry[Any]]:
    """Params place -> registry, of the registries imported so far."""
    return dict(_PLACES)


def registry_for(where: str) -> Registry[Any] | None:
    """The registry of the block at ``where``: a place itself (``clip.model``) or an entry of a
    catalogue (``judges.gpt54``); None when no registry imported so far declared it."""
    return _PLACES.get(where) or _PLACES.get(where.partition(".")[0])


def import_target(ref: str) -> Any:
    """The object a ``"module:attr"`` string names, importing the module on first use (every
    lazy registry of the project: backends, answer kinds, metrics, analyze extensions)."""
    module_name, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module_name), attr)


class Registry(Generic[T]):
    """Name -> lazily imported factory."""

    def __init__(self, kind: str, model_attr: str = "Params", places: tuple[str, ...] = ()):
        """``places``: the params places whose blocks name this registry's backends (a
        catalogue such as ``judges``, or one block such as ``clip.model``)."""
        self.kind = kind
        self.model_attr = model_attr  # the backend class's attribute holding its params model
        _KINDS.setdefault(kind, self)
        for place in places:
            if place in _PLACES:
                raise ConfigError(f"params place {place!r} already has a registry")
            _PLACES[place] = self
        self._entries: dict[str, str | Callable[..., T]] = {}
        self._transports: dict[str, Transport] = {}

    def register(
        self, name: str, target: str | Callable[..., T], transport: Transport | None = None
    ) -> None:
        """``transport``: how a model backend reaches its model (``TRANSPORTS``), a fact kept
        in the entry itself so that reading it imports no backend module; None for a registry
        of something else (triplet writers, debiasing methods)."""
        if name in self._entries:
            raise ConfigError(f"{self.kind} backend '{name}' is already registered")
        if transport is not None and transport not in TRANSPORTS:
            raise ConfigError(
                f"{self.kind} backend '{name}': transport {transport!r} is not one of "
                f"{', '.join(TRANSPORTS)}"
            )
        self._entries[name] = target
        if transport is not None:
            self._transports[name] = transport

    def names(self, transport: Transport | None = None) -> list[str]:
        """The registered names (``transport``: those declaring it)."""
        if transport is None:
            return sorted(self._entries)
        return sorted(n for n, t in self._transports.items() if t == transport)

    def transport(self, name: str) -> Transport | None:
        """What backend ``name`` declared at registration (None: unknown or undeclared)."""
        return self._transports.get(name)

    def is_http(self, block: dict[str, Any]) -> bool:
        """A backend block of this registry that calls its model over HTTP (an unknown
        backend with a ``base_url`` counts as one: the preflight then checks its endpoint)."""
        return self.transport(str(block.get("backend"))) == "http" or "base_url" in block

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

    def params_model(self, name: str) -> Any:
        """Backend ``name``'s own params model (imports its module; None: it has none, as the
        embedders sharing one ``EmbedderParams``)."""
        return getattr(self.resolve(name), self.model_attr, None)

    def validate(
        self, config: Any, where: str, model_attr: str | None = None
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
            return cls, getattr(cls, model_attr or self.model_attr).model_validate(config)
        except ValidationError as exc:
            raise ConfigError(
                f"invalid {self.kind} params: {format_validation_errors(exc, where)}"
            ) from None

    def create(self, name: str, *args: Any, **kwargs: Any) -> T:
        return self.resolve(name)(*args, **kwargs)
