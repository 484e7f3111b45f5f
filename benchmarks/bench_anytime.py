"""Benchmark: anytime-valid intervals (``analysis.anytime``): coverage at every look, and the
units a sequential run needs to reach a target.

Two parts (docs in benchmarks/README.md, "Anytime-valid intervals"):

- ``planted``: ``--worlds`` planted worlds of 1,831 units. Each world draws per-unit
  propensities (Beta(2, 2) for the default rate: the share of 3 seeds labelled s; a 0-5 rubric
  score per seed around a per-unit mean for the bias score) and one uniformly random order; a
  world counts as covered when the confidence sequence holds the planted population mean at
  every look (every ``--step`` units). Reported per estimand: the share covered, and the
  units used when the half-width first reaches each target.
- ``release``: the authors' released judgements (``--release CHECKOUT``, imported untimed with
  ``implicit-bench import``): each Table 4 generator's bias score and alignment and every
  paired difference, over ``--orders`` random orders of the 1,831 units; coverage of the
  full-release value at every look, the units (and neutral images, 3 seeds each) used at
  stopping for a half-width of 0.10 on the bias score, and for resolving each pair (the
  interval of the difference excluding 0), against the full 1,831 units (5,493 images).

    python benchmarks/bench_anytime.py planted [--worlds 500]
    python benchmarks/bench_anytime.py release --release CHECKOUT [--orders 200]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from implicit_bench.analysis.anytime import confidence_sequence  # noqa: E402

N_UNITS = 1831
SEEDS = 3
ALPHA = 0.05


def looks_of(n: int, step: int) -> list[int]:
    return sorted({*range(step, n, step), n})


def stopping(lo: np.ndarray, hi: np.ndarray, looks: list[int], half_width: float) -> np.ndarray:
    """Per row: the first look whose half-width is at most ``half_width`` (the last if none)."""
    reached = (hi - lo) / 2 <= half_width
    first = np.where(reached.any(axis=1), reached.argmax(axis=1), len(looks) - 1)
    return np.asarray(looks)[first]


def summary_of_stops(stops: np.ndarray) -> dict[str, float]:
    return {
        "median_units": float(np.median(stops)),
        "p90_units": float(np.percentile(stops, 90)),
        "median_share_of_units": round(float(np.median(stops)) / N_UNITS, 3),
    }


def covered_every_look(lo: np.ndarray, hi: np.ndarray, truth: np.ndarray) -> float:
    truth = truth[:, None]
    return float(((lo <= truth + 1e-9) & (truth <= hi + 1e-9)).all(axis=1).mean())


def planted(args: argparse.Namespace) -> dict:
    rng = np.random.default_rng(args.seed)
    looks = looks_of(N_UNITS, args.step)
    w = args.worlds
    propensity = rng.beta(2, 2, size=(w, N_UNITS))
    default_share = rng.binomial(SEEDS, propensity) / SEEDS  # per unit: 0, 1/3, 2/3, 1
    unit_mean = np.clip(rng.normal(3.2, 1.0, size=(w, N_UNITS)), 0, 5)
    scores = np.clip(np.rint(rng.normal(unit_mean[..., None], 1.0, (w, N_UNITS, SEEDS))), 0, 5)
    bias = scores.mean(axis=-1)  # per unit: mean 0-5 score of 3 seeds
    orders = np.argsort(rng.random((w, N_UNITS)), axis=1)  # one uniformly random order per world
    out: dict = {"worlds": w, "units": N_UNITS, "looks_every": args.step, "estimands": {}}
    for name, values, top, targets in (
        ("default_rate", default_share, 1.0, (0.03, 0.05, 0.10)),
        ("bias_score", bias, 5.0, (0.10, 0.20)),
    ):
        start = time.perf_counter()
        x = np.take_along_axis(values, orders, axis=1) / top
        lo, hi = confidence_sequence(x, N_UNITS, looks, ALPHA)
        truth = values.mean(axis=1) / top
        out["estimands"][name] = {
            "covered_at_every_look": covered_every_look(lo, hi, truth),
            "stop_for_half_width": {
                f"{t:g}": summary_of_stops(stopping(lo * top, hi * top, looks, t)) for t in targets
            },
            "seconds": round(time.perf_counter() - start, 1),
        }
    return out


def release_estimands(
    release: Path, draw: str = "unit"
) -> dict[str, tuple[np.ndarray, tuple[float, float]]]:
    """Per-unit values of every Table 4 estimand of the release (``analysis.looks``); with
    ``draw="image"`` per image instead, in the order units sorted by id, then seeds."""
    import yaml

    from implicit_bench.analysis.context import EvalContext
    from implicit_bench.analysis.load import load_tables
    from implicit_bench.analysis.looks import estimands
    from implicit_bench.analysis.params import EvaluateParams
    from implicit_bench.params import section

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "imported"
        cmd = [
            sys.executable,
            "-m",
            "implicit_bench.cli.main",
            "import",
            str(release),
            "--out",
            str(out),
        ]
        subprocess.run(cmd, check=True, capture_output=True)
        recipe = yaml.safe_load((out / "analyze_generators.yaml").read_text())
        raw = {
            **(recipe.get("evaluate") or {}),
            "units": "-",
            "judgements": ["-"],
            "selected_units": None,
            "image_index_glob": None,
        }
        params = section({"evaluate": raw}, "evaluate", EvaluateParams, "bench")
        judgements = [
            str(out / "judgements_unmodified.csv"),
            str(out / "judgements_generators.csv"),
        ]
        tables = load_tables(
            str(out / "units.csv"),
            judgements,
            (str(out / "images.csv"),),
            params.on_bad_row,
            params.on_duplicate,
            params.primary_order,
        )
    ctx = EvalContext.build(tables, tables.units, params)
    ids = list(ctx.unit_ids)
    if draw == "image":
        seeds = sorted(int(s) for s in tables.judgements["seed"].unique())
        ids = [(u, s) for u in sorted(ids) for s in seeds]
    return {e.name: (e.values, e.scale) for e in estimands(ctx, ids)}


def release(args: argparse.Namespace) -> dict:
    values = release_estimands(args.release.resolve())
    rng = np.random.default_rng(args.seed)
    orders = np.argsort(rng.random((args.orders, N_UNITS)), axis=1)
    out: dict = {"orders": args.orders, "units": N_UNITS, "looks_every": args.step, "estimands": {}}
    for name, (per_unit, (low, top)) in values.items():
        defined = ~np.isnan(per_unit)
        x_all = (per_unit - low) / (top - low)
        # each order's units with a value, in order (the same count in every order)
        ordered = [x_all[o][defined[o]] for o in orders]
        positions = [np.flatnonzero(defined[o]) + 1 for o in orders]  # units rendered so far
        n_def = int(defined.sum())
        looks = looks_of(n_def, args.step)
        lo, hi = confidence_sequence(np.clip(np.array(ordered), 0, 1), n_def, looks, ALPHA)
        lo, hi = low + (top - low) * lo, low + (top - low) * hi
        truth = np.full(args.orders, float(per_unit[defined].mean()))
        units_at = np.array([p[np.asarray(looks) - 1] for p in positions])  # units rendered
        entry = {
            "population_units": n_def,
            "full_release_value": round(float(truth[0]), 6),
            "covered_at_every_look": covered_every_look(lo, hi, truth),
        }
        if name.startswith("bias_score/") and "-" not in name:
            reached = (hi - lo) / 2 <= 0.10
            entry["stop_for_half_width_0.1"] = _stops(reached, units_at)
        if "-" in name.split("/", 1)[1]:
            resolved = (lo > 0) | (hi < 0)
            entry["stop_when_resolved"] = _stops(resolved, units_at)
        out["estimands"][name] = entry
    return out


def _stops(reached: np.ndarray, units_at: np.ndarray) -> dict[str, float]:
    """Units (and neutral images) rendered at the first look where ``reached`` holds."""
    hit = reached.any(axis=1)
    first = np.where(hit, reached.argmax(axis=1), reached.shape[1] - 1)
    units = units_at[np.arange(len(first)), first]
    return {
        "share_of_orders_stopped_early": round(float((hit & (units < N_UNITS)).mean()), 3),
        "median_units": float(np.median(units)),
        "median_images": float(np.median(units)) * SEEDS,
        "full_images": N_UNITS * SEEDS,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["planted", "release"])
    parser.add_argument("--worlds", type=int, default=500)
    parser.add_argument("--orders", type=int, default=200)
    parser.add_argument("--step", type=int, default=50, help="units between looks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--release", type=Path, help="a checkout of ydai94/IMPLICIT-Bench")
    args = parser.parse_args()
    if args.part == "release" and args.release is None:
        parser.error("release needs --release CHECKOUT")
    start = time.perf_counter()
    result = planted(args) if args.part == "planted" else release(args)
    result["alpha"] = ALPHA
    result["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
