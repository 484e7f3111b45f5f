"""Backend ``openai``: any OpenAI-compatible ``/v1/chat/completions`` endpoint.

Works with OpenAI and other vendor APIs that speak the same protocol, and with self-hosted
servers (vLLM ``vllm serve``, llama.cpp ``llama-server``, SGLang, Ollama's ``/v1``). The API
key is read from the environment variable named by ``api_key_env`` at call time; it is never
stored in the params, the cache key, the cache file, logs or any artifact.

Requests go through the project's one HTTP retry policy (``implicit_bench.runtime.httpretry``):
transport errors and HTTP 408, 409, 429 and 5xx are retried (``max_retries`` attempts after
the first, delay ``backoff_s * 2**attempt`` or ``Retry-After``, capped at ``backoff_max_s``),
other statuses fail at once, and the whole request, retries included, ends at ``deadline_s``.
A request that still fails comes back as an answer with ``error`` set (redacted; not cached).
Requests are streamed (``concurrency`` in flight, each answer cached as it arrives:
:mod:`implicit_bench._util.streaming`) under the client's
:class:`~implicit_bench.runtime.throttle.Throttle` (``rpm`` / ``tpm`` quotas, AIMD on 429); an
answer longer than ``max_answer_chars`` is an error, never parsed or cached.
An answer whose message is not an object, or whose content is neither a string nor a list of
text parts, is such an error too; a list of text parts is joined.
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, Literal

import httpx

from implicit_bench._util.jsonparse import loads_strict
from implicit_bench._util.redact import redact, register_secret_env
from implicit_bench.backends.llm.base import LLMClient, LLMParams, Messages
from implicit_bench.params import NonNegFloat, PositiveInt
from implicit_bench.runtime.dialects import UNCONSTRAINED, Server, probe, schema_fields
from implicit_bench.runtime.httpretry import RETRY_STATUS, HttpParams, send
from implicit_bench.runtime.throttle import estimate_tokens


class OpenAIParams(LLMParams, HttpParams):
    """``base_url``, ``api_key_env`` and the retry bounds: ``httpretry.HttpParams``."""

    chat_completions: ClassVar[bool] = True

    backend: Literal["openai"] = "openai"
    temperature: NonNegFloat | None = 0.0  # null: omit (models that accept only their default)
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    json_mode: bool = False  # send response_format={"type": "json_object"}
    # send the answer's JSON schema as response_format={"type": "json_schema", ...} (OpenAI
    # structured outputs; vLLM / SGLang guided decoding) when the
    # caller has one; wins over json_mode
    structured_output: bool = False
    # where the server reads the schema (implicit_bench.runtime.dialects): openai, vllm, sglang,
    # llama_cpp, tgi, transformers (cannot constrain: nothing sent, said once), auto (probed at
    # first use)
    server: Server = "openai"
    # bounds added to the schema sent (llm.constrained.bound_schema), as the transformers
    # backend's: a small model otherwise fills a free string until max_tokens runs out
    constraint_max_chars: PositiveInt | None = None
    constraint_min_chars: PositiveInt | None = None
    constraint_max_items: PositiveInt | None = None
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
        self._dialect: str | None = None if params.server == "auto" else params.server
        self._dialect_lock = threading.Lock()
        self._announced = params.server not in UNCONSTRAINED and params.server != "auto"
        self.dialect_notes: list[str] = []  # what the ``auto`` probe found, per form tried
        self.where = f"model {params.model}"  # the catalogue entry, named in errors (judges.X)
        self._image_rejection: str | None = None  # a text-only server: later images not sent

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
            # the dialect changes what the server is asked (openai: the keys of earlier versions)
            **({"server": p.server} if p.structured_output and p.server != "openai" else {}),
            **{k: v for k, v in self._bounds().items() if v is not None and p.structured_output},
        }

    def _bounds(self) -> dict[str, int | None]:
        p = self.params
        return {
            "constraint_max_chars": p.constraint_max_chars,
            "constraint_min_chars": p.constraint_min_chars,
            "constraint_max_items": p.constraint_max_items,
        }

    def dialect(self) -> str | None:
        """The schema form this client sends: ``server``, or for ``auto`` what the server
        honoured (probed once, on first use); None: the server cannot constrain (said once on
        stderr and in the run log)."""
        with self._dialect_lock:
            if self.params.server == "auto" and not self.dialect_notes:
                self._dialect, self.dialect_notes = probe(
                    self._http,
                    self.params.base_url.rstrip("/") + "/chat/completions",
                    self.params.model,
                    self._headers(),
                    self.params.timeout_s,
                    self.params.max_tokens_field,
                    deadline_s=self.params.deadline_s,  # every form together, not each
                    max_response_bytes=self.params.max_response_bytes,
                )
            dialect = None if self._dialect in UNCONSTRAINED else self._dialect
            if not self._announced:
                self._announced = True
                self._announce(dialect)
            return dialect

    def _announce(self, dialect: str | None) -> None:
        """Say once (stderr: the stage log; ``logs/runs.jsonl``: the run log) what the
        ``auto`` probe found, or that this server's answers are not schema-constrained."""
        from implicit_bench._util.redact import strip_userinfo
        from implicit_bench.runtime.runlog import log_run

        p = self.params
        where = f"{p.model} at {strip_userinfo(p.base_url.rstrip('/'))}"
        probed = f" (auto probe: {'; '.join(self.dialect_notes)})" if self.dialect_notes else ""
        if dialect is None:
            line = (
                f"structured output: {where} (server: {p.server}) cannot constrain answers to the "
                f"schema{probed}; answers are parsed leniently and invalid ones counted"
            )
        else:
            line = f"structured output: {where} (server: auto) honours the {dialect} form{probed}"
        print(line, file=sys.stderr, flush=True)
        log_run(
            "structured_output",
            {
                "model": p.model,
                "base_url": strip_userinfo(p.base_url.rstrip("/")),
                "server": p.server,
                "dialect": dialect,
                "constrained": dialect is not None,
                "probe": list(self.dialect_notes),
            },
        )

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
        dialect = self.dialect() if schema is not None and p.structured_output else None
        if dialect is not None:
            if any(v is not None for v in self._bounds().values()):
                from implicit_bench.backends.llm.constrained import bound_schema

                bounded = bound_schema(
                    schema, p.constraint_max_chars, p.constraint_max_items, p.constraint_min_chars
                )
                schema = {"name": schema.get("name", "answer"), "schema": bounded}
            body.update(schema_fields(dialect, schema))
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
        images = _has_images(messages)
        if images and self._image_rejection is not None:
            return "", self._image_rejection
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
            if images and result.rejected:
                from implicit_bench._util.redact import strip_userinfo

                self._image_rejection = (
                    f"{self.where}: {strip_userinfo(self.params.base_url.rstrip('/'))} does not "
                    f"take image parts (a text-only model or server?): {result.error}; serve a "
                    "vision-language model (requests with images are no longer sent to it)"
                )
                return "", self._image_rejection
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


def _has_images(messages: Messages) -> bool:
    """Whether a request holds image parts (a judge's request)."""
    return any(
        isinstance(m.get("content"), list)
        and any(isinstance(part, dict) and part.get("type") == "image_url" for part in m["content"])
        for m in messages
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
