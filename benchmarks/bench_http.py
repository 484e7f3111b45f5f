"""Throughput of the HTTP backends (judge, LLM, image API, embedder) against a server emulator.

The emulator runs in its own process on 127.0.0.1 and speaks the OpenAI-compatible routes
(``/chat/completions``, ``/images/generations``, ``/embeddings``):

- ``vllm``: any number of requests at once, latency per request lognormal (median 0.25 s,
  sigma 0.6: mean 0.30 s), or ``--capacity K``: at most K served at once, the rest queue
  (continuous batching with a batch limit);
- ``api``: the same latency and an rpm quota per ``--window`` seconds over a sliding window:
  a request beyond it is answered 429 with ``Retry-After`` (seconds until a slot frees).

Each backend runs through the code path its stage uses (``run_judge_stage``, ``chat_many``,
``render_all``, ``CachedEmbedder.embed``) with a fresh cache; the figures are requests per
second achieved against the limit (``concurrency / mean latency``, or the quota).

    python benchmarks/bench_http.py unlimited --concurrency 32
    python benchmarks/bench_http.py quota --rpm 1200 --window 20  # 60 requests/s
    python benchmarks/bench_http.py curve --capacity 48  # judge: throughput by concurrency
    python benchmarks/bench_http.py cpu  # client CPU per 1024x1024 judge request

Run it with ``PYTHONPATH=<checkout>/src`` to measure another checkout (the "before" figures).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import math
import multiprocessing as mp
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MEDIAN_S, SIGMA = 0.25, 0.6
MEAN_S = MEDIAN_S * math.exp(SIGMA**2 / 2)


# ----- the emulator -------------------------------------------------------------------------------
def _png_b64() -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (32, 32), (120, 30, 200)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def serve(port_out, mode: str, rpm: int, window: float, capacity: int, seed: int) -> None:
    rng = random.Random(seed)
    lock = threading.Lock()
    gate = threading.Semaphore(capacity) if capacity > 0 else None
    stats = {
        "requests": 0,
        "ok": 0,
        "rejected_429": 0,
        "peak_in_flight": 0,
        "max_in_window": 0,
        "first": 0.0,
        "last": 0.0,
        "in_server_s": 0.0,
        "sampled_latency_s": 0.0,
    }
    state = {"in_flight": 0}
    accepted: deque[float] = deque()
    image = _png_b64()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802
            with lock:
                self._send(200, dict(stats))

        def do_POST(self):  # noqa: N802
            body = json.loads(
                self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}"
            )
            if self.path == "/reset":
                with lock:
                    stats.update({k: 0 for k in stats})
                    accepted.clear()
                return self._send(200, {})
            now = time.monotonic()
            with lock:
                stats["requests"] += 1
                stats["first"] = stats["first"] or now
                if mode == "api":
                    while accepted and accepted[0] <= now - window:
                        accepted.popleft()
                    if len(accepted) >= rpm:
                        stats["rejected_429"] += 1
                        wait = max(accepted[0] + window - now, 0.01)
                        return self._send(
                            429,
                            {"error": {"message": "rate limit"}},
                            {"Retry-After": f"{wait:.3f}"},
                        )
                    accepted.append(now)
                    stats["max_in_window"] = max(stats["max_in_window"], len(accepted))
                state["in_flight"] += 1
                stats["peak_in_flight"] = max(stats["peak_in_flight"], state["in_flight"])
                latency = rng.lognormvariate(math.log(MEDIAN_S), SIGMA)
                stats["sampled_latency_s"] += latency
            try:
                if gate is not None:
                    with gate:
                        time.sleep(latency)
                else:
                    time.sleep(latency)
            finally:
                with lock:
                    state["in_flight"] -= 1
                    stats["ok"] += 1
                    stats["last"] = time.monotonic()
            if self.path.endswith("/chat/completions"):
                payload = {
                    "choices": [
                        {
                            "index": 0,
                            "message": {
                                "role": "assistant",
                                "content": '{"choice": "C", "score": 3, "aligned": true}',
                            },
                        }
                    ]
                }
            elif self.path.endswith("/images/generations"):
                payload = {"data": [{"b64_json": image}]}
            else:
                payload = {
                    "data": [
                        {"index": i, "embedding": [0.1, 0.2, float(len(t))]}
                        for i, t in enumerate(body.get("input", []))
                    ]
                }
            self._send(200, payload)
            with lock:
                stats["in_server_s"] += time.monotonic() - now

    class Server(ThreadingHTTPServer):
        request_queue_size = 512
        daemon_threads = True

    httpd = Server(("127.0.0.1", 0), Handler)
    port_out.put(httpd.server_address[1])
    httpd.serve_forever()


class Emulator:
    def __init__(self, mode="vllm", rpm=0, window=60.0, capacity=0, seed=0):
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        self.proc = ctx.Process(
            target=serve, args=(queue, mode, rpm, window, capacity, seed), daemon=True
        )
        self.proc.start()
        self.url = f"http://127.0.0.1:{queue.get(timeout=30)}/v1"

    def stats(self) -> dict:
        import httpx

        return httpx.get(self.url.rsplit("/v1", 1)[0] + "/stats").json()

    def reset(self) -> None:
        import httpx

        httpx.post(self.url.rsplit("/v1", 1)[0] + "/reset", json={})

    def close(self) -> None:
        self.proc.terminate()
        self.proc.join(5)


# ----- the backends, through their stage code paths -----------------------------------------------
def _supported(model, key: str) -> bool:
    return key in model.model_fields


def run_judge(url: str, n: int, http: dict, root: Path) -> tuple[int, int]:
    from benchmarks.bench_judge import make_store
    from implicit_bench.backends.judges.params import JudgeStageParams
    from implicit_bench.backends.judges.stage import run_judge_stage

    make_store(root, n)
    judge = {
        "backend": "openai",
        "model": "bench",
        "base_url": url,
        "api_key_env": None,
        "batch_size": 64,
        **http,
    }
    params = JudgeStageParams(
        judges={"j": judge}, tasks={"blind": None}, configs=["base"], progress=False
    )
    result = run_judge_stage(params, root)
    return result.model_calls, int((~result.frame["valid"]).sum())


def run_llm(url: str, n: int, http: dict, root: Path) -> tuple[int, int]:
    from implicit_bench.backends.llm import build_llm

    client = build_llm(
        {
            "backend": "openai",
            "model": "bench",
            "base_url": url,
            "api_key_env": None,
            "cache": str(root / "llm.sqlite"),
            **http,
        }
    )
    client.progress = False
    answers = client.chat_many([[{"role": "user", "content": f"question {i}"}] for i in range(n)])
    return client.calls, sum(1 for a in answers if not a.ok)


def run_images(url: str, n: int, http: dict, root: Path) -> tuple[int, int]:
    import pandas as pd

    from implicit_bench.render.params import RenderParams
    from implicit_bench.render.stage import render_all
    from implicit_bench.runtime.execution import ExecutorConfig

    units = pd.DataFrame(
        [
            {
                "unit_id": f"u{i:05d}",
                "bias_type": "gender",
                **{
                    f"prompt_{v}": f"photo {i} {v}"
                    for v in ("neutral", "stereotype", "anti_stereotype")
                },
            }
            for i in range(math.ceil(n / 3))
        ]
    )
    config = {
        "backend": "openai_images",
        "model": "bench",
        "base_url": url,
        "api_key_env": None,
        "batch_size": IMAGE_BATCH[0],
        **http,
    }
    params = RenderParams(
        configs={"api": config}, seeds=[42], executor=ExecutorConfig(progress=False)
    )
    result = render_all(params, units, root / "images")["api"]
    return result["items"], result["by_status"]["failed"] + result["by_status"]["refused"]


def run_embedder(url: str, n: int, http: dict, root: Path) -> tuple[int, int]:
    from implicit_bench.backends.embedders import EmbedderParams, build_embedder

    http = {k: v for k, v in http.items() if _supported(EmbedderParams, k)}
    embedder = build_embedder(
        EmbedderParams(
            backend="openai",
            model="bench",
            base_url=url,
            batch_size=8,
            cache=str(root / "emb.sqlite"),
            **http,
        )
    )
    embedder.embed([f"text {i}" for i in range(n * 8)])  # n requests of 8 texts
    return embedder.calls, 0


IMAGE_BATCH = [1]  # render batch size of the image API config (--image-batch-size)
BACKENDS = {"judge": run_judge, "llm": run_llm, "images": run_images, "embedder": run_embedder}


def measure(name: str, emulator: Emulator, n: int, http: dict) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"bench_http_{name}_"))
    emulator.reset()
    try:
        t0 = time.perf_counter()
        calls, failed = BACKENDS[name](emulator.url, n, http, root)
        seconds = time.perf_counter() - t0
    finally:
        shutil.rmtree(root, ignore_errors=True)
    stats = emulator.stats()
    served = max(
        stats.pop("last") - stats.pop("first"), 1e-9
    )  # first request in to last answer out
    ok = max(stats["ok"], 1)
    in_server, sampled = stats.pop("in_server_s"), stats.pop("sampled_latency_s")
    return {
        "backend": name,
        "calls": calls,
        "failed_items": failed,
        "stage_seconds": round(seconds, 2),
        "serving_seconds": round(served, 2),
        "achieved_rps": round(stats["ok"] / served, 2),
        "end_to_end_rps": round(stats["ok"] / seconds, 2),
        # the emulator's own answer time (sampled latency + its handling under this machine's load)
        "mean_sampled_latency_s": round(sampled / ok, 4),
        "mean_in_server_s": round(in_server / ok, 4),
        # of concurrency x serving time, the share during which a request was at the server
        "slot_utilisation": round(in_server / (served * http.get("concurrency", 1)), 3),
        **stats,
    }


# ----- scenarios ----------------------------------------------------------------------------------
def unlimited(args) -> None:
    emulator = Emulator("vllm", seed=1)
    limit = args.concurrency / MEAN_S
    try:
        for name in args.backends:
            http = {"concurrency": args.concurrency, "max_retries": 5, "backoff_s": 0.2}
            row = measure(name, emulator, args.n, http)
            print(
                json.dumps(
                    {
                        **row,
                        "limit_rps": round(limit, 2),
                        "achieved_over_limit": round(row["achieved_rps"] / limit, 3),
                    }
                ),
                flush=True,
            )
    finally:
        emulator.close()


def quota(args) -> None:
    emulator = Emulator("api", rpm=args.rpm, window=args.window, seed=2)
    limit = args.rpm / args.window
    try:
        for name in args.backends:
            http = {
                "concurrency": args.concurrency,
                "max_retries": 20,
                "backoff_s": 0.5,
                "backoff_max_s": 30,
            }
            if not args.no_limits:
                http.update(rpm=args.rpm, rate_window_s=args.window)
            row = measure(name, emulator, args.n, http)
            print(
                json.dumps(
                    {
                        **row,
                        "quota_rps": round(limit, 2),
                        "achieved_over_quota": round(row["achieved_rps"] / limit, 3),
                    }
                ),
                flush=True,
            )
    finally:
        emulator.close()


def curve(args) -> None:
    emulator = Emulator("vllm", capacity=args.capacity, seed=3)
    try:
        for concurrency in args.levels:
            n = max(200, int(concurrency / MEAN_S * args.seconds))
            row = measure("judge", emulator, n, {"concurrency": concurrency})
            print(
                json.dumps(
                    {
                        "concurrency": concurrency,
                        "capacity": args.capacity,
                        "n": n,
                        "achieved_rps": row["achieved_rps"],
                        "peak_in_flight": row["peak_in_flight"],
                        "failed_items": row["failed_items"],
                    }
                ),
                flush=True,
            )
    finally:
        emulator.close()


def cpu(args) -> None:
    """Client CPU per judge request: a 1024x1024 PNG read, (downscaled,
    JPEG-encoded,) base64-encoded, sent."""
    import numpy as np
    from PIL import Image

    from implicit_bench.backends.judges import build_judge
    from implicit_bench.backends.judges.base import JudgeRequest

    rng = np.random.default_rng(0)
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (1024, 1024, 3), dtype=np.uint8)).save(buf, format="PNG")
    png = buf.getvalue()
    emulator = Emulator("vllm", seed=4)
    try:
        for side in (768, None):
            judge = build_judge(
                {
                    "backend": "openai",
                    "model": "bench",
                    "base_url": emulator.url,
                    "api_key_env": None,
                    "max_image_side": side,
                    "concurrency": 1,
                }
            )
            judge.load()
            t_cpu, t0 = time.process_time(), time.perf_counter()
            for _ in range(args.n):
                judge.answer([JudgeRequest("Which option?", png)])
            cpu_s = time.process_time() - t_cpu
            print(
                json.dumps(
                    {
                        "max_image_side": side,
                        "png_bytes": len(png),
                        "requests": args.n,
                        "client_cpu_ms_per_request": round(1000 * cpu_s / args.n, 1),
                        "wall_s": round(time.perf_counter() - t0, 2),
                    }
                ),
                flush=True,
            )
    finally:
        emulator.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="scenario", required=True)
    p = sub.add_parser("unlimited")
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--n", type=int, default=1500)
    p.add_argument("--backends", nargs="+", default=list(BACKENDS))
    p.add_argument(
        "--image-batch-size", type=int, default=1, help="render batch_size of the image config"
    )
    p = sub.add_parser("quota")
    p.add_argument("--rpm", type=int, default=1200, help="requests per --window seconds")
    p.add_argument("--window", type=float, default=20.0)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--n", type=int, default=1500)
    p.add_argument(
        "--no-limits", action="store_true", help="do not pass rpm to the client (older checkouts)"
    )
    p.add_argument("--backends", nargs="+", default=list(BACKENDS))
    p = sub.add_parser("curve")
    p.add_argument("--capacity", type=int, default=48)
    p.add_argument("--levels", type=int, nargs="+", default=[1, 4, 8, 16, 32, 48, 64, 96])
    p.add_argument("--seconds", type=float, default=6.0, help="about this long per level")
    p = sub.add_parser("cpu")
    p.add_argument("--n", type=int, default=20)
    args = parser.parse_args()
    IMAGE_BATCH[0] = getattr(args, "image_batch_size", 1)
    {"unlimited": unlimited, "quota": quota, "curve": curve, "cpu": cpu}[args.scenario](args)


if __name__ == "__main__":
    main()
