"""OpenAI-compatible ``/v1/embeddings`` backend (vLLM, text-embeddings-inference, vendors)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import httpx
import numpy as np

from implicit_bench.embedders import EmbedderConfig
from implicit_bench.errors import ConfigError


class OpenAIEmbedder:
    def __init__(self, config: EmbedderConfig):
        if not config.base_url:
            raise ConfigError("embedder backend 'openai' needs base_url (e.g. http://127.0.0.1:8000/v1)")
        self.name = f"openai:{config.model}"
        self.config = config
        headers = {}
        if config.api_key_env:
            key = os.environ.get(config.api_key_env)
            if not key:
                raise ConfigError(f"environment variable {config.api_key_env} (api_key_env) is not set")
            headers["Authorization"] = f"Bearer {key}"
        self.client = httpx.Client(base_url=config.base_url.rstrip("/"), headers=headers, timeout=config.timeout_s)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        payload = {"model": self.config.model, "input": list(texts), "encoding_format": "float"}
        for attempt in range(self.config.max_retries + 1):
            try:
                response = self.client.post("/embeddings", json=payload)
                if response.status_code >= 500 or response.status_code == 429:
                    raise httpx.HTTPStatusError("retryable", request=response.request, response=response)
                response.raise_for_status()
                break
            except (httpx.TransportError, httpx.HTTPStatusError) as exc:
                retryable = not isinstance(exc, httpx.HTTPStatusError) or exc.response.status_code >= 429
                if attempt == self.config.max_retries or not retryable:
                    raise RuntimeError(f"{self.config.base_url}/embeddings failed: {exc}") from exc
                time.sleep(min(2.0**attempt, 30.0))
        data = sorted(response.json()["data"], key=lambda item: item["index"])
        if len(data) != len(texts):
            raise RuntimeError(f"{self.config.base_url}/embeddings returned {len(data)} vectors for {len(texts)} texts")
        return np.asarray([item["embedding"] for item in data], dtype=np.float32)
