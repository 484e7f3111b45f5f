"""Benchmark: ``implicit-bench plan`` on a workspace of N units (the plan is bounded).

Builds a scratch workspace once (the repository's ``params.yaml`` and ``profiles/``, a
synthetic ``data/interim/units.parquet`` of N units written column by column, no image store,
no cache) and runs ``python -m implicit_bench.cli.main plan`` in it for each profile, timed from
outside with ``/usr/bin/time`` (wall seconds, user + system CPU seconds, peak RSS; on a
shared, loaded machine quote the CPU time). ``subset.max_units``
is set to 0 in the scratch params so the units table on disk is the plan's (the exact path:
every unit counted from the table). The printed plan is written next to the timing so
before / after texts can be compared.

    python benchmarks/bench_plan.py --units 1000000 [--profile default --profile paper]
        [--workspace DIR] [--src OTHER/src] [--keep]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(
    0, str(ROOT)
)  # tests/helpers/synthetic_tables.py: the test scaffolding lives under tests/

from tests.helpers.synthetic_tables import write_units_parquet  # noqa: E402


def build(workspace: Path, n_units: int) -> None:
    marker = workspace / f".units-{n_units}"
    if marker.exists():
        return
    workspace.mkdir(parents=True, exist_ok=True)
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["subset"]["max_units"] = 0
    (workspace / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    shutil.copytree(ROOT / "profiles", workspace / "profiles", dirs_exist_ok=True)
    (workspace / "metrics").mkdir(exist_ok=True)
    write_units_parquet(workspace / "data/interim/units.parquet", n_units)
    marker.touch()


def run_plan(workspace: Path, profile: str, src: Path) -> tuple[float, float, int, str]:
    cmd = [
        "/usr/bin/time",
        "-f",
        "%e s %U %S %M KB",
        sys.executable,
        "-m",
        "implicit_bench.cli.main",
    ]
    cmd += ["plan"] + ([] if profile == "params" else ["--profile", profile])
    env = {  # offline, as a fresh clone on a GPU node without network
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(src),
        "HOME": str(workspace),
        "HF_HUB_OFFLINE": "1",
    }
    done = subprocess.run(cmd, cwd=workspace, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stdout + done.stderr)
    match = re.search(r"([\d.]+) s ([\d.]+) ([\d.]+) (\d+) KB\s*$", done.stderr)
    assert match, done.stderr
    return float(match[1]), float(match[2]) + float(match[3]), int(match[4]), done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=1_000_000)
    parser.add_argument("--profile", action="append", help="default, paper or params")
    parser.add_argument("--workspace", type=Path, default=None)
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--out", type=Path, default=None, help="write each plan's text here")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    workspace = args.workspace or Path(tempfile.mkdtemp(prefix="bench-plan-"))
    try:
        build(workspace, args.units)
        for profile in args.profile or ["default", "paper"]:
            wall, cpu, kb, text = run_plan(workspace, profile, args.src.resolve())
            print(
                f"plan --profile {profile}, {args.units:,} units: {wall:.2f} s wall, "
                f"{cpu:.2f} s CPU, peak {kb / 1024:,.0f} MB "
                f"({kb / args.units * 1024:,.0f} bytes per unit)"
            )
            if args.out:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"plan-{profile}-{args.units}.txt").write_text(text)
    finally:
        if args.workspace is None and not args.keep:
            shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    main()
