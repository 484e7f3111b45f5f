"""Benchmark: the whole analysis on a synthetic full-size judgement set.

1,831 units x 3 variants x 3 seeds x 2 judges x 3 tasks (rubric, blind, alignment) = 98,874
judgement rows, 1,000 bootstrap resamples. Runs ``implicit-bench analyze`` (loading,
validation, selection report, every metric, tables, plots) in a child process and reports its
wall time and peak RSS. Target: under 10 s and under 2 GB on 2 cores.

    python benchmarks/bench_analysis.py [--units 1831] [--bootstrap 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))  # tests/synthetic_tables.py: the test scaffolding lives under tests/

from implicit_bench.io import write_table  # noqa: E402
from tests.synthetic_tables import synthetic_judgements, synthetic_units  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=1831)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--selection", default="none", choices=["none", "union", "intersection"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        units = synthetic_units(args.units)
        judgements = synthetic_judgements(units)
        write_table(units, tmp_path / "units.parquet")
        write_table(judgements, tmp_path / "judgements.parquet")
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        cmd = [
            sys.executable, "-m", "implicit_bench.cli", "analyze",
            "--units", str(tmp_path / "units.parquet"),
            "--judgements", str(tmp_path / "judgements.parquet"),
            "--out", str(tmp_path / "out"),
            "--bootstrap-n", str(args.bootstrap),
            "--selection", args.selection,
        ]
        walls = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            subprocess.run(cmd, env=env, check=True, capture_output=True)
            walls.append(time.perf_counter() - start)
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        result = {
            "units": args.units,
            "judgement_rows": len(judgements),
            "bootstrap": args.bootstrap,
            "selection": args.selection,
            "wall_s": [round(w, 2) for w in walls],
            "wall_s_best": round(min(walls), 2),
            "peak_rss_mb": round(peak_kib / 1024, 1),
            "cpus": os.cpu_count(),
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
