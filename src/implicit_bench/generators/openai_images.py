"""HTTP image-generation API with the OpenAI images API shape.

``POST {base_url}/images/generations`` with ``{"model", "prompt", "n": 1, "size", ...}``; the
answer holds ``data[0].b64_json``. Works with OpenAI (GPT Image), and any server or proxy that
speaks the same shape.

Refusals (Appendix E.4 step 3): a safety / content-policy rejection (HTTP 400 whose error code
or message says so), an answer with no image, or an image that does not decode is recorded
as status ``refused`` with its reason, never imputed. Other HTTP errors (429, 5xx, network) raise,
so that the executor retries them and, after its bounded attempts, records the item as failed.

The API key is read from the environment variable named by ``api_key_env``; it is never logged
or written anywhere. The API takes no seed: the seed only names the item (paper: "the seed is
used to vary the API call"); set ``send_seed: true`` for servers that accept a ``seed`` field.
"""

from __future__ import annotations

import base64
import io
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Literal

from implicit_bench.errors import ConfigError
from implicit_bench.generators.base import GeneratorConfig, RenderRequest, RenderResult
from implicit_bench.params import NonNegFloat, PositiveFloat, PositiveInt

# Error codes / message fragments that mean "the service declined this prompt".
REFUSAL_CODES = ("moderation_blocked", "content_policy_violation", "content_filter", "safety")
REFUSAL_WORDS = ("safety", "content policy", "moderation", "blocked", "refus", "not allowed")


class OpenAIImagesConfig(GeneratorConfig):
    backend: Literal["openai_images"] = "openai_images"
    model: str  # e.g. gpt-image-1
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str | None = "OPENAI_API_KEY"  # name of the env var holding the key (None: no auth)
    size: str | None = "1024x1024"
    quality: str | None = None  # e.g. "low" (paper: GPT Image 2, quality low)
    response_format: str | None = None  # "b64_json" for APIs that need it (DALL-E); GPT Image omits it
    send_seed: bool = False
    extra_body: dict[str, Any] = {}  # any other request field (output_format, moderation, ...)
    timeout_s: PositiveFloat = 300.0
    concurrency: PositiveInt = 4  # parallel requests within one batch
    max_attempts: PositiveInt = 3  # tries per request (429, 5xx, network); then the item is failed
    retry_backoff_s: NonNegFloat = 2.0  # sleep before retry n: backoff * 2**(n-1), or Retry-After


class ServiceError(RuntimeError):
    """A transient or unexpected HTTP failure: retried, then the item is recorded failed."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class OpenAIImagesGenerator:
    Config = OpenAIImagesConfig
    BATCH_INVARIANT = True  # each request stands alone: resume sends only the missing items

    def __init__(self, config: OpenAIImagesConfig):
        import httpx

        self.config = config
        headers = {"Content-Type": "application/json"}
        if config.api_key_env:
            key = os.environ.get(config.api_key_env)
            if not key:
                raise ConfigError(
                    f"generator {config.model}: environment variable {config.api_key_env} is not set"
                )
            headers["Authorization"] = f"Bearer {key}"
        self.client = httpx.Client(
            base_url=config.base_url.rstrip("/"), headers=headers, timeout=config.timeout_s
        )

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
        """One request, retried on transient errors; a final error is a failed result."""
        attempt = 0
        while True:
            attempt += 1
            try:
                result = self._request(request)
                return result if attempt == 1 else replace(result, attempts=attempt)
            except ServiceError as exc:
                if attempt >= self.config.max_attempts:
                    return RenderResult("failed", None, str(exc), attempts=attempt)
                wait = exc.retry_after
                if wait is None:
                    wait = self.config.retry_backoff_s * 2 ** (attempt - 1)
                time.sleep(min(wait, 120.0))

    def _request(self, request: RenderRequest) -> RenderResult:
        import httpx

        try:
            response = self.client.post("/images/generations", json=self.request_body(request))
        except httpx.HTTPError as exc:
            raise ServiceError(f"{type(exc).__name__}: {exc}") from None
        if response.status_code == 200:
            return self._parse(response)
        reason = _error_reason(response)
        if response.status_code in (400, 403, 422) and _is_refusal(reason):
            return RenderResult.refused(f"HTTP {response.status_code}: {reason}")
        retry_after = response.headers.get("Retry-After")
        raise ServiceError(
            f"HTTP {response.status_code}: {reason}",
            float(retry_after) if retry_after and retry_after.replace(".", "", 1).isdigit() else None,
        )

    def _parse(self, response: Any) -> RenderResult:
        from PIL import Image, UnidentifiedImageError

        try:
            payload = response.json()
        except ValueError:
            raise ServiceError(f"unreadable JSON answer: {response.text[:200]!r}") from None
        data = payload.get("data") or []
        b64 = data[0].get("b64_json") if data and isinstance(data[0], dict) else None
        if not b64:
            detail = data[0].get("revised_prompt") if data and isinstance(data[0], dict) else None
            reason = "no image in the answer" + (f" (revised_prompt: {detail})" if detail else "")
            return RenderResult.refused(reason)
        try:
            raw = base64.b64decode(b64, validate=True)
            image = Image.open(io.BytesIO(raw))
            image.load()
        except (ValueError, UnidentifiedImageError, OSError) as exc:
            return RenderResult.refused(f"answer image does not decode: {type(exc).__name__}")
        if image.format == "PNG" and image.mode == "RGB":
            return RenderResult("ok", raw, None, image.width, image.height)
        return RenderResult.from_image(image)  # JPEG / WebP / RGBA answers are stored as RGB PNG

    def generate(self, requests: Sequence[RenderRequest]) -> list[RenderResult]:
        if len(requests) <= 1 or self.config.concurrency <= 1:
            return [self.generate_one(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(requests))) as pool:
            return list(pool.map(self.generate_one, requests))

    def close(self) -> None:
        self.client.close()


def _error_reason(response: Any) -> str:
    try:
        error = response.json().get("error", {})
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
