"""Backend ``gemini``: Gemini image models (Nano Banana 2) through the ``generateContent`` REST API.

``POST {base_url}/models/{model}:generateContent`` with the prompt as one text part and
``generationConfig`` = ``{"responseModalities": [...], "imageConfig": {"aspectRatio",
"imageSize"}, "seed"}``; the image comes back as an inline base64 part
(``candidates[0].content.parts[].inlineData`` with an ``image/*`` ``mimeType``). The key is
sent in the ``x-goog-api-key`` header (never in the URL, so it cannot reach a logged URL),
read from the environment variable ``api_key_env`` and never stored.

Refusals (paper E.1: Nano Banana 2 returns no image for 21.2% of requests) are recorded as
status ``refused`` with their reason, as GPT Image refusals are: a ``promptFeedback.blockReason``;
a candidate whose ``finishReason`` is not ``STOP`` (SAFETY, PROHIBITED_CONTENT, IMAGE_SAFETY,
RECITATION, ...); no candidate; or an answer without an image part (its text, if any, is
kept in the reason). An image part that is there but broken (invalid base64, not an image,
truncated) is a failure retried under the one retry policy, never a refusal; HTTP errors
follow that policy too (408, 409, 429, 5xx retried; others fail the item at once).
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
)
from implicit_bench.backends.generators.batch import GeneratorBatchParams
from implicit_bench.params import NonNegFloat, NonNegInt, PositiveFloat, PositiveInt
from implicit_bench.runtime.httpretry import HttpParams, send


class GeminiImagesParams(GeneratorParams, HttpParams, GeneratorBatchParams):
    """``base_url``, ``api_key_env`` and the retry bounds: ``httpretry.HttpParams``;
    ``batch: true``: Gemini's batch mode, inlined (``vendor_batch``; docs/rendering.md)."""

    # how the requests travel (endpoint, retries, quotas, the vendor batch API), never what
    # they ask: out of the settings hash
    runtime_keys: ClassVar[frozenset[str]] = (
        GeneratorParams.runtime_keys | fields_of(HttpParams, GeneratorBatchParams) | {"concurrency"}
    )

    backend: Literal["gemini"] = "gemini"
    model: str  # e.g. gemini-3.1-flash-image-preview (Nano Banana 2)
    base_url: str = "https://generativelanguage.googleapis.com/v1beta"
    api_key_env: str | None = "GEMINI_API_KEY"
    aspect_ratio: str | None = "1:1"
    image_size: str | None = "1K"  # paper: image_size "1K"
    response_modalities: list[Literal["TEXT", "IMAGE"]] = ["TEXT", "IMAGE"]
    send_seed: bool = True  # generationConfig.seed: the seed varies the call (paper A.1)
    extra_generation_config: dict[str, Any] = {}  # any other generationConfig field
    safety_settings: list[dict[str, Any]] | None = None  # the request's safetySettings, as given
    concurrency: PositiveInt = (
        4  # requests in flight (streamed by render; the AIMD window's ceiling)
    )
    timeout_s: PositiveFloat = 300.0
    max_retries: NonNegInt = 2
    backoff_s: NonNegFloat = 2.0
    backoff_max_s: NonNegFloat = 120.0
    deadline_s: PositiveFloat = 1200.0
    batch_max_requests: PositiveInt = 50  # the inlined answers of a batch come in one poll

    @classmethod
    def auth_headers(cls, key: str) -> dict[str, str]:
        """The key in ``x-goog-api-key`` (never in the URL, so no logged URL holds it)."""
        return {"x-goog-api-key": key}


