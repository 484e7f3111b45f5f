"""Debiasing benchmarks (figures in benchmarks/README.md, section "Debiasing").

1. Steering against unmodified rendering on the tiny local pipeline, in the same run: the
   same units, seeds and batches rendered through the render machinery, once plainly and once
   with a steering signal (two extra encoder passes per batch and the direction arithmetic).
   Reported: seconds per image of each and their ratio (steering / unmodified), median of
   ``--repeats`` alternating runs.
2. Scoring at paper scale: synthetic judgements for 1,831 units x 3 seeds x 17
   configurations, scored with the paired bootstrap (2,000 resamples).

    python benchmarks/bench_debias.py [--units 8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from implicit_bench.backends.tiny.stage import build  # noqa: E402
from implicit_bench.debias.configs import TABLE_27, BootstrapParams, bind_defaults  # noqa: E402
from implicit_bench.debias.render.stage import plan_inputs, render_debias_config  # noqa: E402
from implicit_bench.debias.scoring import image_scores, score_configs  # noqa: E402
from implicit_bench.render.stage import RenderParams  # noqa: E402

SEEDS = [42, 1042, 2042]


def units_frame(n: int) -> pd.DataFrame:
    heads = ["nurse", "engineer", "mover", "chef", "pilot", "teacher", "farmer", "doctor"]
    rows = []
    for i in range(n):
        head = heads[i % len(heads)]
        rows.append(
            {
                "unit_id": f"u{i:03d}",
                "bias_type": "gender",
                "head": head,
                "relation": "has_gender",
                "stereotype": "woman",
                "anti_stereotype": "man",
                "prompt_neutral": f"A photo of a {head} at work.",
                "prompt_stereotype": f"A photo of a woman {head} at work.",
                "prompt_anti_stereotype": f"A photo of a man {head} at work.",
            }
        )
    return pd.DataFrame(rows)


def bench_steering(units: int, repeats: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench_debias_") as tmp:
        return _bench_steering(Path(tmp), units, repeats)


def _bench_steering(tmp: Path, units: int, repeats: int) -> dict[str, float]:
    model = build("generator", tmp / "generator", seed=0)
    config = {
        "backend": "diffusers",
        "model": str(model),
        "dtype": "float32",
        "device": "cpu",
        "steps": 4,
        "guidance": 5.0,
        "width": 64,
        "height": 64,
        "batch_size": 8,
    }
    params = RenderParams(configs={"tiny": config}, seeds=SEEDS)
    params = params.model_copy(
        update={"executor": params.executor.model_copy(update={"progress": False})}
    )
    frame = units_frame(units)
    times: dict[str, list[float]] = {
        "unmodified": [],
        "sv_explicit_own": [],
        "sv_attributes_own": [],
    }
    names = list(times)
    for rep in range(repeats):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:  # rotate the order
            spec = bind_defaults(TABLE_27[name], alpha=2.0)
            planned, texts, _ = plan_inputs(name, spec, frame, frame, None, None, None)
            start = time.perf_counter()
            render_debias_config(
                name,
                spec,
                units=planned,
                texts=texts,
                seeds=SEEDS,
                cfg=params.configs["tiny"],
                render_params=params,
                generator_name="tiny",
                store_dir=tmp / f"{name}-{rep}",
            )
            times[name].append(time.perf_counter() - start)
    n_images = units * len(SEEDS)
    base = statistics.median(times["unmodified"])
    out = {"images": n_images, "unmodified_s_per_image": base / n_images}
    for name in ("sv_explicit_own", "sv_attributes_own"):
        med = statistics.median(times[name])
        out[f"{name}_s_per_image"] = med / n_images
        out[f"{name}_ratio"] = med / base
    return out


def bench_scoring(n_units: int = 1831, n_boot: int = 2000) -> dict[str, float]:
    rng = np.random.default_rng(0)
    configs = [n for n in TABLE_27]
    keys = pd.MultiIndex.from_product(
        [configs, [f"u{i:04d}" for i in range(n_units)], SEEDS], names=["config", "unit_id", "seed"]
    ).to_frame(index=False)
    n = len(keys)
    rubric = keys.assign(
        task="rubric", judge="qwen", variant="neutral", value=rng.integers(0, 6, n).astype(str)
    )
    align = keys.assign(
        task="alignment",
        judge="qwen",
        variant="neutral",
        value=np.where(rng.random(n) < 0.8, "true", "false"),
    )
    judgements = pd.concat([rubric, align], ignore_index=True)
    hits = {f"u{i:04d}": bool(rng.random() < 0.4) for i in range(n_units)}
    start = time.perf_counter()
    images = image_scores(judgements)
    score_configs(images, "unmodified", BootstrapParams(n=n_boot, seed=42), own_hit=hits)
    return {
        "judgement_rows": len(judgements),
        "configs_scored": 17,
        "seconds": time.perf_counter() - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    steering = bench_steering(args.units, args.repeats)
    print("steering vs unmodified (tiny pipeline, same run):")
    for key, value in steering.items():
        print(f"  {key}: {value:.4f}" if isinstance(value, float) else f"  {key}: {value}")
    scoring = bench_scoring()
    print(
        "scoring, paper scale (1,831 units x 3 seeds x 12 run + 5 "
        "full-KG configurations, 2,000 resamples):"
    )
    for key, value in scoring.items():
        print(f"  {key}: {value:.3f}" if isinstance(value, float) else f"  {key}: {value}")


if __name__ == "__main__":
    main()
