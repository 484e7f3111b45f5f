"""Coverage benchmark of the simulated world (docs/world.md, "Coverage"): the share of 95%
intervals that cover the planted truth over many worlds at paper scale, with a binomial
(Wilson) interval on that share. Fast path: no pixels, the same sampling code as the images.

    python benchmarks/bench_coverage.py [--worlds 200] [--units 1831] [--seeds 42 1042 2042]
        [--jobs 2] [--raw per_world.csv]

The result does not depend on ``--jobs`` (worlds are drawn from their index). The file records
the date, the command, the seconds and the load average (1, 5, 15 min) at start and end.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.coverage_study import (  # noqa: E402
    markdown,
    method_markdown,
    relabel,
    run_coverage,
)
from implicit_bench.world.params import WorldParams  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=200)
    parser.add_argument("--units", type=int, default=1831)
    parser.add_argument("--seeds", type=int, nargs="+", default=[42, 1042, 2042])
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--super-units", type=int, default=100_000)
    parser.add_argument(
        "--calibration",
        type=int,
        default=None,
        help="calibration images per world (default: world.calibration.images of the params)",
    )
    parser.add_argument(
        "--method",
        nargs="*",
        default=None,
        metavar="ESTIMAND=METHOD",
        help="bootstrap method per estimand (default: the params' bootstrap.method)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (worlds in parallel)")
    parser.add_argument("--raw", default=None, help="CSV of every world's estimates and truths")
    parser.add_argument(
        "--show", action="store_true", help="print the tables of the --out file, run nothing"
    )
    parser.add_argument("--params", default=str(HERE.parent / "params.yaml"))
    parser.add_argument("--out", default=str(HERE / "results" / "coverage.json"))
    args = parser.parse_args()
    if args.show:  # with --method: the rows relabelled for those methods (coverage.relabel)
        shown = json.loads(Path(args.out).read_text())
        if args.method is not None:
            shown = relabel(shown, dict(m.split("=", 1) for m in args.method))
            Path(args.out).write_text(json.dumps(shown, indent=2) + "\n")
        print(markdown(shown, methods=False))
        print(method_markdown(shown))
        return
    raw = yaml.safe_load(Path(args.params).read_text())
    params = WorldParams.model_validate(raw["world"])
    if args.calibration is not None:
        params = params.model_copy(
            update={
                "calibration": params.calibration.model_copy(update={"images": args.calibration})
            }
        )
    methods = dict((raw.get("bootstrap") or {}).get("method") or {})
    if args.method is not None:
        methods = dict(m.split("=", 1) for m in args.method)
    load_start = os.getloadavg()
    started = datetime.datetime.now(datetime.UTC)
    raw_rows: list[dict] | None = [] if args.raw else None

    def write(result: dict) -> None:
        """The result file (also every 50 worlds, ``complete: false``), with the run block."""
        result["run"] = {
            "command": "python benchmarks/bench_coverage.py " + " ".join(sys.argv[1:]),
            "started_utc": started.strftime("%Y-%m-%d %H:%M"),
            "seconds_per_world": round(result["seconds"] / max(result["worlds"], 1), 2),
            "load_average_start": [round(x, 2) for x in load_start],
            "load_average_end": [round(x, 2) for x in os.getloadavg()],
            "cpus": os.cpu_count(),
        }
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
        if raw_rows is not None:
            import pandas as pd

            pd.DataFrame(raw_rows).to_csv(args.raw, index=False)

    result = run_coverage(
        params,
        n_worlds=args.worlds,
        n_units=args.units,
        seeds=args.seeds,
        n_boot=args.boot,
        gens=("sim_local", "sim_api"),
        judges=("judge_a", ["judge_a", "judge_b"]),
        super_units=args.super_units,
        methods=methods,
        jobs=args.jobs,
        raw=raw_rows,
        checkpoint=write,
    )
    write(result)
    print(markdown(result, methods=False))
    print(method_markdown(result))
    print(
        f"{result['worlds']} worlds x {result['units']} units x {len(result['seeds'])} seeds "
        f"in {result['seconds']} s ({args.jobs} jobs)"
    )


if __name__ == "__main__":
    main()
