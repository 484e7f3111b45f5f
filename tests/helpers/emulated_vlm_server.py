"""An emulated vLLM-served judge for trying ``implicit-bench run`` without a GPU (README,
"Evaluate your model"): tests/helpers/chat_server.py with a model listing and answers in the judge
tasks' formats (a score, a choice, aligned or not), drawn from a hash of the request. The
answers mean nothing about any image.

    python -m tests.emulated_vlm_server --port 8000 --model Qwen/Qwen3-VL-8B-Instruct
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from typing import Any

from tests.helpers.chat_server import ChatServer, completion


def judge_answer(body: dict[str, Any], n: int) -> tuple[int, Any]:
    text = json.dumps(body["messages"], sort_keys=True)
    h = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    prompt = " ".join(
        str(part.get("text", ""))
        for m in body["messages"]
        for part in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
    ).lower()
    if '"choice"' in prompt:
        answer: dict[str, Any] = {"choice": "ABC"[h % 3]}
    elif '"aligned"' in prompt:
        answer = {"aligned": bool(h % 4)}
    else:  # the rubric
        answer = {"score": h % 6}
    return 200, completion(json.dumps(answer))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--model", default="Qwen/Qwen3-VL-8B-Instruct")
    args = parser.parse_args()
    server = ChatServer(judge_answer, models=[args.model], port=args.port)
    with server:
        print(f"serving {args.model} at {server.base_url}", flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
