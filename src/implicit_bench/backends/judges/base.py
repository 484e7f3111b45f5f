"""The judge backend interface: a vision-language model answering (prompt, image) requests.

A backend only answers; caching, parsing and bookkeeping live in
:mod:`implicit_bench.backends.judges.stage`. ``identity()`` and ``decoding()`` name everything that
determines an answer (never secrets): with the task, the prompt text and the image sha256 they
form the cache key of a judgement.
"""

from __future__ import annotations

import hashlib
import io
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from implicit_bench.params import PositiveInt, StrictModel


@dataclass(frozen=True)
class JudgeRequest:
    prompt: str
    image: bytes  # encoded image (PNG from the image store)
    schema: dict[str, Any] | None = None  # the task's answer schema (structured output), if any


class JudgeParams(StrictModel):
    """Keys every judge backend block has (an entry of the top-level ``judges`` catalogue)."""

    backend: str
    model: str
    max_new_tokens: PositiveInt = 256
    batch_size: PositiveInt = 8


class JudgeBackend(ABC):
    """A VLM judge: ``answer`` a batch of requests -> ``(text, error)`` per request."""

    backend: str = "base"
    Params: type[JudgeParams] = JudgeParams

    def __init__(self, params: JudgeParams):
        self.params = params

    @property
    def model(self) -> str:
        return self.params.model

    def load(self) -> None:
        """Heavy initialisation (model weights, HTTP client); called once per worker."""
        return None

    def close(self) -> None:
        """Free what ``load`` took."""
        return None

    def identity(self) -> dict[str, Any]:
        """Everything about the model and its input preprocessing that determines answers."""
        return {"backend": self.backend, "model": self.params.model}

    def decoding(self) -> dict[str, Any]:
        return {"greedy": True, "max_new_tokens": self.params.max_new_tokens}

    @abstractmethod
    def answer(self, batch: list[JudgeRequest]) -> list[tuple[str, str | None]]:
        """Answer a batch; a request that failed gives ``("", reason)`` (not cached)."""


def peak_gpu_gib() -> float | None:
    """torch's peak CUDA memory of this process in GiB (NegT2IBench Tables 2, 8), or None where
    torch is absent or never used CUDA (an HTTP judge, a CPU run). Wall-clock-like: never in a
    tracked output."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return None
    return float(torch.cuda.max_memory_allocated()) / 2**30


def local_fingerprint(model_ref: str) -> str | None:
    """A content fingerprint of a local model directory (None for hub ids).

    Files under 64 MiB are hashed whole; larger ones by size and their first and last MiB, so
    a rebuilt local model (another seed, new weights) never reuses old cached answers.
    """
    path = Path(model_ref)
    if not path.is_dir():
        return None
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        size = file.stat().st_size
        digest.update(f"{file.relative_to(path).as_posix()}:{size}\n".encode())
        with open(file, "rb") as fh:
            if size <= 64 << 20:
                digest.update(fh.read())
            else:
                digest.update(fh.read(1 << 20))
                fh.seek(size - (1 << 20))
                digest.update(fh.read())
    return digest.hexdigest()


def open_image(data: bytes, max_side: int | None = None):
    """Decode image bytes to RGB, downscaled so that its longer side is at most ``max_side``."""
    from PIL import Image

    image = Image.open(io.BytesIO(data)).convert("RGB")
    if max_side and max(image.size) > max_side:
        scale = max_side / max(image.size)
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    return image
