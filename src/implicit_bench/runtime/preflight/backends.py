"""What the backend a params place names declared where it registered: its transport (``http`` |
``local`` | ``none``) and, for an HTTP backend, its endpoint defaults, key header and whether it
speaks chat completions, read from its own params model. No backend name is listed here.

The registries are found through ``runtime.registry.registry_for`` (each declares its params
places when its package is imported): a stage's preflight reads the registries its own stage
script imported, so a stage's DVC deps gain no other backend package; the whole-project check
(``preflight()``) and ``plan`` import them all first (``load_registries``)."""

from __future__ import annotations

from typing import Any

from implicit_bench.runtime.httpretry import HttpParams
from implicit_bench.runtime.registry import Registry, Transport, registry_for


def load_registries() -> None:
    """Import every model registry (the packages' ``__init__`` only: no backend module)."""
    import implicit_bench.backends.clip
    import implicit_bench.backends.embedders
    import implicit_bench.backends.generators
    import implicit_bench.backends.judges
    import implicit_bench.backends.llm  # noqa: F401 - each registers its params places


def registry_of(where: str) -> Registry[Any]:
    """The registry of the block at ``where`` (``judges.gpt54``, ``clip.model``)."""
    registry = registry_for(where)
    if registry is None:  # a programming error: the caller did not import the registry
        raise RuntimeError(
            f"no backend registry is loaded for the params place {where!r}: import its "
            "package first (all of them: "
            "implicit_bench.runtime.preflight.backends.load_registries())"
        )
    return registry


def transport(where: str, block: dict[str, Any]) -> Transport | None:
    """What the block's backend declared at registration (None: an unknown backend)."""
    return registry_of(where).transport(str(block.get("backend")))


def is_http(where: str, block: dict[str, Any]) -> bool:
    """The block calls its model over HTTP: its backend declared ``http``, or it names a
    ``base_url`` (an unknown backend's endpoint is checked all the same)."""
    return registry_of(where).is_http(block)


def http_model(where: str, block: dict[str, Any]) -> type[HttpParams]:
    """The HTTP backend's own params model (its ``base_url`` / ``api_key_env`` defaults,
    ``auth_headers``, ``chat_completions``); ``HttpParams`` where it has none of its own (the
    embedders share one config) or is unknown."""
    registry, name = registry_of(where), str(block.get("backend"))
    if registry.transport(name) != "http":
        return HttpParams
    model = registry.params_model(name)
    return model if isinstance(model, type) and issubclass(model, HttpParams) else HttpParams
