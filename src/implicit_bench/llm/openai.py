"""Backend ``openai``: any OpenAI-compatible ``/v1/chat/completions`` endpoint.

Works with OpenAI and other vendor APIs that speak the same protocol, and with self-hosted
servers (vLLM ``vllm serve``, llama.cpp ``llama-server``, SGLang, Ollama's ``/v1``). The API
key is read from the environment variable named by ``api_key_env`` at call time; it is never
stored in the params, the cache key, the cache file, logs or any artifact.

Requests go through the project's one HTTP retry policy (``implicit_bench.httpretry``):
transport errors and HTTP 408, 409, 429 and 5xx are retried (``max_retries`` attempts after
the first, delay ``backoff_s * 2**attempt`` or ``Retry-After``, capped at ``backoff_max_s``),
other statuses fail at once, and the whole request, retries included, ends at ``deadline_s``.
A request that still fails comes back as an answer with ``error`` set (redacted; not cached).
Requests are streamed (``concurrency`` in flight, each answer cached as it arrives:
:mod:`implicit_bench.streaming`) under the client's :class:`~implicit_bench.throttle.Throttle`
(``rpm`` / ``tpm`` quotas, AIMD on 429); an answer longer than ``max_answer_chars`` is an
error, never parsed or cached.
An answer whose message is not an object, or whose content is neither a string nor a list of
text parts, is such an error too; a list of text parts is joined.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import httpx

from implicit_bench.httpretry import RETRY_STATUS, HttpParams, send
from implicit_bench.jsonparse import loads_strict
from implicit_bench.llm.base import LLMClient, LLMParams, Messages
from implicit_bench.params import NonNegFloat, PositiveInt
from implicit_bench.redact import redact, register_secret_env
from implicit_bench.throttle import estimate_tokens


class OpenAIParams(LLMParams, HttpParams):
    """``base_url``, ``api_key_env`` and the retry bounds: ``httpretry.HttpParams``."""

    backend: Literal["openai"] = "openai"
    temperature: NonNegFloat | None = 0.0  # null: omit (models that accept only their default)
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    json_mode: bool = False  # send response_format={"type": "json_object"}
    # send the answer's JSON schema as response_format={"type": "json_schema", ...} (OpenAI
    # structured outputs; vLLM / SGLang guided decoding) when the
    # caller has one; wins over json_mode
    structured_output: bool = False
    seed: int | None = None
    extra_body: dict[str, Any] = {}  # e.g. {"reasoning_effort": "none"} or vLLM guided decoding
    concurrency: PositiveInt = 4  # requests in flight (streamed; the AIMD window's ceiling)


__all__ = ["RETRY_STATUS", "OpenAIClient", "OpenAIParams"]


class OpenAIClient(LLMClient):
    backend = "openai"
    Params = OpenAIParams

    def __init__(self, params: OpenAIParams):
        super().__init__(params)
        self.params: OpenAIParams = params
        self._http = httpx.Client(timeout=params.timeout_s)
        self.policy = params.retry_policy()
        self.throttle = params.throttle(params.concurrency)
        register_secret_env(params.api_key_env)

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
            **({"structured_output": True} if p.structured_output else {}),
        }

    def sends_schema(self) -> bool:
        return self.params.structured_output

    def batch_size(self) -> int:
        return 1  # streamed: one request per call, ``concurrency`` of them in flight

    def concurrency(self) -> int:
        return self.params.concurrency

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        env = self.params.api_key_env
        if env:
            key = os.environ.get(env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
        return headers

    def _body(
        self, messages: Messages, max_tokens: int, schema: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        p = self.params
        body: dict[str, Any] = {
            "model": p.model,
            "messages": messages,
            p.max_tokens_field: max_tokens,
        }
        if p.temperature is not None:
            body["temperature"] = p.temperature
        if schema is not None and p.structured_output:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {**schema, "strict": False},
            }
        elif p.json_mode:
            body["response_format"] = {"type": "json_object"}
        if p.seed is not None:
            body["seed"] = p.seed
        body.update(p.extra_body)
        return body

    def _one(
        self, messages: Messages, max_tokens: int, schema: dict[str, Any] | None = None
    ) -> tuple[str, str | None]:
        url = self.params.base_url.rstrip("/") + "/chat/completions"
        body = self._body(messages, max_tokens, schema)
        result = send(
            self._http,
            "POST",
            url,
            self.policy,
            json=body,
            headers=self._headers(),
            throttle=self.throttle,
            tokens=estimate_tokens(body["messages"], max_tokens),
        )
        if not result.ok:
            return "", result.error
        return self.read_answer(result.response)

    def read_answer(self, response: httpx.Response) -> tuple[str, str | None]:
        """(text, None) from a 2xx chat-completions answer, else ("", reason): the one reader
        of the synchronous endpoint and of a batch's output lines."""
        text, error = _content(response)
        if error is None and len(text) > self.params.max_answer_chars:
            return (
                "",
                f"answer of {len(text)} characters > "
                f"max_answer_chars={self.params.max_answer_chars} (not "
                "parsed)",
            )
        return text, error

    def _generate(
        self,
        batch: list[Messages],
        max_tokens: int,
        schema: dict[str, Any] | list[dict[str, Any] | None] | None = None,
    ) -> list[tuple[str, str | None]]:
        """``schema``: one JSON schema for the batch, or one per request (the judge's tasks)."""
        schemas = schema if isinstance(schema, list) else [schema] * len(batch)
        if len(batch) == 1 or self.params.concurrency <= 1:
            return [self._one(m, max_tokens, s) for m, s in zip(batch, schemas, strict=True)]
        with ThreadPoolExecutor(max_workers=self.params.concurrency) as pool:
            return list(
                pool.map(
                    lambda ms: self._one(ms[0], max_tokens, ms[1]), zip(batch, schemas, strict=True)
                )
            )


def _content(response: httpx.Response) -> tuple[str, str | None]:
    """(text, None) from a chat-completions answer, or ("", reason) when it holds no text."""
    try:
        payload = loads_strict(response.content)
        message = payload["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return "", redact(f"malformed response ({type(exc).__name__}): {response.text[:300]}")
    if not isinstance(message, dict):
        return "", redact(
            f"malformed response: message is {type(message).__name__}, "
            f"not an object: {response.text[:300]}"
        )
    content = message.get("content")
    if isinstance(content, str):
        return content, None
    if (
        isinstance(content, list)
        and content
        and all(
            isinstance(p, dict)
            and p.get("type") in ("text", "output_text")
            and isinstance(p.get("text"), str)
            for p in content
        )
    ):
        return "".join(p["text"] for p in content), None
    if content is None:
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            return "", redact(f"the model refused: {refusal[:300]}")
        return "", "malformed response: no content in the message"
    return "", redact(
        f"malformed response: content is {type(content).__name__}, not text: {str(content)[:300]}"
    )
