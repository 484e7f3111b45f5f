"""The OpenAI-images-shaped HTTP backend against a real server on 127.0.0.1."""

from __future__ import annotations

import base64
import io
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest
from PIL import Image

from implicit_bench.backends.generators import RenderRequest, create_generator
from implicit_bench.errors import ConfigError
from implicit_bench.render.params import RenderParams
from implicit_bench.render.stage import render_all
from implicit_bench.runtime.execution import ExecutorConfig
from tests.helpers.render_fixtures import units_frame

KEY = "sk-test-not-a-real-key-7f3a"


# the size the generator asks (size: 1024x1024): an answer of another size is a failed item
def _image(color, fmt="PNG", mode="RGB") -> str:
    buf = io.BytesIO()
    Image.new(mode, (1024, 1024), color).save(buf, format=fmt)
    return base64.b64encode(buf.getvalue()).decode()


class _Handler(BaseHTTPRequestHandler):
    calls: list[dict] = []
    flaky_seen: set[str] = set()

    def log_message(self, *args):  # keep test output quiet
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
        type(self).calls.append(body)
        if self.path != "/v1/images/generations":
            return self._send(404, {"error": {"message": "not found"}})
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            return self._send(401, {"error": {"code": "invalid_api_key", "message": "bad key"}})
        prompt = body["prompt"]
        if "Muslim" in prompt or "Black" in prompt:  # the service declines these
            return self._send(
                400,
                {
                    "error": {
                        "code": "moderation_blocked",
                        "message": "Your request was rejected by the safety system.",
                    }
                },
            )
        if "Christian" in prompt:  # silently drops the image
            return self._send(200, {"created": 1, "data": []})
        if "engineer, a woman" in prompt:  # always a server error
            return self._send(500, {"error": {"message": "upstream overloaded"}})
        if "engineer, a man" in prompt and prompt not in type(self).flaky_seen:  # throttled once
            type(self).flaky_seen.add(prompt)
            return self._send(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
        if "nurse" in prompt:
            return self._send(200, {"data": [{"b64_json": _image((200, 10, 10), "JPEG")}]})
        return self._send(
            200, {"data": [{"b64_json": _image((len(prompt), 0, body.get("seed", 0) % 256))}]}
        )


@pytest.fixture
def server():
    _Handler.calls, _Handler.flaky_seen = [], set()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def _config(base_url: str, **kw) -> dict:
    return {
        "backend": "openai_images",
        "model": "gpt-image-test",
        "base_url": base_url,
        "api_key_env": "TEST_IMAGES_KEY",
        "quality": "low",
        "batch_size": 3,
        "concurrency": 3,
        "max_retries": 1,
        "backoff_s": 0.0,
        **kw,
    }


def test_refusals_failures_and_retries_through_render(
    server, tmp_path, monkeypatch, caplog, capsys
):
    monkeypatch.setenv("TEST_IMAGES_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    params = RenderParams(
        configs={"api": _config(server)},
        seeds=[42],
        executor=ExecutorConfig(progress=False),
    )
    results = render_all(params, units_frame(), tmp_path / "images")["api"]
    # Units (bias type: neutral / stereotype / anti-stereotype prompt), one seed:
    #   u0 gender "nurse":       all three prompts contain "nurse" -> 3 ok (JPEG answers)
    #   u1 race "neighbour":     stereotype prompt says "Black" -> 1 refused, 2 ok
    #   u2 religion "family":    stereotype "Muslim" -> refused; anti "Christian" -> no image
    #                            -> refused; neutral ok: 2 refused, 1 ok
    #   u3 profession "engineer": stereotype "a man" throttled once then ok (attempt 2);
    #                            anti "a woman" always 500 -> failed after 2 attempts; the
    #                            other two images of its batch are kept, not re-requested
    # ok = 3 + 2 + 1 + 2 = 8, refused = 0 + 1 + 2 + 0 = 3, failed = 1
    assert results["by_status"] == {"ok": 8, "refused": 3, "failed": 1}
    # requests: 12 prompts + 1 throttled retry + 1 retry of the 500 = 14
    assert len(_Handler.calls) == 14
    refusals = results["refusals_by_bias_type"]
    assert refusals["race"] == {"items": 3, "refused": 1, "refusal_rate": round(1 / 3, 6)}
    assert refusals["religion"] == {"items": 3, "refused": 2, "refusal_rate": round(2 / 3, 6)}
    assert refusals["gender"]["refused"] == 0 and refusals["profession"]["refused"] == 0

    index = pd.read_parquet(tmp_path / "images" / "api" / "index.parquet").set_index(
        ["unit_id", "variant"]
    )
    refused = index.loc[("u1", "stereotype")]
    assert refused["status"] == "refused" and "moderation_blocked" in refused["reason"]
    assert pd.isna(refused["sha256"]) and pd.isna(refused["width"])  # nothing imputed
    assert "no image" in index.loc[("u2", "anti_stereotype"), "reason"]
    failed = index.loc[("u3", "anti_stereotype")]
    assert (
        failed["status"] == "failed" and failed["attempts"] == 2 and "HTTP 500" in failed["reason"]
    )
    assert (
        index.loc[("u3", "stereotype"), "attempts"] == 2
        and index.loc[("u3", "neutral"), "attempts"] == 1
    )
    nurse = index.loc[("u0", "neutral")]
    assert (nurse["width"], nurse["height"]) == (1024, 1024)

    # request shape: model, prompt, n, size, quality; no seed unless send_seed
    body = _Handler.calls[0]
    assert body["model"] == "gpt-image-test" and body["n"] == 1 and body["quality"] == "low"
    assert body["size"] == "1024x1024" and "seed" not in body

    # the key is never logged nor stored
    out = capsys.readouterr()
    stored = "".join(p.read_text(errors="ignore") for p in (tmp_path / "images").rglob("*.jsonl"))
    assert KEY not in caplog.text + out.out + out.err + stored

    # re-run: refusals are final, the failed item is tried again (still failing: 2 more calls)
    before = len(_Handler.calls)
    again = render_all(params, units_frame(), tmp_path / "images")["api"]
    assert again["run"]["skipped_done"] == 11
    assert again["by_status"] == {"ok": 8, "refused": 3, "failed": 1}
    assert len(_Handler.calls) - before == 2


def test_images_are_stored_as_png_and_seed_is_sent_on_request(server, monkeypatch):
    monkeypatch.setenv("TEST_IMAGES_KEY", KEY)
    gen = create_generator(_config(server, send_seed=True, size=None))
    ok, jpeg = gen.generate(
        [RenderRequest("a", "A photo of a cat", 7), RenderRequest("b", "a nurse", 7)]
    )
    assert ok.status == "ok" and ok.png.startswith(b"\x89PNG")
    assert Image.open(io.BytesIO(ok.png)).getpixel((0, 0)) == (len("A photo of a cat"), 0, 7)
    assert jpeg.png.startswith(b"\x89PNG")  # a JPEG answer, re-encoded as PNG
    assert _Handler.calls[0]["seed"] == 7 and "size" not in _Handler.calls[0]
    gen.close()


def test_missing_key_is_a_config_error_naming_the_variable(server, monkeypatch):
    monkeypatch.delenv("TEST_IMAGES_KEY", raising=False)
    with pytest.raises(ConfigError, match="TEST_IMAGES_KEY is not set"):
        create_generator(_config(server))
    with pytest.raises(ConfigError, match="extra_field"):
        create_generator({**_config(server), "extra_field": 1})
