"""Judge stage bookkeeping cost per judgement, and the tiny VLM's throughput by batch size.

1. Bookkeeping: an image store of N small PNGs (N / 9 units x 3 variants x 3 seeds), every
   answer already in the cache, so the run does only planning (prompt rendering, cache keys),
   one cache lookup per request, parsing and writing the table: the cost of a resumed or
   repeated run, per judgement row. Tasks rubric + blind + alignment, one judge.
2. Throughput: the tiny random VLM on CPU, batch size 1 against 8, same requests, same run.

    python benchmarks/bench_judge.py --images 30000
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402

from implicit_bench.backends.judges import build_judge  # noqa: E402
from implicit_bench.backends.judges.base import JudgeRequest  # noqa: E402
from implicit_bench.backends.judges.stage import (  # noqa: E402
    JudgeStageParams,
    plan_judgements,
    run_judge_stage,
    units_by_id,
)
from implicit_bench.protocol.tables import UNITS as UNITS_TABLE  # noqa: E402
from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore  # noqa: E402
from implicit_bench.runtime.cache import DiskCache  # noqa: E402
from tests.helpers.judge_fixtures import UNITS, png  # noqa: E402


def make_store(root: Path, n_images: int) -> None:
    units = []
    store = ImageStore(root / "data/images/base")
    n_units = max(1, n_images // 9)
    for i in range(n_units):
        base = UNITS[i % 2]
        unit = {**base, "unit_id": f"u{i:06d}"}
        units.append(unit)
        for variant in ("neutral", "stereotype", "anti_stereotype"):
            for seed in (42, 1042, 2042):
                key = ImageKey("base", unit["unit_id"], variant, seed)
                store.put(
                    ImageRecord(key, "bench", unit[f"prompt_{variant}"], "ok", width=8, height=8),
                    png(len(store), size=8),
                )
    store.finalize()
    (root / "data/interim").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(units).to_parquet(root / "data/interim/units.parquet", index=False)


def bookkeeping(n_images: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="bench_judge_"))
    try:
        t0 = time.perf_counter()
        make_store(root, n_images)
        print(f"store of {n_images} images built in {time.perf_counter() - t0:.1f} s")
        judges = {
            "j": {
                "backend": "openai",
                "model": "bench",
                "base_url": "http://127.0.0.1:9/v1",
                "api_key_env": None,
            }
        }
        params = JudgeStageParams(
            judges=judges,
            tasks={"rubric": None, "blind": None, "alignment": None},
            configs=["base"],
            progress=False,
        )
        backend = build_judge(judges["j"])
        identities = {"j": {"identity": backend.identity(), "decoding": backend.decoding()}}
        planned, _, _ = plan_judgements(
            params,
            units_by_id(UNITS_TABLE.read(root / params.units, require=("unit_id",))),
            identities,
            root,
        )
        cache = DiskCache(root / params.cache)
        cache.put_many(
            (p.key, {"text": '{"score": 3, "choice": "A", "aligned": true}'}) for p in planned
        )
        cache.close()
        t0 = time.perf_counter()
        result = run_judge_stage(params, root)
        seconds = time.perf_counter() - t0
        rows = len(result.frame)
        assert result.model_calls == 0 and rows == len(planned)
        print(
            f"bookkeeping: {rows} rows in {seconds:.2f} s = {1000 * seconds / rows:.3f} ms per row "
            f"(all {rows} answers from the cache, 0 model calls)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def throughput(n_requests: int) -> None:
    from implicit_bench.backends.tiny.stage import build
    from implicit_bench.protocol.judge_tasks import load_task, task_fields
    from implicit_bench.protocol.prompt_fields import unit_fields

    model_dir = Path(tempfile.mkdtemp(prefix="bench_vlm_"))
    try:
        build("vlm", model_dir, 0)
        task = load_task("rubric")
        prompt = task.render(task_fields(task, unit_fields(UNITS[0])))
        requests = [JudgeRequest(prompt, png(i)) for i in range(n_requests)]
        rates = {}
        for size in (1, 8, 1, 8):
            judge = build_judge(
                {
                    "backend": "transformers",
                    "model": str(model_dir),
                    "device": "cpu",
                    "batch_size": size,
                    "max_new_tokens": 32,
                }
            )
            judge.load()
            t0 = time.perf_counter()
            judge.answer(requests)
            rates.setdefault(size, []).append(n_requests / (time.perf_counter() - t0))
        best = {size: max(r) for size, r in rates.items()}
        print(
            f"tiny VLM, {n_requests} rubric requests, 32 new tokens: batch 1 {best[1]:.1f} req/s, "
            f"batch 8 {best[8]:.1f} req/s (ratio {best[8] / best[1]:.2f})"
        )
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=9000)
    parser.add_argument("--requests", type=int, default=48)
    args = parser.parse_args()
    bookkeeping(args.images)
    throughput(args.requests)


if __name__ == "__main__":
    main()
