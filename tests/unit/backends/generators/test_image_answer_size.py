"""Image API answers: the size is checked from the header before any pixel is decoded (a 1x1
or 9000x9000 PNG for ``size: 1024x1024`` and a 12000x12000 JPEG for Gemini's 1K are failed
items), Gemini's finishReason is case-insensitive, and DALL-E's ``url`` answer is an error
naming the shape."""

from __future__ import annotations

import base64
import io
import json

import httpx
import pytest
from PIL import Image

from implicit_bench.backends.generators import base as generators_base
from implicit_bench.backends.generators.gemini import max_side, parse_answer
from implicit_bench.backends.generators.openai_images import (
    OpenAIImagesGenerator,
    OpenAIImagesParams,
)
from implicit_bench.errors import ConfigError


def _png(width: int, height: int, fmt: str = "PNG") -> str:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (10, 20, 30)).save(buf, format=fmt)
    return base64.b64encode(buf.getvalue()).decode()


def _openai(size: str | None = "1024x1024") -> OpenAIImagesGenerator:
    return OpenAIImagesGenerator(
        OpenAIImagesParams(model="m", base_url="http://127.0.0.1:9", api_key_env=None, size=size)
    )


def _response(payload: dict) -> httpx.Response:
    return httpx.Response(200, content=json.dumps(payload).encode())


def _no_load(monkeypatch) -> list[object]:
    loads: list[object] = []
    real = Image.Image.load

    def load(self, *args):
        loads.append(self.size)
        return real(self, *args)

    monkeypatch.setattr(Image.Image, "load", load)
    return loads


@pytest.mark.parametrize("width,height", [(1, 1), (9000, 9000), (1024, 1536)])
def test_openai_wrong_size_is_failed_before_decoding(monkeypatch, width, height):
    b64 = _png(width, height)
    loads = _no_load(monkeypatch)
    result = _openai()._parse(_response({"data": [{"b64_json": b64}]}))
    assert result.status == "failed" and f"{width}x{height}" in result.reason
    assert (width, height) not in loads  # refused from the header, never decoded


def test_openai_right_size_and_auto_are_ok():
    assert _openai()._parse(_response({"data": [{"b64_json": _png(1024, 1024)}]})).status == "ok"
    assert _openai("auto")._parse(_response({"data": [{"b64_json": _png(8, 8)}]})).status == "ok"


def test_pixel_cap_applies_without_a_size(monkeypatch):
    monkeypatch.setattr(generators_base, "MAX_ANSWER_PIXELS", 100)
    result = _openai(None)._parse(_response({"data": [{"b64_json": _png(20, 20)}]}))
    assert result.status == "failed" and "more than 100 pixels" in result.reason


def test_dalle_url_answer_is_an_error_naming_the_shape():
    with pytest.raises(ConfigError, match="b64_json") as info:
        _openai()._parse(_response({"data": [{"url": "https://x/y.png"}]}))
    assert "url" in str(info.value) and "response_format" in str(info.value)


def _gemini(b64: str, finish: str = "STOP", mime: str = "image/png") -> httpx.Response:
    return _response(
        {
            "candidates": [
                {
                    "finishReason": finish,
                    "content": {"parts": [{"inlineData": {"mimeType": mime, "data": b64}}]},
                }
            ]
        }
    )


def test_gemini_oversized_jpeg_is_refused_before_decoding(monkeypatch):
    b64 = _png(12000, 12000, "JPEG")
    loads = _no_load(monkeypatch)
    result = parse_answer(_gemini(b64, mime="image/jpeg"), max_side("1K"))
    assert result.status == "failed" and "12000x12000" in result.reason
    assert not loads


@pytest.mark.parametrize("finish", ["STOP", "stop", "Stop"])
def test_gemini_finish_reason_is_case_insensitive(finish):
    result = parse_answer(_gemini(_png(1024, 1024), finish), max_side("1K"))
    assert result.status == "ok" and (result.width, result.height) == (1024, 1024)


def test_gemini_other_finish_reason_still_refused():
    assert parse_answer(_gemini(_png(8, 8), "SAFETY")).status == "refused"


def test_gemini_max_side():
    assert max_side("1K") == 1536 and max_side("2k") == 3072 and max_side(None) is None
