"""The ``gemini`` image backend (generateContent, inline base64 images) against a
real server on 127.0.0.1."""

from __future__ import annotations

import base64
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest
from PIL import Image

from implicit_bench.backends.generators import RenderRequest, create_generator, validate_config
from implicit_bench.backends.generators.gemini import GeminiImagesGenerator
from implicit_bench.render.params import RenderParams
from implicit_bench.render.stage import render_all
from implicit_bench.runtime.execution import ExecutorConfig
from tests.helpers.paths import REPO_ROOT
from tests.helpers.render_fixtures import units_frame

KEY = "AIza-test-not-a-real-key-0042"
MODEL = "gemini-3.1-flash-image-preview"


def _b64(color, fmt="PNG") -> str:
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), color).save(buf, format=fmt)
    return base64.b64encode(buf.getvalue()).decode()


def _image_answer(data: str, mime: str = "image/png") -> dict:
    return {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "Here it is."},
                        {"inlineData": {"mimeType": mime, "data": data}},
                    ],
                },
                "finishReason": "STOP",
            }
        ]
    }


class _Handler(BaseHTTPRequestHandler):
    calls: list[dict] = []
    seen: set[str] = set()

    def log_message(self, *args):
        pass

    def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append({"path": self.path, "headers": dict(self.headers), "body": body})
        if self.path != f"/v1beta/models/{MODEL}:generateContent":
            return self._send(
                404, {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}
            )
        if self.headers.get("x-goog-api-key") != KEY:
            return self._send(
                403,
                {
                    "error": {
                        "code": 403,
                        "message": "API key not valid",
                        "status": "PERMISSION_DENIED",
                    }
                },
            )
        prompt = body["contents"][0]["parts"][0]["text"]
        first = prompt not in type(self).seen
        type(self).seen.add(prompt)
        if "Black" in prompt:
            return self._send(200, {"promptFeedback": {"blockReason": "SAFETY"}})
        if "Muslim" in prompt:
            return self._send(200, {"candidates": [{"finishReason": "IMAGE_SAFETY"}]})
        if "Christian" in prompt:
            return self._send(
                200,
                {
                    "candidates": [
                        {
                            "content": {"parts": [{"text": "I can't create that image."}]},
                            "finishReason": "STOP",
                        }
                    ]
                },
            )
        if prompt == "A photo of a nurse" and first:
            return self._send(
                429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}, {"Retry-After": "0"}
            )
        if prompt == "A photo of a engineer" and first:
            return self._send(200, _image_answer("!!not base64!!"))
        if prompt == "A photo of a engineer, a woman":
            return self._send(
                200, _image_answer(_b64((1, 2, 3), "JPEG")[:60])
            )  # truncated, every time
        seed = body["generationConfig"].get("seed", 0)
        return self._send(
            200, _image_answer(_b64((len(prompt), seed % 256, 7), "JPEG"), "image/jpeg")
        )


@pytest.fixture
def server():
    _Handler.calls = []
    _Handler.seen = set()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1beta"
    httpd.shutdown()
    httpd.server_close()


def _config(base_url: str, **kw) -> dict:
    return {
        "backend": "gemini",
        "model": MODEL,
        "base_url": base_url,
        "api_key_env": "TEST_GEMINI_KEY",
        "concurrency": 3,
        "max_retries": 1,
        "backoff_s": 0.0,
        **kw,
    }


