"""Per-item scheduling overhead of the Ray executor (``execution.run_items``, kind ray).

10,000 items through actors whose worker returns at once, so the time is the executor's own:
submitting each item, ``ray.wait``, fetching the result, handing the outcome to the driver.
Overhead per item = (run time - the time to start the actors) / items. Local Ray (one
machine), ``num_cpus`` 1 per actor.

    python benchmarks/bench_ray_overhead.py --items 10000 --workers 1 --max-in-flight 8
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def noop_worker():
    return lambda payload: payload


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--max-in-flight", type=int, nargs="+", default=[2, 8, 32])
    args = parser.parse_args()

    import ray

    from implicit_bench.runtime.execution import ExecutorConfig, WorkItem, run_items

    path = os.pathsep.join([str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    ray.init(
        num_cpus=max(2, args.workers),
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    try:
        items = [WorkItem(f"i{i}", i) for i in range(args.items)]
        for in_flight in args.max_in_flight:
            config = ExecutorConfig(
                kind="ray",
                workers=args.workers,
                num_cpus=1,
                max_in_flight=in_flight,
                progress=False,
            )
            t0 = time.perf_counter()
            run_items(items[:1], noop_worker, config)  # actor start-up alone
            startup = time.perf_counter() - t0
            t0 = time.perf_counter()
            stats = run_items(items, noop_worker, config)
            total = time.perf_counter() - t0
            assert stats.ok == args.items
            print(
                json.dumps(
                    {
                        "items": args.items,
                        "workers": args.workers,
                        "max_in_flight": in_flight,
                        "total_s": round(total, 2),
                        "actor_startup_s": round(startup, 2),
                        "overhead_ms_per_item": round(1000 * (total - startup) / args.items, 3),
                    }
                ),
                flush=True,
            )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
