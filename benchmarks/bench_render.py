"""Render benchmarks: batching speed-up, bookkeeping cost per item, Ray vs in-process.

    python benchmarks/bench_render.py            # full sizes (100,000 bookkeeping items)
    python benchmarks/bench_render.py --quick    # small sizes, a smoke run

Figures go to benchmarks/README.md ("Render and judge bookkeeping"). Everything runs on CPU on
the tiny random pipeline built here (nothing downloaded).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import click
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from implicit_bench.backends.generators import RenderRequest, RenderResult, create_generator  # noqa: E402
from implicit_bench.render.images import ImageStore  # noqa: E402
from implicit_bench.render.stage import plan_items, render_plan  # noqa: E402
from implicit_bench.runtime.execution import ExecutorConfig  # noqa: E402


def null_worker() -> callable:
    """A generator that does no work: distinct 64-byte payloads, no model."""

    def generate(requests: list[RenderRequest]) -> list[RenderResult]:
        return [
            RenderResult("ok", b"\x89PNG" + r.item_id.encode().ljust(60, b"."), None, 1, 1)
            for r in requests
        ]

    return generate


def units_table(n_units: int) -> pd.DataFrame:
    ids = [f"u{i:06d}" for i in range(n_units)]
    return pd.DataFrame(
        {
            "unit_id": ids,
            "bias_type": ["gender"] * n_units,
            "prompt_neutral": [f"A photo of person {i}" for i in ids],
            "prompt_stereotype": [f"A photo of person {i}, s" for i in ids],
            "prompt_anti_stereotype": [f"A photo of person {i}, a" for i in ids],
        }
    )


def bench_batching(model_dir: Path, n_images: int) -> dict:
    """Images/s of the tiny pipeline (64x64, 4 steps, CPU, 1 thread) at
    batch size 1 and 8, same run."""
    base = {
        "backend": "diffusers",
        "model": str(model_dir),
        "device": "cpu",
        "threads": 1,
        "steps": 4,
        "guidance": 5.0,
        "width": 64,
        "height": 64,
    }
    gen = create_generator(base)
    prompts = [f"A photo of a person number {i}" for i in range(n_images)]
    gen.generate_prompts(prompts[:8], list(range(8)))  # warm-up
    out = {}
    for bs in (1, 8):
        start = time.perf_counter()
        for i in range(0, n_images, bs):
            gen.generate_prompts(prompts[i : i + bs], list(range(i, min(i + bs, n_images))))
        out[f"images_per_s_bs{bs}"] = round(n_images / (time.perf_counter() - start), 2)
    out["ratio_bs8_over_bs1"] = round(out["images_per_s_bs8"] / out["images_per_s_bs1"], 2)
    out["images"] = n_images
    out["threads"] = __import__("torch").get_num_threads()
    return out


def bench_bookkeeping(n_units: int, batch_size: int, workdir: Path) -> dict:
    """Per-item cost of plan + store writes + index, then of a full resume scan (verify on)."""
    units = units_table(n_units)
    store_dir = workdir / f"book-bs{batch_size}"
    executor = ExecutorConfig(progress=False)
    start = time.perf_counter()
    planned = plan_items(
        units, "null", [42, 1042, 2042], ["neutral", "stereotype", "anti_stereotype"]
    )
    with ImageStore(store_dir) as store:
        run = render_plan(
            store,
            planned,
            null_worker,
            generator="null:none",
            settings="s",
            batch_size=batch_size,
            executor=executor,
        )
        index_start = time.perf_counter()
        store.finalize(keys=[p.key for p in planned])
        index_s = time.perf_counter() - index_start
    fresh_s = time.perf_counter() - start
    start = time.perf_counter()
    with ImageStore(store_dir) as store:  # re-open: journal load + verified resume scan
        again = render_plan(store, planned, null_worker, generator="null:none", settings="s",
                            batch_size=batch_size, executor=executor)  # fmt: skip
    resume_s = time.perf_counter() - start
    assert run["written"] == {"ok": len(planned)} and again["skipped_done"] == len(planned)
    n = len(planned)
    return {
        "items": n,
        "batch_size": batch_size,
        "fresh_run_ms_per_item": round(1000 * fresh_s / n, 4),
        "index_write_ms_per_item": round(1000 * index_s / n, 4),
        "resume_scan_ms_per_item": round(1000 * resume_s / n, 4),
    }


def _ray_worker(config: dict):
    return create_generator(config).generate


def bench_ray(model_dir: Path, n_units: int, workdir: Path) -> dict:
    """The same tiny render in-process and on 2 Ray actors (local mode), outputs compared."""
    import ray

    from implicit_bench.render.stage import render_config

    cfg = {
        "backend": "diffusers",
        "model": str(model_dir),
        "device": "cpu",
        "threads": 1,
        "steps": 4,
        "guidance": 5.0,
        "width": 64,
        "height": 64,
        "batch_size": 8,
    }
    from implicit_bench.render.params import RenderParams

    units = units_table(n_units)
    out = {}
    start = time.perf_counter()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={
            "env_vars": {
                "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "benchmarks")])
            }
        },
    )
    out["ray_init_s"] = round(time.perf_counter() - start, 2)
    try:
        for kind, executor in (
            ("in_process", ExecutorConfig(progress=False)),
            ("ray_2_workers", ExecutorConfig(kind="ray", workers=2, num_cpus=1, progress=False)),
        ):
            params = RenderParams(configs={"tiny": cfg}, seeds=[42, 1042, 2042], executor=executor)
            start = time.perf_counter()
            res = render_config("tiny", params.configs["tiny"], units, workdir / kind, params)
            seconds = time.perf_counter() - start
            out[kind] = {
                "images": res["by_status"]["ok"],
                "seconds_incl_model_load": round(seconds, 2),
                "images_per_s": round(res["by_status"]["ok"] / seconds, 2),
            }
    finally:
        ray.shutdown()
    a = pd.read_parquet(workdir / "in_process" / "index.parquet")
    b = pd.read_parquet(workdir / "ray_2_workers" / "index.parquet")
    out["identical_index"] = bool(a.equals(b))
    out["ratio_ray_over_in_process"] = round(
        out["ray_2_workers"]["images_per_s"] / out["in_process"]["images_per_s"], 2
    )
    return out


@click.command()
@click.option("--quick", is_flag=True, help="Small sizes: a smoke run.")
@click.option("--skip-ray", is_flag=True)
def main(quick: bool, skip_ray: bool) -> None:
    from implicit_bench.backends.tiny.stage import build

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        model = build("generator", workdir / "model", seed=0)
        results["batching"] = bench_batching(model, 16 if quick else 64)
        click.echo(json.dumps(results["batching"]))
        n_units = 112 if quick else 11112  # x 3 seeds x 3 variants = 1,008 / 100,008 items
        results["bookkeeping"] = [bench_bookkeeping(n_units, bs, workdir) for bs in (8, 1)]
        click.echo(json.dumps(results["bookkeeping"]))
        if not skip_ray:
            results["ray"] = bench_ray(model, 4 if quick else 16, workdir)
            click.echo(json.dumps(results["ray"]))
    click.echo(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
