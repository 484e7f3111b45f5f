"""Backend ``openai``: any OpenAI-compatible chat endpoint that accepts images.

vLLM (``vllm serve Qwen/Qwen3-VL-30B-A3B-Instruct``), SGLang, and vendor APIs that speak the
``/v1/chat/completions`` protocol. Each request is one user message holding the image as a
base64 ``data:`` URL (downscaled so that its longer side is at most ``max_image_side``, JPEG
quality ``jpeg_quality``; paper: 768, 85) and the prompt text.

The HTTP transport, the project's one retry policy (``implicit_bench.runtime.httpretry``: 408, 409,
429, 5xx and transport errors retried, other statuses final, an overall ``deadline_s`` per
request) and the API key handling are those of the LLM backend
(:class:`implicit_bench.backends.llm.openai.OpenAIClient`): the key is read at call time from the
environment variable named by ``api_key_env`` and never stored in params, cache keys, the
cache, logs or any output.
"""

from __future__ import annotations

import base64
import io
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from implicit_bench.backends.judges.base import JudgeBackend, JudgeParams, JudgeRequest, open_image
from implicit_bench.backends.vendor_batch.base import BatchAnswer, BatchParams
from implicit_bench.params import NonNegFloat, PositiveInt
from implicit_bench.runtime.dialects import Server
from implicit_bench.runtime.httpretry import HttpParams, describe


class OpenAIJudgeParams(JudgeParams, HttpParams, BatchParams):
    """``base_url``, ``api_key_env`` and the retry bounds: ``httpretry.HttpParams``; ``batch``
    and its bounds: ``vendor_batch.base.BatchParams`` (docs/judging.md, "Vendor batch APIs")."""

    chat_completions: ClassVar[bool] = True

    backend: Literal["openai"] = "openai"
    temperature: NonNegFloat | None = 0.0  # null: omit (models that accept only their default)
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    seed: int | None = None
    extra_body: dict[str, Any] = {}  # e.g. {"reasoning_effort": "none"}
    max_image_side: PositiveInt | None = 768  # null: send the stored PNG unchanged
    jpeg_quality: Annotated[int, Field(ge=1, le=100)] = 85
    image_detail: Literal["auto", "low", "high"] | None = None
    concurrency: PositiveInt = 4  # parallel requests per batch
    # send each task's answer schema as response_format json_schema (vLLM guided decoding,
    # OpenAI structured outputs); the lenient parser still reads the answer (docs/judging.md)
    structured_output: bool = False
    # where the server reads the schema (implicit_bench.runtime.dialects; docs/judging.md)
    server: Server = "openai"


def image_data_url(data: bytes, max_side: int | None, quality: int) -> str:
    """The image as a ``data:`` URL: JPEG downscaled to ``max_side``, or the original PNG."""
    if max_side is None:
        return "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    image = open_image(data, max_side)
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


class OpenAIJudge(JudgeBackend):
    backend = "openai"
    Params = OpenAIJudgeParams

    def __init__(self, params: OpenAIJudgeParams):
        super().__init__(params)
        self.params: OpenAIJudgeParams = params
        self._client = None
        self.where = f"judge {params.model}"  # judges.NAME once the stage built it

    def _transport(self):
        if self._client is None:
            from implicit_bench.backends.llm.openai import OpenAIClient, OpenAIParams

            p = self.params
            self._client = OpenAIClient(
                OpenAIParams(
                    backend="openai",
                    model=p.model,
                    max_tokens=p.max_new_tokens,
                    cache=None,
                    **{k: getattr(p, k) for k in HttpParams.model_fields},
                    temperature=p.temperature,
                    max_tokens_field=p.max_tokens_field,
                    seed=p.seed,
                    extra_body=p.extra_body,
                    concurrency=p.concurrency,
                    structured_output=p.structured_output,
                    server=p.server,
                )
            )
            self._client.where = self.where
        return self._client

    def load(self) -> None:
        self._transport()

    def identity(self) -> dict[str, Any]:
        p = self.params
        return {
            "backend": self.backend,
            "model": p.model,
            "base_url": p.base_url.rstrip("/"),
            "max_image_side": p.max_image_side,
            "jpeg_quality": p.jpeg_quality if p.max_image_side is not None else None,
            "image_detail": p.image_detail,
        }

    def decoding(self) -> dict[str, Any]:
        p = self.params
        return {
            "temperature": p.temperature,
            "max_tokens": p.max_new_tokens,
            "max_tokens_field": p.max_tokens_field,
            "seed": p.seed,
            "extra_body": p.extra_body,
            **({"structured_output": True} if p.structured_output else {}),
            **({"server": p.server} if p.structured_output and p.server != "openai" else {}),
        }

    def messages(self, request: JudgeRequest) -> list[dict[str, Any]]:
        p = self.params
        image_url: dict[str, Any] = {
            "url": image_data_url(request.image, p.max_image_side, p.jpeg_quality)
        }
        if p.image_detail is not None:
            image_url["detail"] = p.image_detail
        return [
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": image_url},
                    {"type": "text", "text": request.prompt},
                ],
            }
        ]

    def request_body(self, request: JudgeRequest) -> dict[str, Any]:
        """The chat-completions body of one request (a batch's request line holds it too)."""
        schema = request.schema if self.params.structured_output else None
        return self._transport()._body(self.messages(request), self.params.max_new_tokens, schema)

    def batch_answer(self, answer: BatchAnswer) -> tuple[str, str | None]:
        """A batch's answer read as the synchronous endpoint's: text, or an error (a refusal,
        a non-2xx status: not cached, asked again by the next run, as today)."""
        response = answer.response()
        if not 200 <= response.status_code < 300:
            return "", describe(response)
        return self._transport().read_answer(response)

    def batch_vendor(self):
        """The OpenAI Batch API of ``base_url`` (``/v1/chat/completions`` requests)."""
        from implicit_bench.backends.vendor_batch.openai import OpenAIBatches

        p = self.params
        client = p.client(f"judge {p.model}", p.auth_headers)
        return OpenAIBatches(
            client, p.retry_policy(), "/v1/chat/completions", p.batch_max_file_bytes
        )

    def answer(self, batch: list[JudgeRequest]) -> list[tuple[str, str | None]]:
        client = self._transport()
        schemas = [r.schema for r in batch] if self.params.structured_output else None
        return client._generate(
            [self.messages(r) for r in batch], self.params.max_new_tokens, schema=schemas
        )

    def close(self) -> None:
        self._client = None
