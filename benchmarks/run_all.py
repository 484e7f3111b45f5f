"""Run every benchmark script in turn (`make bench`); figures go to benchmarks/README.md by hand.

python benchmarks/run_all.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = sorted(p for p in HERE.glob("*.py") if p.name != Path(__file__).name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", nargs="*", default=None, help="script stems to run, e.g. bench_analysis"
    )
    args = parser.parse_args()
    failed = []
    for script in SCRIPTS:
        if args.only and script.stem not in args.only:
            continue
        print(f"=== {script.name}", flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(script)], cwd=HERE.parent)
        print(
            f"=== {script.name}: exit {code} after {time.perf_counter() - start:.1f} s", flush=True
        )
        if code:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
