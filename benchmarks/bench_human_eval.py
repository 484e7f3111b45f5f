"""Benchmark: importing a paper-size human study (2 rounds x 50 cases x 13 raters, 3,900 image
ratings + 1,300 KG answers, 2 judges) and computing metrics/human_eval.json.

    python benchmarks/bench_human_eval.py
"""

from __future__ import annotations

import csv
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from implicit_bench.human_eval.answers import load_manifests
from implicit_bench.human_eval.bundle import HumanEvalParams
from implicit_bench.human_eval.form import ANSWER_COLUMNS
from implicit_bench.human_eval.study import human_eval_report
from implicit_bench.protocol.schema import BIAS_TYPES, VARIANTS


def build(
    root: Path, rounds: int = 2, cases: int = 50, raters: int = 13, seed: int = 0
) -> tuple[list[Path], list[Path]]:
    rng = np.random.default_rng(seed)
    manifests, answers, judgements = [], [], []
    true = {"stereotype": 3.8, "neutral": 3.2, "anti_stereotype": 1.6}
    for r in range(rounds):
        bundle = f"round{r + 1}"
        case_list = []
        for c in range(cases):
            unit = f"u{r}{c:03d}"
            order = [VARIANTS[i] for i in rng.permutation(3)]
            case_list.append(
                {
                    "case": f"c{c + 1:03d}",
                    "unit_id": unit,
                    "bias_type": str(rng.choice(BIAS_TYPES)),
                    "seed": 42,
                    "order": order,
                    "images": [
                        {"position": i + 1, "variant": v, "sha256": f"{unit}{v}"}
                        for i, v in enumerate(order)
                    ],
                }
            )
            for v in VARIANTS:
                for judge in ("qwen3vl", "gemma4"):
                    score = int(np.clip(round(true[v] + rng.normal(0, 1)), 0, 5))
                    judgements.append(
                        {
                            "unit_id": unit,
                            "variant": v,
                            "seed": 42,
                            "config": "gen",
                            "judge": judge,
                            "task": "rubric",
                            "value": str(score),
                            "valid": True,
                        }
                    )
        path = root / f"{bundle}.json"
        path.write_text(
            json.dumps({"bundle_id": bundle, "sampling": {"config": "gen"}, "cases": case_list})
        )
        manifests.append(path)
        for k in range(raters):
            noise = 3.0 if k == raters - 1 else 1.0  # one careless rater, to be screened out
            out = root / f"{bundle}-r{k}.csv"
            with open(out, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(ANSWER_COLUMNS)
                for case in case_list:
                    ratings = [
                        int(np.clip(round(true[v] + rng.normal(0, noise)), 0, 5))
                        for v in case["order"]
                    ]
                    w.writerow(
                        [
                            bundle,
                            f"rater{k}",
                            case["case"],
                            case["unit_id"],
                            rng.choice(["yes", "yes", "yes", "unsure", "no"]),
                            *ratings,
                            "",
                        ]
                    )
            answers.append(out)
    (root / "j").mkdir()
    pd.DataFrame(judgements).to_parquet(root / "j/judgements.parquet")
    return manifests, answers


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-human-eval-"))
    manifests, answers = build(root)
    params = HumanEvalParams(judgements=["j/*.parquet"])
    start = time.perf_counter()
    report = human_eval_report(load_manifests(manifests), answers, params, root)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "seconds": round(seconds, 2),
                "ratings_read": 2 * 50 * 13 * 3,
                "n_ratings_kept": report["n_ratings"],
                "excluded": [e["rater"] for e in report["screening"]["excluded"]],
                "inter_rater_r": report["inter_rater"]["mean_pairwise_r"],
                "alpha": report["inter_rater"]["alpha_ordinal"],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
