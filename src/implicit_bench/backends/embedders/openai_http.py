"""OpenAI-compatible ``/v1/embeddings`` backend (vLLM, text-embeddings-inference, vendors).

Requests are streamed by ``CachedEmbedder`` (``concurrency`` batches in flight) under this
backend's :class:`~implicit_bench.runtime.throttle.Throttle`; a vector holding NaN or infinity is a
malformed answer (an error, never cached).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import httpx
import numpy as np

from implicit_bench._util.jsonparse import loads_strict
from implicit_bench._util.redact import redact, register_secret_env
from implicit_bench.backends.embedders.base import EmbedderParams
from implicit_bench.errors import ConfigError
from implicit_bench.runtime.httpretry import send
from implicit_bench.runtime.throttle import estimate_tokens


class OpenAIEmbedder:
    def __init__(self, config: EmbedderParams):
        if not config.base_url:
            raise ConfigError(
                "embedder backend 'openai' needs base_url (e.g. http://127.0.0.1:8000/v1)"
            )
        self.name = f"openai:{config.model}"
        self.config = config
        headers = {}
        if config.api_key_env:
            key = os.environ.get(config.api_key_env)
            if not key:
                raise ConfigError(
                    f"environment variable {config.api_key_env} (api_key_env) is not set"
                )
            headers["Authorization"] = f"Bearer {key}"
        self.client = httpx.Client(
            base_url=config.base_url.rstrip("/"), headers=headers, timeout=config.timeout_s
        )
        # the project's one retry policy (implicit_bench.runtime.httpretry): Retry-After honoured,
        # only 408/409/429/5xx and transport errors retried, an overall deadline per request
        self.policy = config.retry_policy()
        self.throttle = config.throttle(config.concurrency)
        register_secret_env(config.api_key_env)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        payload = {"model": self.config.model, "input": list(texts), "encoding_format": "float"}
        result = send(
            self.client,
            "POST",
            "/embeddings",
            self.policy,
            json=payload,
            throttle=self.throttle,
            tokens=estimate_tokens(payload["input"]),
        )
        if not result.ok:
            raise RuntimeError(f"{self.config.base_url}/embeddings failed: {result.error}")
        try:
            rows = loads_strict(result.response.content)["data"]
            data = sorted(rows, key=lambda item: item["index"])
            vectors = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise RuntimeError(
                redact(
                    f"{self.config.base_url}/embeddings: malformed answer "
                    f"({type(exc).__name__}): {result.response.text[:300]}"
                )
            ) from None
        if len(data) != len(texts) or vectors.ndim != 2:
            raise RuntimeError(
                f"{self.config.base_url}/embeddings returned "
                f"{len(data)} vectors for {len(texts)} texts"
            )
        if not np.isfinite(vectors).all():
            rows = sorted({int(i) for i in np.argwhere(~np.isfinite(vectors))[:, 0]})
            raise RuntimeError(
                f"{self.config.base_url}/embeddings: non-finite values "
                f"(NaN/inf) in vector(s) {rows[:10]}; not cached"
            )
        return vectors
