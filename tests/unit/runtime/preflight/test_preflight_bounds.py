"""The preflight's GET /models is bounded in all (a local threaded server that trickles, never
ends, or nests ``[`` 100,000 deep), and its timeout options are one-line errors."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from implicit_bench.cli.check import check_command
from implicit_bench.errors import ConfigError
from implicit_bench.runtime.preflight import checks as preflight_module
from implicit_bench.runtime.preflight.backends import load_registries
from implicit_bench.runtime.preflight.checks import preflight
from implicit_bench.runtime.preflight.stage import TIMEOUT_ENV, env_timeout

load_registries()  # preflight() and the checks read every model registry (the CLI loads them)


class _Server:
    def __init__(self, mode: str):
        stop = self.stop = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if mode == "deep":
                    body = b"[" * 100_000
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.end_headers()
                try:
                    while not stop.is_set():
                        if mode == "trickle":
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(0.5)
                        else:  # endless
                            self.wfile.write(b" " * 65536)
                except OSError:
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def _params(base_url: str) -> dict:
    return {
        "generators": {"sim_local": {"backend": "sim", "model": "sim:sim_local"}},
        "judges": {
            "j": {"backend": "openai", "model": "m", "base_url": base_url, "api_key_env": None}
        },
        "render": {"run": ["sim_local"]},
        "judge": {"tasks": {"blind": {"judges": ["j"]}}},
    }


def test_a_trickling_listing_is_bounded_by_the_total_timeout():
    with _Server("trickle") as server:
        start = time.monotonic()
        problems = preflight(_params(server.base_url), timeout=2)
        took = time.monotonic() - start
    assert len(problems) == 1 and "did not answer within 2 s" in problems[0]
    assert took < 6


def test_an_endless_listing_stops_at_the_size_cap(monkeypatch):
    monkeypatch.setattr(preflight_module, "MAX_LISTING_BYTES", 1 << 20)
    with _Server("endless") as server:
        problems = preflight(_params(server.base_url), timeout=20)
    assert len(problems) == 1 and f"more than {1 << 20} bytes" in problems[0]


def test_deeply_nested_listing_is_an_invalid_answer():
    with _Server("deep") as server:
        problems = preflight(_params(server.base_url), timeout=5)
    assert len(problems) == 1 and "not a model list" in problems[0]


def test_check_timeout_inf_is_a_one_line_error_naming_the_option():
    result = CliRunner().invoke(check_command, ["--timeout", "inf"])
    assert result.exit_code != 0 and "'--timeout'" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("raw", ["abc", "inf", "nan", "-1", "0", "1e400"])
def test_bad_preflight_timeout_variable_is_a_config_error_naming_it(monkeypatch, raw):
    monkeypatch.setenv(TIMEOUT_ENV, raw)
    with pytest.raises(ConfigError, match=TIMEOUT_ENV):
        env_timeout()


def test_preflight_timeout_variable_read(monkeypatch):
    monkeypatch.setenv(TIMEOUT_ENV, " 2.5 ")
    assert env_timeout() == 2.5
    monkeypatch.delenv(TIMEOUT_ENV)
    assert env_timeout() == 5.0


def test_bad_preflight_timeout_variable_is_one_line_from_a_stage(tmp_path, monkeypatch):
    from tests.helpers.preflight_fixtures import run_judge_stage, write_judge_params

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IMPLICIT_BENCH_NO_PREFLIGHT", raising=False)
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    monkeypatch.setenv(TIMEOUT_ENV, "abc")
    write_judge_params(tmp_path, "http://127.0.0.1:9/v1", key_env=None)
    result, _ = run_judge_stage()
    lines = result.output.strip().splitlines()
    assert result.exit_code == 1 and len(lines) == 1 and TIMEOUT_ENV in lines[0], lines
    assert "Traceback" not in result.output