def test_render_records_refusals_with_reasons_and_retries_broken_images(
    server, tmp_path, monkeypatch
):
    monkeypatch.setenv("TEST_GEMINI_KEY", KEY)
    params = RenderParams(
        configs={"nb2": _config(server)}, seeds=[42], executor=ExecutorConfig(progress=False)
    )
    results = render_all(params, units_frame(), tmp_path / "images")["nb2"]
    # u0 nurse: 3 ok (the first neutral request got a 429, retried); u1: stereotype "Black" blocked
    # (promptFeedback); u2: "Muslim" finishReason IMAGE_SAFETY, "Christian" text without image;
    # u3: neutral broken base64 once then ok, anti "woman" truncated twice -> failed
    assert results["by_status"] == {"ok": 8, "refused": 3, "failed": 1}
    index = pd.read_parquet(tmp_path / "images" / "nb2" / "index.parquet").set_index(
        ["unit_id", "variant"]
    )
    assert index.loc[("u1", "stereotype"), "reason"] == "prompt blocked: SAFETY"
    assert index.loc[("u2", "stereotype"), "reason"] == "finishReason IMAGE_SAFETY"
    assert "no image in the answer" in index.loc[("u2", "anti_stereotype"), "reason"]
    assert "I can't create that image." in index.loc[("u2", "anti_stereotype"), "reason"]
    failed = index.loc[("u3", "anti_stereotype")]
    assert (
        failed["status"] == "failed"
        and "does not decode" in failed["reason"]
        and failed["attempts"] == 2
    )
    healed = index.loc[("u3", "neutral")]
    assert healed["status"] == "ok" and healed["attempts"] == 2
    assert index.loc[("u0", "neutral"), "attempts"] == 2  # the 429, retried
    assert results["refusals_by_bias_type"]["religion"]["refused"] == 2
    # every request: key only in the header, never in the URL; seed and image config sent
    for call in _Handler.calls:
        assert KEY not in call["path"] and "key=" not in call["path"]
        config = call["body"]["generationConfig"]
        assert config["seed"] == 42 and config["imageConfig"] == {
            "aspectRatio": "1:1",
            "imageSize": "1K",
        }
        assert config["responseModalities"] == ["TEXT", "IMAGE"]
    assert KEY not in json.dumps(index.reset_index().astype(str).to_dict("records"))
    # resume: only the failed item is asked again; refusals are final
    before = len(_Handler.calls)
    render_all(params, units_frame(), tmp_path / "images")
    assert len(_Handler.calls) - before == 2  # the truncated item, twice (max_retries 1)


def test_http_errors_and_missing_key(server, monkeypatch):
    from implicit_bench.errors import ConfigError

    monkeypatch.delenv("TEST_GEMINI_KEY", raising=False)
    with pytest.raises(ConfigError, match="TEST_GEMINI_KEY"):
        create_generator(_config(server))
    monkeypatch.setenv("TEST_GEMINI_KEY", "wrong")
    gen = create_generator(_config(server))
    assert isinstance(gen, GeminiImagesGenerator) and gen.name == f"gemini:{MODEL}"
    result = gen.generate([RenderRequest("x", "A photo of a cat", 1)])[0]
    assert (
        result.status == "failed" and "HTTP 403" in result.reason and len(_Handler.calls) == 1
    )  # final at once
    monkeypatch.setenv("TEST_GEMINI_KEY", KEY)
    wrong_model = create_generator(_config(server, model="nope"))
    assert wrong_model.generate([RenderRequest("x", "A photo of a cat", 1)])[0].status == "failed"
    ok = create_generator(_config(server, send_seed=False, image_size=None)).generate(
        [RenderRequest("x", "A photo of a cat", 5)]
    )[0]
    assert ok.status == "ok" and ok.png.startswith(b"\x89PNG") and (ok.width, ok.height) == (16, 16)
    body = _Handler.calls[-1]["body"]["generationConfig"]
    assert "seed" not in body and body["imageConfig"] == {"aspectRatio": "1:1"}


def test_config_rejects_unknown_keys_and_the_paper_profile_uses_it():
    from implicit_bench.errors import ConfigError

    with pytest.raises((ConfigError, ValueError)):
        validate_config({"backend": "gemini", "model": MODEL, "imagesize": "1K"})
    import yaml

    profile = yaml.safe_load((REPO_ROOT / "profiles" / "paper.yaml").read_text())
    entry = profile["generators"]["nano_banana_2"]
    cfg = validate_config(entry)
    assert (
        cfg.backend == "gemini"
        and cfg.model == MODEL
        and cfg.image_size == "1K"
        and cfg.aspect_ratio == "1:1"
    )
