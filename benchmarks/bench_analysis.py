"""Benchmark: ``implicit-bench analyze`` as a whole process on synthetic full-size judgements.

Two shapes (1,000 bootstrap resamples each), both 1,831 units x 3 variants x 3 seeds:

- ``full`` (default): 2 judges x 3 tasks (rubric, blind, alignment) = 98,874 judgement rows;
- ``one-judge``: 1 judge x 2 tasks (rubric, blind) + one CLIP lean per (unit, seed) =
  32,958 + 5,493 = 38,451 rows (a single VLM judge plus CLIP; the float CLIP leans take the
  bootstrap's float path).

Each repeat runs ``python -m implicit_bench.cli analyze`` in a child process (Python start-up,
imports, loading and validating both tables, the selection report, every metric, tables,
plots and the extensions) and times it from outside. Reported: every wall time, the median
(the figure compared with the target: <= 2 s), the child's CPU time, peak RSS, and the load
average before and after (the machine's other work; docs in benchmarks/README.md).

    python benchmarks/bench_analysis.py [--shape full|one-judge] [--repeat 3] [--units 1831]
        [--src OTHER/src]   # time another checkout's code (e.g. before a change) on the same data
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))  # tests/synthetic_tables.py: the test scaffolding lives under tests/

from implicit_bench.io import write_table  # noqa: E402
from tests.synthetic_tables import SEEDS, synthetic_judgements, synthetic_units  # noqa: E402

TARGET_S = 2.0


def clip_lean_rows(units: pd.DataFrame, seed: int = 1, config: str = "gen") -> pd.DataFrame:
    """One CLIP lean cos(N, S) - cos(N, A) per (unit, seed), on the neutral image."""
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product(
        [units["unit_id"], SEEDS], names=["unit_id", "seed"]
    ).to_frame(index=False)
    lean = np.clip(rng.normal(0.02, 0.05, len(grid)), -2, 2)
    return grid.assign(
        variant="neutral",
        config=config,
        judge="clip",
        task="clip_lean",
        value=[f"{v:.6f}" for v in lean],
        valid=True,
        model="clip",
    )


def judgements_of(shape: str, units: pd.DataFrame) -> pd.DataFrame:
    if shape == "full":
        return synthetic_judgements(units)
    rows = synthetic_judgements(units, judges=("judge-a",), tasks=("rubric", "blind"))
    return pd.concat([rows, clip_lean_rows(units)[rows.columns]], ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="full", choices=["full", "one-judge"])
    parser.add_argument("--units", type=int, default=1831)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--selection", default="none", choices=["none", "union", "intersection"])
    parser.add_argument(
        "--src", type=Path, default=ROOT / "src", help="the implicit_bench source tree to time"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        units = synthetic_units(args.units)
        judgements = judgements_of(args.shape, units)
        write_table(units, tmp_path / "units.parquet")
        write_table(judgements, tmp_path / "judgements.parquet")
        env = {**os.environ, "PYTHONPATH": str(args.src.resolve())}
        cmd = [
            sys.executable,
            "-m",
            "implicit_bench.cli",
            "analyze",
            "--units",
            str(tmp_path / "units.parquet"),
            "--judgements",
            str(tmp_path / "judgements.parquet"),
            "--out",
            str(tmp_path / "out"),
            "--bootstrap-n",
            str(args.bootstrap),
            "--selection",
            args.selection,
        ]
        load_before = os.getloadavg()
        walls, cpus = [], []
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmd, env=env, check=True, capture_output=True)
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        load_after = os.getloadavg()
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        median = statistics.median(walls)
        result = {
            "shape": args.shape,
            "src": str(args.src),
            "units": args.units,
            "judgement_rows": len(judgements),
            "bootstrap": args.bootstrap,
            "selection": args.selection,
            "wall_s": [round(w, 2) for w in walls],
            "wall_s_median": round(median, 2),
            "wall_s_best": round(min(walls), 2),
            "cpu_s": [round(c, 2) for c in cpus],
            "target_s": TARGET_S,
            "meets_target": median <= TARGET_S,
            "peak_rss_mb": round(peak_kib / 1024, 1),
            "cpus": os.cpu_count(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
