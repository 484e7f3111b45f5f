"""HTTP image-generation API with the OpenAI images API shape.

``POST {base_url}/images/generations`` with ``{"model", "prompt", "n": 1, "size", ...}``; the
answer holds ``data[0].b64_json``. Works with OpenAI (GPT Image), and any server or proxy that
speaks the same shape.

Refusals (Appendix E.4 step 3): a safety / content-policy rejection (HTTP 400 whose error code or
message says so) or an answer with no image is recorded as status ``refused`` with its reason, never
imputed. An image that is there but broken (invalid base64, not an image, truncated) is a transport
fault, not the model's decision: it is retried under the same policy and, if it stays broken, the
item is ``failed`` (tried again by the next run). Requests follow the project's one retry policy
(``implicit_bench.runtime.httpretry``): only transport errors and HTTP 408, 409, 429 and 5xx are
retried (``max_retries`` after the first, ``Retry-After`` honoured, waits capped at
``backoff_max_s``), within an overall ``deadline_s`` per request; any other status (401, 404, ...)
fails the item at once. A failed item is recorded ``failed`` with its (redacted) reason and tried
again by the next run (``render.retry_failed``).

The API key is read from the environment variable named by ``api_key_env``; it is never logged
or written anywhere. The API takes no seed: the seed only names the item (paper: "the seed is
used to vary the API call"); set ``send_seed: true`` for servers that accept a ``seed`` field.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, ClassVar, Literal

from implicit_bench._util.jsonparse import loads_strict
from implicit_bench._util.redact import redact
from implicit_bench.backends.generators.base import (
    GeneratorParams,
    RenderRequest,
    RenderResult,
    fields_of,
    open_answer_image,
)
from implicit_bench.backends.generators.batch import GeneratorBatchParams
from implicit_bench.errors import ConfigError
from implicit_bench.params import NonNegFloat, NonNegInt, PositiveFloat, PositiveInt
from implicit_bench.runtime.httpretry import CallResult, HttpParams, send

# Error codes / message fragments that mean "the service declined this prompt".
REFUSAL_CODES = ("moderation_blocked", "content_policy_violation", "content_filter", "safety")
REFUSAL_WORDS = ("safety", "content policy", "moderation", "blocked", "refus", "not allowed")


class OpenAIImagesParams(GeneratorParams, HttpParams, GeneratorBatchParams):
    """``base_url``, ``api_key_env`` and the retry bounds: ``httpretry.HttpParams`` (longer
    defaults here: an image takes longer than a chat answer); ``batch: true``: the OpenAI
    Batch API (``vendor_batch``; docs/rendering.md, "Vendor batch APIs")."""

    # how the requests travel (endpoint, retries, quotas, the vendor batch API), never what
    # they ask: out of the settings hash
    runtime_keys: ClassVar[frozenset[str]] = (
        GeneratorParams.runtime_keys | fields_of(HttpParams, GeneratorBatchParams) | {"concurrency"}
    )

    backend: Literal["openai_images"] = "openai_images"
    model: str  # e.g. gpt-image-1
    size: str | None = "1024x1024"
    quality: str | None = None  # e.g. "low" (paper: GPT Image 2, quality low)
    response_format: str | None = (
        None  # "b64_json" for APIs that need it (DALL-E); GPT Image omits it
    )
    send_seed: bool = False
    extra_body: dict[str, Any] = {}  # any other request field (output_format, moderation, ...)
    concurrency: PositiveInt = (
        4  # requests in flight (streamed by render; the AIMD window's ceiling)
    )
    timeout_s: PositiveFloat = 300.0
    max_retries: NonNegInt = 2  # then the item is failed (and tried again by the next run)
    backoff_s: NonNegFloat = 2.0
    backoff_max_s: NonNegFloat = 120.0
    deadline_s: PositiveFloat = 1200.0
    batch_max_requests: PositiveInt = 50  # an output file holds every image: ~2 MB each


class OpenAIImagesGenerator:
    Params = OpenAIImagesParams
    BATCH_INVARIANT = True  # each request stands alone: resume sends only the missing items

    def __init__(self, config: OpenAIImagesParams):
        self.config = config
        self.client = config.client(f"generator {config.model}", config.auth_headers)
        self.policy = config.retry_policy()
        self.throttle = config.throttle(config.concurrency)

    @property
    def name(self) -> str:
        return f"openai_images:{self.config.model}"

    def request_body(self, request: RenderRequest) -> dict[str, Any]:
        cfg = self.config
        body: dict[str, Any] = {"model": cfg.model, "prompt": request.prompt, "n": 1}
        for key in ("size", "quality", "response_format"):
            if getattr(cfg, key) is not None:
                body[key] = getattr(cfg, key)
        if cfg.send_seed:
            body["seed"] = int(request.seed)
        body.update(cfg.extra_body)
        return body

    def generate_one(self, request: RenderRequest) -> RenderResult:
        """One request under the retry policy; a final error is a failed result; a broken
        image is asked again within the same attempts."""
        attempts = 0
        while True:
            result = send(
                self.client,
                "POST",
                "/images/generations",
                self.policy,
                json=self.request_body(request),
                throttle=self.throttle,
            )
            attempts += result.attempts
            parsed = self._answer(result)
            if parsed.status != "failed" or not result.ok or attempts >= self.policy.max_attempts:
                break
        return parsed if attempts == 1 else replace(parsed, attempts=attempts)

    def _answer(self, result: Any) -> RenderResult:
        response = result.response
        if result.ok:
            parsed = self._parse(response)
        elif (
            response is not None
            and response.status_code in (400, 403, 422)
            and _is_refusal(_error_reason(response))
        ):
            parsed = RenderResult.refused(
                redact(f"HTTP {response.status_code}: {_error_reason(response)}")
            )
        else:
            parsed = RenderResult("failed", None, result.error)
        return parsed

    def _parse(self, response: Any) -> RenderResult:
        from PIL import UnidentifiedImageError

        try:
            payload = loads_strict(response.content)
        except ValueError:
            return RenderResult(
                "failed", None, redact(f"unreadable JSON answer: {response.text[:200]!r}")
            )
        data = payload.get("data") if isinstance(payload, dict) else None
        data = data if isinstance(data, list) else []
        b64 = data[0].get("b64_json") if data and isinstance(data[0], dict) else None
        if not b64 and data and isinstance(data[0], dict) and data[0].get("url"):
            raise ConfigError(
                f'generator {self.config.model}: the answer is {{"data": [{{"url": ...}}]}} '
                f"(an image URL, no b64_json); set response_format: b64_json in its block"
            )
        if not b64 or not isinstance(b64, str):
            detail = data[0].get("revised_prompt") if data and isinstance(data[0], dict) else None
            reason = "no image in the answer" + (f" (revised_prompt: {detail})" if detail else "")
            return RenderResult.refused(reason)
        try:
            raw = base64.b64decode(b64, validate=True)
            image = open_answer_image(raw, _size(self.config.size))
        except (
            ValueError,
            UnidentifiedImageError,
            OSError,
        ) as exc:  # a broken answer: retried, never a refusal
            return RenderResult(
                "failed",
                None,
                f"answer image does not decode: {type(exc).__name__}: {str(exc)[:200]}",
            )
        if image.format == "PNG" and image.mode == "RGB":
            return RenderResult("ok", raw, None, image.width, image.height)
        return RenderResult.from_image(image)  # JPEG / WebP / RGBA answers are stored as RGB PNG

    def generate(self, requests: Sequence[RenderRequest]) -> list[RenderResult]:
        if self.config.batch:
            return self.generate_batch(requests)
        if len(requests) <= 1 or self.config.concurrency <= 1:
            return [self.generate_one(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(requests))) as pool:
            return list(pool.map(self.generate_one, requests))

    def generate_batch(self, requests: Sequence[RenderRequest]) -> list[RenderResult]:
        """The requests through the OpenAI Batch API (``/v1/images/generations`` lines)."""
        from implicit_bench.backends.generators.batch import generate_by_batch
        from implicit_bench.backends.vendor_batch.openai import OpenAIBatches

        cfg = self.config
        vendor = OpenAIBatches(
            self.client, self.policy, "/v1/images/generations", cfg.batch_max_file_bytes
        )
        scope = {"vendor": "openai", "base_url": cfg.base_url.rstrip("/"), "generator": self.name}
        return generate_by_batch(
            requests,
            vendor,
            cfg,
            self.request_body,
            lambda a: self._answer(CallResult(a.response(), 1, a.error or a.describe())),
            self.generate_one,
            scope,
        )

    def close(self) -> None:
        self.client.close()


def _size(size: str | None) -> tuple[int, int] | None:
    """(width, height) of a ``size`` like ``1024x1024``; None for ``auto`` or unset."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", size or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _error_reason(response: Any) -> str:
    try:
        error = loads_strict(response.content).get("error", {})
    except ValueError:
        return response.text[:300] or "no body"
    if isinstance(error, dict):
        code = error.get("code") or error.get("type") or ""
        message = error.get("message") or ""
        return f"{code}: {message}".strip(": ") or "no message"
    return str(error)[:300]


def _is_refusal(reason: str) -> bool:
    low = reason.lower()
    return any(code in low for code in REFUSAL_CODES) or any(word in low for word in REFUSAL_WORDS)
