"""Audit stages at paper scale on synthetic labels: judge order audit, negation and diversity
on 1,831 units x 3 seeds x 6 variants, two VLM judges asked under both orders + CLIP; the
diversity bootstrap (1,000 resamples); the face judge per 512 px image.

    python benchmarks/audits.py
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd

from implicit_bench.audits.intervals import diversity_replicates, unit_counts
from implicit_bench.audits.labels import blind_rows, primary_labels
from implicit_bench.audits.negation import negation_table
from implicit_bench.audits.stage import judge_audit

N_UNITS, SEEDS = 1831, (42, 1042, 2042)
VARIANTS = ("neutral", "stereotype", "anti_stereotype", "negated_0_1", "negated_1_1", "subject")
TYPES = ("profession", "race", "gender", "religion", "age")


def synthetic() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    units = pd.DataFrame(
        {
            "unit_id": [f"u{i}" for i in range(N_UNITS)],
            "bias_type": [TYPES[i % len(TYPES)] for i in range(N_UNITS)],
        }
    )
    keys = list(itertools.product(units["unit_id"], VARIANTS, SEEDS))
    frames = []
    for judge, orders in (("qwen", ("sa", "as")), ("gemma", ("sa", "as")), ("clip", (None,))):
        for order in orders:
            labels = rng.choice(
                ["s", "a", "neither", None], size=len(keys), p=[0.45, 0.3, 0.2, 0.05]
            )
            frames.append(
                pd.DataFrame(
                    {
                        "unit_id": [k[0] for k in keys],
                        "variant": [k[1] for k in keys],
                        "seed": [k[2] for k in keys],
                        "config": "qwen_image",
                        "judge": judge,
                        "task": "blind",
                        "value": labels,
                        "valid": [v is not None for v in labels],
                        "order": order,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True), units


def main() -> None:
    judgements, units = synthetic()
    print(f"judgement rows: {len(judgements):,}")
    t = time.perf_counter()
    judge_audit(judgements, None)
    print(f"judge_audit: {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    primary = primary_labels(blind_rows(judgements), None)
    negation_table(primary, units)
    print(f"negation table: {time.perf_counter() - t:.2f} s")
    p = primary[(primary.judge == "qwen")]
    ids = units["unit_id"].tolist()
    scenes = unit_counts(p[p.variant == "neutral"], ids, ("s", "a"))
    with np.errstate(invalid="ignore", divide="ignore"):
        prob = scenes / scenes.sum(1, keepdims=True)
        h = -(np.where(prob > 0, prob * np.log(np.where(prob > 0, prob, 1)), 0)).sum(1) / np.log(2)
    tmpl = unit_counts(p[p.variant == "subject"], ids, ("s", "a"))
    weights = (
        np.random.default_rng(1)
        .multinomial(N_UNITS, np.full(N_UNITS, 1 / N_UNITS), size=1000)
        .astype(float)
    )
    t = time.perf_counter()
    diversity_replicates(weights, h, tmpl, units["bias_type"].to_numpy(), 2, (0.05, 0.10, 0.20))
    print(f"diversity bootstrap (1,000 x {N_UNITS} units): {time.perf_counter() - t:.2f} s")
    try:
        from PIL import Image
        from skimage import data

        from implicit_bench.backends.faces import FaceParams, create

        judge = create(FaceParams())
        img = Image.fromarray(data.astronaut())
        judge.predict(img)
        t = time.perf_counter()
        for _ in range(5):
            judge.predict(img)
        print(f"face judge: {(time.perf_counter() - t) / 5:.2f} s per 512 px image")
    except ImportError as exc:
        print(f"face judge: not installed ({exc})")


if __name__ == "__main__":
    main()
