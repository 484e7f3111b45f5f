"""Benchmark: ``implicit-bench analyze`` as a whole process, with its phase breakdown.

Shapes (1,000 bootstrap resamples each):

- ``release``: the authors' released construction judgements (``--release CHECKOUT`` of
  ydai94/IMPLICIT-Bench, imported untimed with ``implicit-bench import``) through the imported
  ``analyze_benchmark.yaml`` recipe: 1,831 units, 38,451 rows, every lean table, Figure 6,
  selection and the leaderboard;
- ``full``: synthetic, 1,831 units x 3 variants x 3 seeds x 2 judges x 3 tasks = 98,874 rows
  (the paper's whole shape: lean, debias and generator recipes together);
- ``tenfold``: ``full`` with ten times the units (18,310): 988,740 rows;
- ``one-judge``: synthetic, 1 judge x 2 tasks + one CLIP lean per (unit, seed) = 38,451 rows.

Each repeat runs ``python -m implicit_bench.cli.main analyze`` in a child process and times it from
outside (wall, the child's CPU, its peak RSS); ``IMPLICIT_BENCH_TIMINGS`` makes the child
record its phases (``implicit_bench._util.timings``), printed as the median over repeats. The
timed source tree is byte-compiled first (untimed), as an installed package is.

``--authors`` (with ``--shape release``) adds the paired comparison with the authors' own
Figure 6 script on the same data: ``scripts/compute_category_difficulty.py`` of the checkout,
copied to a scratch base with its ``_BASE`` path substituted (its input
``reports/agreement_by_bias_type.csv`` made first, untimed, by ``scripts/compute_agreement.py``),
run A B A B: one warm-up pair, then ``--pairs`` timed pairs. The checkout is read, never copied
into this repository (it has no licence file).

    python benchmarks/bench_analysis.py --shape full|tenfold|one-judge [--repeat 3]
    python benchmarks/bench_analysis.py --shape release --release CHECKOUT [--authors --pairs 3]
        [--src OTHER/src]   # time another checkout's code (e.g. before a change) on the same data
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(
    0, str(ROOT)
)  # tests/helpers/synthetic_tables.py: the test scaffolding lives under tests/

from implicit_bench._util.files import write_table  # noqa: E402
from tests.helpers.synthetic_tables import SEEDS, synthetic_judgements, synthetic_units  # noqa: E402

TARGETS_S = {"release": 1.35, "full": 2.0, "tenfold": 10.0, "one-judge": 2.0}
TARGET_PEAK_MB = {"tenfold": 1536}
AUTHORS_SCRIPT = "scripts/compute_category_difficulty.py"
AUTHORS_INPUT_SCRIPT = "scripts/compute_agreement.py"
AUTHORS_DATA = ("benchmark_scores.csv", "labeled_matching.csv", "labeled_independent.csv")


@dataclass
class Run:
    wall_s: float
    cpu_s: float
    peak_mb: float
    phases: dict[str, float] = field(default_factory=dict)
    startup_cpu_s: float | None = None


def timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> Run:
    """Run ``cmd`` to completion; its wall time, CPU time (user + sys) and peak RSS."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}):\n{stderr[-2000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


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


def synthetic_inputs(shape: str, n_units: int, tmp: Path) -> tuple[list[str], int]:
    """Write the synthetic tables of ``shape``; the analyze arguments and the row count."""
    units = synthetic_units(n_units * (10 if shape == "tenfold" else 1))
    if shape == "one-judge":
        rows = synthetic_judgements(units, judges=("judge-a",), tasks=("rubric", "blind"))
        rows = pd.concat([rows, clip_lean_rows(units)[rows.columns]], ignore_index=True)
    else:
        rows = synthetic_judgements(units)
    write_table(units, tmp / "units.parquet")
    write_table(rows, tmp / "judgements.parquet")
    args = ["--units", str(tmp / "units.parquet"), "--judgements", str(tmp / "judgements.parquet")]
    return args, len(rows)


def release_inputs(release: Path, tmp: Path, env: dict[str, str]) -> tuple[list[str], int]:
    """Import the release (untimed) and return the ``analyze_benchmark.yaml`` recipe's arguments."""
    out = tmp / "imported"
    cli = [sys.executable, "-m", "implicit_bench.cli.main"]
    timed([*cli, "import", str(release), "--out", str(out)], env)
    judgements = out / "judgements_benchmark.csv"
    n_rows = sum(1 for _ in judgements.open(encoding="utf-8")) - 1
    args = ["--units", str(out / "units.csv"), "--params", str(out / "analyze_benchmark.yaml")]
    return [*args, "--judgements", str(judgements)], n_rows


def analyze_run(cmd: list[str], env: dict[str, str], timings: Path) -> Run:
    timings.unlink(missing_ok=True)
    run = timed(cmd, {**env, "IMPLICIT_BENCH_TIMINGS": str(timings)})
    record = json.loads(timings.read_text().splitlines()[-1])
    run.phases, run.startup_cpu_s = record["phases"], record["startup_cpu_s"]
    return run


