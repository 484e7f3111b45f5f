"""Benchmark: sources + kg + triplets over all 5,737 pairs with the deterministic extractor and
writer (target < 60 s on 2 cores), and a no-op `dvc repro triplets` (target < 5 s).

Runs in a temporary copy of the repository (tracked + untracked, not ignored files), so the
working tree is untouched. Stage times include the Python start-up of each stage script.

    python benchmarks/bench_construction.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def copy_repo(dst: Path) -> None:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, out.split("\0")):
        if (ROOT / name).is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dst / name)


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    bin_dir = str(Path(sys.executable).parent)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        copy_repo(repo)
        env = {
            **os.environ,
            "PYTHONPATH": str(repo / "src"),
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@localhost",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@localhost",
        }
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "bench"]):
            subprocess.run(cmd, cwd=repo, env=env, check=True, capture_output=True)
        stages: dict[str, list[float]] = {"sources": [], "kg": [], "triplets": []}
        for _ in range(args.repeats):
            for stage in stages:
                stages[stage].append(timed([sys.executable, f"stages/{stage}.py"], repo, env))
        totals = [sum(run) for run in zip(*stages.values(), strict=True)]
        first_repro = timed(["dvc", "repro", "triplets"], repo, env)
        noop = [timed(["dvc", "repro", "triplets"], repo, env) for _ in range(args.repeats)]
        kg = json.loads((repo / "metrics/kg.json").read_text())
        triplets = json.loads((repo / "metrics/triplets.json").read_text())
    result = {
        "pairs": kg["pairs_total"],
        "units": kg["units_total"],
        "triplets": triplets["triplets_total"],
        "stage_seconds_median": {k: round(statistics.median(v), 2) for k, v in stages.items()},
        "sources_kg_triplets_seconds_median": round(statistics.median(totals), 2),
        "dvc_repro_triplets_first_seconds": round(first_repro, 2),
        "dvc_repro_triplets_noop_seconds_median": round(statistics.median(noop), 2),
        "repeats": args.repeats,
        "cpus": os.cpu_count(),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