class GeminiImagesGenerator:
    Params = GeminiImagesParams
    BATCH_INVARIANT = True  # each request stands alone: resume sends only the missing items

    def __init__(self, config: GeminiImagesParams):
        self.config = config
        self.client = config.client(f"generator {config.model}", config.auth_headers)
        self.policy = config.retry_policy()
        self.throttle = config.throttle(config.concurrency)

    @property
    def name(self) -> str:
        return f"gemini:{self.config.model}"

    def request_body(self, request: RenderRequest) -> dict[str, Any]:
        cfg = self.config
        generation: dict[str, Any] = {"responseModalities": list(cfg.response_modalities)}
        image_config = {
            k: v for k, v in (("aspectRatio", cfg.aspect_ratio), ("imageSize", cfg.image_size)) if v
        }
        if image_config:
            generation["imageConfig"] = image_config
        if cfg.send_seed:
            generation["seed"] = int(request.seed)
        generation.update(cfg.extra_generation_config)
        body: dict[str, Any] = {
            "contents": [{"role": "user", "parts": [{"text": request.prompt}]}],
            "generationConfig": generation,
        }
        if cfg.safety_settings is not None:
            body["safetySettings"] = cfg.safety_settings
        return body

    def generate_one(self, request: RenderRequest) -> RenderResult:
        """One request under the retry policy; a broken image is asked again within its attempts."""
        path = f"/models/{self.config.model}:generateContent"
        attempts = 0
        while True:
            result = send(
                self.client,
                "POST",
                path,
                self.policy,
                json=self.request_body(request),
                throttle=self.throttle,
            )
            attempts += result.attempts
            parsed = (
                parse_answer(result.response, max_side(self.config.image_size))
                if result.ok
                else RenderResult("failed", None, result.error)
            )
            if parsed.status != "failed" or not result.ok or attempts >= self.policy.max_attempts:
                break
        return parsed if attempts == 1 else replace(parsed, attempts=attempts)

    def generate(self, requests: Sequence[RenderRequest]) -> list[RenderResult]:
        if self.config.batch:
            return self.generate_batch(requests)
        if len(requests) <= 1 or self.config.concurrency <= 1:
            return [self.generate_one(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(requests))) as pool:
            return list(pool.map(self.generate_one, requests))

    def generate_batch(self, requests: Sequence[RenderRequest]) -> list[RenderResult]:
        """The requests through Gemini's batch mode (inlined requests and responses)."""
        from implicit_bench.backends.generators.batch import generate_by_batch
        from implicit_bench.backends.vendor_batch.gemini import GeminiBatches

        cfg = self.config
        vendor = GeminiBatches(self.client, self.policy, cfg.model, cfg.batch_max_file_bytes)
        scope = {"vendor": "gemini", "base_url": cfg.base_url.rstrip("/"), "generator": self.name}
        side = max_side(cfg.image_size)

        def read(answer: Any) -> RenderResult:
            if answer.status is not None and 200 <= answer.status < 300:
                return parse_answer(answer.response(), side)
            return RenderResult("failed", None, answer.error or answer.describe())

        return generate_by_batch(
            requests, vendor, cfg, self.request_body, read, self.generate_one, scope
        )

    def close(self) -> None:
        self.client.close()


def max_side(image_size: str | None) -> int | None:
    """Pixels a side an answer to ``imageSize`` ("1K", "2K", "4K") may have: 1.5 x K x 1024
    (the widest aspect ratio, 21:9, is 1536 wide at 1K); None when unset."""
    match = re.fullmatch(r"\s*(\d+)\s*[kK]\s*", image_size or "")
    return int(1.5 * 1024 * int(match.group(1))) if match else None


def parse_answer(response: Any, side: int | None = None) -> RenderResult:
    """A ``generateContent`` answer -> ok (PNG), refused (with its reason) or failed (broken)."""
    try:
        payload = loads_strict(response.content)
    except ValueError:
        return RenderResult(
            "failed", None, redact(f"unreadable JSON answer: {response.text[:200]!r}")
        )
    if not isinstance(payload, dict):
        return RenderResult("failed", None, f"answer is {type(payload).__name__}, not an object")
    feedback = payload.get("promptFeedback")
    if isinstance(feedback, dict) and feedback.get("blockReason"):
        detail = feedback.get("blockReasonMessage")
        return RenderResult.refused(
            redact(
                f"prompt blocked: {feedback['blockReason']}" + (f" ({detail})" if detail else "")
            )
        )
    candidates = payload.get("candidates")
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        return RenderResult.refused("no candidate in the answer")
    candidate = candidates[0]
    finish = candidate.get("finishReason")
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    images = [p.get("inlineData") or p.get("inline_data") for p in parts]
    images = [
        d
        for d in images
        if isinstance(d, dict)
        and str(d.get("mimeType") or d.get("mime_type") or "").startswith("image/")
    ]
    text = " ".join(p["text"] for p in parts if isinstance(p.get("text"), str)).strip()
    if finish is not None and str(finish).upper() != "STOP":
        return RenderResult.refused(
            redact(f"finishReason {finish}" + (f": {text[:200]}" if text else ""))
        )
    if not images:
        return RenderResult.refused(
            redact("no image in the answer" + (f" (text: {text[:200]})" if text else ""))
        )
    return decode_image(images[0].get("data"), side)


def decode_image(b64: Any, side: int | None = None) -> RenderResult:
    """Base64 image bytes -> ok result (RGB PNG), or a failed result when broken (retried)."""
    from PIL import UnidentifiedImageError

    from implicit_bench.backends.generators.base import open_answer_image, png_bytes

    if not isinstance(b64, str) or not b64:
        return RenderResult("failed", None, "image part without data")
    try:
        raw = base64.b64decode(b64, validate=True)
        image = open_answer_image(raw, max_side=side)
    except (ValueError, UnidentifiedImageError, OSError) as exc:
        return RenderResult(
            "failed", None, f"answer image does not decode: {type(exc).__name__}: {str(exc)[:200]}"
        )
    if image.format == "PNG" and image.mode == "RGB":
        return RenderResult("ok", raw, None, image.width, image.height)
    return RenderResult("ok", png_bytes(image), None, int(image.width), int(image.height))