def authors_command(release: Path, tmp: Path) -> tuple[list[str], Path]:
    """A scratch base holding the authors' inputs and the script pointed at it (its input made)."""
    base = tmp / "authors"
    for sub in ("data", "reports", "plots", "scripts"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    for name in AUTHORS_DATA:
        (base / "data" / name).symlink_to((release / "data" / name).resolve())
    for script in (AUTHORS_INPUT_SCRIPT, AUTHORS_SCRIPT):
        text = (release / script).read_text(encoding="utf-8")
        text, n = re.subn(r'^_BASE = ".*"$', f'_BASE = "{base}"', text, flags=re.M)
        if n != 1:
            raise SystemExit(f"{release / script}: no `_BASE = ...` line to point at the data")
        (base / script).write_text(text, encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    script = [sys.executable, str(base / AUTHORS_INPUT_SCRIPT)]
    subprocess.run(script, env=env, check=True, capture_output=True, cwd=base)
    return [sys.executable, str(base / AUTHORS_SCRIPT)], base


def summary(runs: list[Run]) -> dict[str, object]:
    walls = [r.wall_s for r in runs]
    phases = sorted({k for r in runs for k in r.phases})  # "evaluate" before "evaluate.lean"
    return {
        "wall_s": [round(w, 2) for w in walls],
        "wall_s_median": round(statistics.median(walls), 2),
        "cpu_s": [round(r.cpu_s, 2) for r in runs],
        "cpu_s_median": round(statistics.median(r.cpu_s for r in runs), 2),
        "peak_rss_mb": round(max(r.peak_mb for r in runs), 1),
        "startup_cpu_s_median": (
            round(statistics.median(r.startup_cpu_s for r in runs), 2)
            if all(r.startup_cpu_s is not None for r in runs)
            else None
        ),
        "phases_s_median": {
            k: round(statistics.median(r.phases.get(k, 0.0) for r in runs), 3) for k in phases
        },
    }


def print_phases(phases: dict[str, float]) -> None:
    for name, seconds in phases.items():
        if seconds >= 0.001:
            print(f"  {'  ' * name.count('.')}{name:<32} {seconds:7.3f} s", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="full", choices=list(TARGETS_S))
    parser.add_argument("--release", type=Path, help="a checkout of ydai94/IMPLICIT-Bench")
    parser.add_argument("--authors", action="store_true", help="paired run of the authors' script")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--units", type=int, default=1831)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--selection", default="none", choices=["none", "union", "intersection"])
    parser.add_argument(
        "--src", type=Path, default=ROOT / "src", help="the implicit_bench source tree to time"
    )
    args = parser.parse_args()
    if (args.shape == "release") != (args.release is not None):
        parser.error("--release CHECKOUT goes with --shape release (and only with it)")
    if args.authors and args.shape != "release":
        parser.error("--authors compares on the release: use --shape release --release CHECKOUT")
    env = {**os.environ, "PYTHONPATH": str(args.src.resolve())}
    # bytecode written first (untimed), as an installed package has it: with
    # PYTHONDONTWRITEBYTECODE set (as in the project's shells) a checkout without __pycache__
    # would compile every imported module in every timed run (about 0.15-0.25 s)
    compileall.compile_dir(str(args.src.resolve()), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        if args.shape == "release":
            inputs, n_rows = release_inputs(args.release.resolve(), tmp_path, env)
            extra: list[str] = []
        else:
            inputs, n_rows = synthetic_inputs(args.shape, args.units, tmp_path)
            extra = ["--bootstrap-n", str(args.bootstrap), "--selection", args.selection]
        ours = [
            sys.executable,
            "-m",
            "implicit_bench.cli.main",
            "analyze",
            *inputs,
            "--out",
            str(tmp_path / "out"),
            *extra,
        ]
        timings = tmp_path / "timings.jsonl"
        load_before = os.getloadavg()
        result: dict[str, object] = {"shape": args.shape, "src": str(args.src), "rows": n_rows}
        if args.authors:
            theirs, _ = authors_command(args.release.resolve(), tmp_path)
            pairs = []
            for i in range(args.pairs + 1):  # the first pair warms both up and is not counted
                a = analyze_run(ours, env, timings)
                b = timed(theirs, {**os.environ, "MPLBACKEND": "Agg"})
                if i:
                    pairs.append((a, b))
                    line = f"pair {i}: ours {a.wall_s:.2f} s, theirs {b.wall_s:.1f} s"
                    print(line, file=sys.stderr)
            runs = [a for a, _ in pairs]
            theirs_wall = statistics.median(b.wall_s for _, b in pairs)
            theirs_cpu = statistics.median(b.cpu_s for _, b in pairs)
            result["authors"] = {
                "script": AUTHORS_SCRIPT,
                "wall_s": [round(b.wall_s, 1) for _, b in pairs],
                "cpu_s": [round(b.cpu_s, 1) for _, b in pairs],
                "speedup_wall": round(theirs_wall / statistics.median(r.wall_s for r in runs), 1),
                "speedup_cpu": round(theirs_cpu / statistics.median(r.cpu_s for r in runs), 1),
                "speedup_wall_per_pair": [round(b.wall_s / a.wall_s, 1) for a, b in pairs],
            }
        else:
            runs = [analyze_run(ours, env, timings) for _ in range(args.repeat)]
        stats = summary(runs)
        target = TARGETS_S[args.shape]
        result.update(stats)
        result.update(
            {
                "target_s": target,
                "meets_target": stats["wall_s_median"] <= target
                and stats["peak_rss_mb"] <= TARGET_PEAK_MB.get(args.shape, float("inf")),
                "target_peak_mb": TARGET_PEAK_MB.get(args.shape),
                "bootstrap": args.bootstrap if args.shape != "release" else "recipe",
                "cpus": os.cpu_count(),
                "load_average_before": [round(x, 2) for x in load_before],
                "load_average_after": [round(x, 2) for x in os.getloadavg()],
                "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            }
        )
    line = f"{args.shape}: {n_rows:,} rows, median {stats['wall_s_median']} s wall, "
    line += f"{stats['cpu_s_median']} s CPU, peak {stats['peak_rss_mb']} MB"
    print(line, file=sys.stderr)
    print_phases(stats["phases_s_median"])
    print(json.dumps(result))


if __name__ == "__main__":
    main()
