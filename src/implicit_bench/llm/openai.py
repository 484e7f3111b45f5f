"""Backend ``openai``: any OpenAI-compatible ``/v1/chat/completions`` endpoint.

Works with OpenAI and other vendor APIs that speak the same protocol, and with self-hosted
servers (vLLM ``vllm serve``, llama.cpp ``llama-server``, SGLang, Ollama's ``/v1``). The API
key is read from the environment variable named by ``api_key_env`` at call time; it is never
stored in the params, the cache key, the cache file, logs or any artifact.

Transport errors, HTTP 429 and 5xx are retried with exponential backoff (``max_retries``
attempts after the first, delay ``backoff_s * 2**attempt``, capped at ``backoff_max_s``; a
``Retry-After`` header is honoured up to that cap). Other 4xx answers fail at once. A request
that still fails comes back as an answer with ``error`` set (not cached).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import httpx

from implicit_bench.llm.base import LLMClient, LLMParams, Messages
from implicit_bench.params import NonNegFloat, NonNegInt, PositiveFloat, PositiveInt


class OpenAIParams(LLMParams):
    backend: Literal["openai"] = "openai"
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str | None = "OPENAI_API_KEY"  # null: no Authorization header (local servers)
    temperature: NonNegFloat | None = 0.0  # null: omit (models that accept only their default)
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    json_mode: bool = False  # send response_format={"type": "json_object"}
    seed: int | None = None
    extra_body: dict[str, Any] = {}  # e.g. {"reasoning_effort": "none"} or vLLM guided decoding
    timeout_s: PositiveFloat = 120.0
    max_retries: NonNegInt = 5
    backoff_s: NonNegFloat = 1.0
    backoff_max_s: NonNegFloat = 60.0
    concurrency: PositiveInt = 4


RETRY_STATUS = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))


class OpenAIClient(LLMClient):
    backend = "openai"
    Params = OpenAIParams

    def __init__(self, params: OpenAIParams):
        super().__init__(params)
        self.params: OpenAIParams = params
        self._http = httpx.Client(timeout=params.timeout_s)

    def identity(self) -> dict[str, Any]:
        return {"model": self.params.model, "base_url": self.params.base_url.rstrip("/")}

    def decoding(self, max_tokens: int) -> dict[str, Any]:
        p = self.params
        return {
            "temperature": p.temperature,
            "max_tokens": max_tokens,
            "max_tokens_field": p.max_tokens_field,
            "json_mode": p.json_mode,
            "seed": p.seed,
            "extra_body": p.extra_body,
        }

    def batch_size(self) -> int:
        return max(1, self.params.concurrency) * 8

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        env = self.params.api_key_env
        if env:
            key = os.environ.get(env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
        return headers

    def _body(self, messages: Messages, max_tokens: int) -> dict[str, Any]:
        p = self.params
        body: dict[str, Any] = {"model": p.model, "messages": messages, p.max_tokens_field: max_tokens}
        if p.temperature is not None:
            body["temperature"] = p.temperature
        if p.json_mode:
            body["response_format"] = {"type": "json_object"}
        if p.seed is not None:
            body["seed"] = p.seed
        body.update(p.extra_body)
        return body

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        cap = self.params.backoff_max_s
        if response is not None:
            after = response.headers.get("Retry-After")
            try:
                if after is not None:
                    return min(max(float(after), 0.0), cap)
            except ValueError:
                pass
        return min(self.params.backoff_s * (2**attempt), cap)

    def _one(self, messages: Messages, max_tokens: int) -> tuple[str, str | None]:
        url = self.params.base_url.rstrip("/") + "/chat/completions"
        body = self._body(messages, max_tokens)
        error = "no attempt made"
        for attempt in range(self.params.max_retries + 1):
            response = None
            try:
                response = self._http.post(url, json=body, headers=self._headers())
            except httpx.TransportError as exc:
                error = f"transport error: {type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    return _content(response)
                error = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code not in RETRY_STATUS:
                    return "", error
            if attempt < self.params.max_retries:
                time.sleep(self._delay(attempt, response))
        return "", f"gave up after {self.params.max_retries + 1} attempts; last: {error}"

    def _generate(self, batch: list[Messages], max_tokens: int) -> list[tuple[str, str | None]]:
        if len(batch) == 1 or self.params.concurrency <= 1:
            return [self._one(m, max_tokens) for m in batch]
        with ThreadPoolExecutor(max_workers=self.params.concurrency) as pool:
            return list(pool.map(lambda m: self._one(m, max_tokens), batch))


def _content(response: httpx.Response) -> tuple[str, str | None]:
    try:
        payload = response.json()
        message = payload["choices"][0]["message"]
        return message.get("content") or "", None
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return "", f"malformed response ({type(exc).__name__}): {response.text[:300]}"
