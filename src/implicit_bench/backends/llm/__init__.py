"""LLM backends behind one registry: ``openai`` (any OpenAI-compatible endpoint), ``transformers``
(a local causal LM), ``replay`` (recorded answers). See docs/llm-backends.md.

    client = build_llm({"backend": "openai", "model": "gpt-5.4-mini"})
    answer = client.chat([{"role": "user", "content": "..."}])
"""

from __future__ import annotations

from typing import Any

from implicit_bench.backends.llm.base import (
    DEFAULT_CACHE,
    LLMAnswer,
    LLMClient,
    LLMParams,
    Messages,
    request_hash,
)
from implicit_bench.backends.llm.structured import (
    InvalidCounter,
    LLMUnavailableError,
    StructuredAnswer,
    chat_json_many,
)
from implicit_bench.runtime.registry import Registry

LLM_BACKENDS: Registry[LLMClient] = Registry("LLM", places=("llms",))
LLM_BACKENDS.register("openai", "implicit_bench.backends.llm.openai:OpenAIClient", "http")
LLM_BACKENDS.register(
    "transformers", "implicit_bench.backends.llm.transformers:TransformersClient", "local"
)
LLM_BACKENDS.register("replay", "implicit_bench.backends.llm.replay:ReplayClient", "none")


def build_llm(config: dict[str, Any], where: str = "llm") -> LLMClient:
    """Build a client from a params block ``{backend: ..., model: ..., ...}``.

    The block is validated by the backend's own ``Params`` model (unknown keys rejected);
    ``where`` names the block in error messages (e.g. ``kg.llm``).
    """
    cls, params = LLM_BACKENDS.validate(config, where)
    return cls(params)


def llm_entry(
    llms: dict[str, dict[str, Any]], name: str | None, where: str, max_tokens: int | None = None
) -> dict[str, Any]:
    """The block of the top-level ``llms`` catalogue that the params key ``where`` (``kg.llm``)
    names, with the use site's ``max_tokens`` (a per-use setting, never set in the catalogue)."""
    from implicit_bench.errors import ConfigError
    from implicit_bench.params import check_refs

    if not name:
        raise ConfigError(
            f"params.yaml: {where} must name an entry of llms (known: "
            f"{', '.join(sorted(llms)) or 'none'})"
        )
    check_refs(name, llms, where, "llms")
    block = dict(llms[name])
    if "max_tokens" in block:
        raise ConfigError(
            f"params.yaml: llms.{name}.max_tokens: set max_tokens where "
            f"the LLM is used (e.g. beside {where})"
        )
    return block if max_tokens is None else {**block, "max_tokens": max_tokens}


__all__ = [
    "DEFAULT_CACHE",
    "LLM_BACKENDS",
    "InvalidCounter",
    "LLMUnavailableError",
    "LLMAnswer",
    "LLMClient",
    "LLMParams",
    "Messages",
    "StructuredAnswer",
    "build_llm",
    "llm_entry",
    "chat_json_many",
    "request_hash",
]
