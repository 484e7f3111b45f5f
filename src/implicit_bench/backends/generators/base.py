"""What every generator backend takes and returns.

A generator is created once per worker from its config (a dict from params, validated by the
backend's pydantic ``Config``) and then called on batches of ``RenderRequest``: it returns one
``RenderResult`` per request, in order. A refusal (the model or API declined the prompt) is a
result with status ``refused`` and its reason, never an exception and never an imputed image;
an exception means the whole batch failed and is retried by the executor; a result with status
``failed`` is one item that failed after the backend's own retries.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from implicit_bench.params import PositiveInt, StrictModel


@dataclass(frozen=True)
class RenderRequest:
    """One image to make: ``prompt`` rendered from ``seed`` (``item_id`` is for messages only)."""

    item_id: str
    prompt: str
    seed: int
    payload: Any = (
        None  # extra inputs for custom workers (e.g. steering texts); plain renders: None
    )


@dataclass(frozen=True)
class RenderResult:
    """``status`` ok (with PNG bytes), refused (with a reason), or failed.

    ``failed`` lets a backend that retries each request itself (HTTP APIs, where re-sending a
    whole batch would pay for its finished images again) report one item's failure while
    keeping the rest of the batch; ``attempts`` then says how often it tried.
    """

    status: str
    png: bytes | None = None
    reason: str | None = None
    width: int | None = None
    height: int | None = None
    attempts: int | None = None

    @classmethod
    def from_image(cls, image: Any) -> RenderResult:
        png = png_bytes(image)
        return cls("ok", png, None, int(image.width), int(image.height))

    @classmethod
    def refused(cls, reason: str) -> RenderResult:
        return cls("refused", None, reason)


def fields_of(*models: type[BaseModel]) -> frozenset[str]:
    """The field names of ``models`` (a backend's runtime keys from the models it inherits)."""
    return frozenset(name for model in models for name in model.model_fields)


class GeneratorParams(StrictModel):
    """Fields shared by all backends. ``batch_size``: requests per call (one forward pass).

    ``runtime_keys``: the config keys that change how fast images are made, never which
    images; ``settings_hash`` leaves them out. Each backend's config declares its own (this
    set plus its fields of that kind), so no list of them lives outside the backend."""

    runtime_keys: ClassVar[frozenset[str]] = frozenset({"batch_size"})

    backend: str
    batch_size: PositiveInt = 1


class Generator(Protocol):
    config: GeneratorParams

    @property
    def name(self) -> str:
        """Short identity written to the index ``generator`` column (backend:model)."""
        ...

    def generate(self, requests: Sequence[RenderRequest]) -> list[RenderResult]: ...

    def close(self) -> None: ...


MAX_ANSWER_PIXELS = 50_000_000  # an API answer image larger than this is never decoded


def open_answer_image(
    raw: bytes,
    expected: tuple[int, int] | None = None,
    max_side: int | None = None,
    max_pixels: int | None = None,
) -> Any:
    """The decoded PIL image of an API answer, its size checked from the header first (PIL
    opens lazily): ``expected`` (width, height) exactly, at most ``max_side`` pixels a side
    and ``max_pixels`` (default ``MAX_ANSWER_PIXELS``) in all, else a ValueError naming both
    sizes, before any pixel is decoded (a 12000x12000 JPEG never costs its 430 MB)."""
    from PIL import Image

    max_pixels = MAX_ANSWER_PIXELS if max_pixels is None else max_pixels
    image = Image.open(io.BytesIO(raw))
    width, height = image.size
    if width * height > max_pixels:
        raise ValueError(f"answer image is {width}x{height}, more than {max_pixels} pixels")
    if expected is not None and (width, height) != tuple(expected):
        raise ValueError(
            f"answer image is {width}x{height}, the size asked is {expected[0]}x{expected[1]}"
        )
    if max_side is not None and max(width, height) > max_side:
        raise ValueError(
            f"answer image is {width}x{height}, more than the {max_side} pixels a side asked"
        )
    image.load()
    return image


def png_bytes(image: Any) -> bytes:
    """Deterministic PNG encoding of a PIL image (RGB, no metadata)."""
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")
    return buf.getvalue()
