"""Benchmark: covariate-assisted anytime-valid sequences (``analysis.assisted``) against the
plain sequences (``analysis.anytime``): coverage at every look and the units a sequential run
needs to reach a target.

Three parts (figures in benchmarks/README.md, "Covariate-assisted sequences"):

- ``release``: the authors' released Table 4 judgements (``--release CHECKOUT``, imported
  untimed with ``implicit-bench import``). Each of the four generators in turn plays the new
  model; its covariates are what ``--covariates release`` gives an estimand of it
  (``analysis.byo.covariates``: the other three generators' per-unit bias scores, plus two
  columns of Qwen-Image's images unless it is the new model, for its bias score; their
  alignment shares for its alignment), or with ``--covariates table4`` the other three
  generators' columns only (the source before the derived columns). Over ``--orders``
  uniformly random orders of the 1,831 units, a look after every ``--step`` units (default 1:
  after every unit; 50: the grid of the first figures): the share of orders whose sequence
  covers the full-release value at every look, and the units (and neutral images, 3 seeds
  each) when a ±0.10 bias score, a ±0.03 alignment and the resolution of each pair with a
  reference generator (its difference's interval excluding 0) are first reached; for the
  plain sequence of today, the assisted sequence with plug-in bets and with bets tuned to the
  target, against the full 5,493 images. The assisted ends are bisected to ``TOLERANCE``
  (2^-24, outer side) instead of the library's 2^-40.
- ``r2``: the cross-validated (10 folds) and held-out (fit on 400 units) R² of each
  generator's per-unit bias score and alignment share from candidate covariate sets of the
  release (the sequences' own ridge fit).
- ``planted``: a planted population of 1,831 units (a per-unit mean of three 0-5 scores)
  with covariates of every strength (none, useless noise, R² 0.25, 0.5, 0.9, a perfect one and
  adversarial ones: heavy-tailed outliers, a covariate predictive on a few units only, one
  whose slope flips sign between units); over ``--orders`` random orders, coverage of the
  planted mean at every look and the units to a ±0.10 half-width.

    python benchmarks/bench_assisted.py release --release CHECKOUT [--orders 200] [--step 1]
    python benchmarks/bench_assisted.py r2 --release CHECKOUT
    python benchmarks/bench_assisted.py planted [--orders 200] --step 50
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from implicit_bench.analysis.anytime import confidence_sequence  # noqa: E402
from implicit_bench.analysis.assisted import assisted_sequence, design_matrix  # noqa: E402

N_UNITS = 1831
SEEDS = 3
ALPHA = 0.05
TARGETS = {"bias_score": 0.10, "alignment": 0.03}  # half-widths on each score's own scale
# each end of the assisted sequences to 2^-24 of the [0, 1] scale (3e-7 on the rubric's), on
# the outer side: 20 bisection steps instead of 40 (the library's default), never narrower
TOLERANCE = 2.0**-24
# the release's name of Qwen-Image's Table 4 row (the import calls experiment 0 `unmodified`)
RELEASE_NAMES = {"unmodified": "qwen_image"}


def looks_of(n: int, step: int) -> list[int]:
    return sorted({*range(step, n, step), n})


def covered(lo: np.ndarray, hi: np.ndarray, truth: float) -> float:
    return float(((lo <= truth + 1e-9) & (truth <= hi + 1e-9)).all(axis=1).mean())


def first_reached(
    reached: np.ndarray, units_at: np.ndarray, draw: str = "unit"
) -> dict[str, float]:
    """Units (and neutral images) rendered at the first look where ``reached`` holds (the
    last look when never); ``units_at``: the draws rendered at each look (images when
    ``draw`` is ``image``)."""
    hit = reached.any(axis=1)
    first = np.where(hit, reached.argmax(axis=1), reached.shape[1] - 1)
    drawn = units_at[np.arange(len(first)), first]
    if draw == "image":
        return {
            "median_images": float(np.median(drawn)),
            "p90_images": float(np.percentile(drawn, 90)),
            "median_share_of_images": round(float(np.median(drawn)) / (N_UNITS * SEEDS), 3),
        }
    return {
        "median_units": float(np.median(drawn)),
        "p90_units": float(np.percentile(drawn, 90)),
        "median_images": float(np.median(drawn)) * SEEDS,
        "median_share_of_images": round(float(np.median(drawn)) / N_UNITS, 3),
    }


def sequences(
    values: np.ndarray,
    scale: tuple[float, float],
    covariates: np.ndarray | None,
    orders: np.ndarray,
    step: int,
    target: float | None,
    methods: tuple[str, ...] = ("plain", "assisted_plugin", "assisted_target"),
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray, float, list[int]]:
    """Per method, the ends (on the value's own scale) at every look over the orders, the units
    rendered at each look, the population value and the looks (in units with a value)."""
    low, top = scale
    defined = ~np.isnan(values)
    if covariates is not None:
        covariates = covariates[defined]
    pop = (values[defined] - low) / (top - low)
    rows = np.cumsum(defined) - 1  # a unit's row among the units with a value
    drawn = np.array([rows[o[defined[o]]] for o in orders])
    units_at_draw = np.array([np.flatnonzero(defined[o]) + 1 for o in orders])
    n = int(defined.sum())
    looks = looks_of(n, step)
    x = pop[drawn]
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if "plain" in methods:
        out["plain"] = confidence_sequence(x, n, looks, ALPHA)
    design = design_matrix(covariates, n)
    if "assisted_plugin" in methods:
        run = assisted_sequence(
            x, drawn, design, looks, ALPHA, "plugin", estimates=False, tolerance=TOLERANCE
        )
        out["assisted_plugin"] = (run.lo, run.hi)
    w = None if target is None else target / (top - low)
    for method, rule_design in (
        ("assisted_target", design),
        ("target_without_covariates", design_matrix(None, n)),
    ):
        if target is not None and method in methods:
            run = assisted_sequence(
                x, drawn, rule_design, looks, ALPHA, "target", w, False, TOLERANCE
            )
            out[method] = (run.lo, run.hi)
    scaled = {k: (low + (top - low) * a, low + (top - low) * b) for k, (a, b) in out.items()}
    units_at = units_at_draw[:, np.asarray(looks) - 1]
    return scaled, units_at, float(values[defined].mean()), looks


def release(args: argparse.Namespace) -> dict:
    methods = tuple(args.methods.split(","))
    values = _release_values(args)
    drawn_values = _release_values(args, "image") if args.draw == "image" else values
    source = _release_covariates(args)
    generators = sorted(n.split("/", 1)[1] for n in values if n.startswith("bias_score/"))
    generators = [g for g in generators if "-" not in g]
    rng = np.random.default_rng(args.seed)
    n_draws = N_UNITS * (SEEDS if args.draw == "image" else 1)
    orders = np.argsort(rng.random((args.orders, n_draws)), axis=1)
    out: dict = {
        "orders": args.orders,
        "draw": args.draw,
        "units": N_UNITS,
        "draws": n_draws,
        "looks_every": args.step,
        "covariates": args.covariates,
        "new": {},
    }
    for new in [g for g in generators if args.new in (None, g)]:
        others = [g for g in generators if g != new]
        entry: dict = {"covariates": {}, "estimands": {}}
        for metric, target in TARGETS.items():
            if args.metric not in (None, metric):
                continue
            y, scale = drawn_values[f"{metric}/{new}"]
            frame = _columns(source, values, metric, new, others, args.covariates)
            entry["covariates"][metric] = list(frame.columns)
            cov = frame.to_numpy(float)
            if args.draw == "image":  # an image's covariates are its unit's (units x seeds)
                cov = np.repeat(cov, SEEDS, axis=0)
            entry["estimands"][f"{metric}/{new}"] = _score(
                y, scale, cov, orders, args.step, target, methods, args.draw
            )
            for ref in others:
                if metric != "bias_score" or not {"plain", "assisted_plugin"} & set(methods):
                    continue
                y_ref = drawn_values[f"{metric}/{ref}"][0]
                top = scale[1]
                diff = y - y_ref  # NaN where either lacks a value
                entry["estimands"][f"{metric}/{new}-{ref}"] = _score(
                    diff, (-top, top), cov, orders, args.step, None, methods, args.draw
                )
        out["new"][new] = entry
        print(f"{new}: done", file=sys.stderr, flush=True)
    if args.new is None and args.metric in (None, "bias_score"):
        out["summary"] = _summary(out["new"], methods)
    return out


def _release_covariates(args: argparse.Namespace):  # noqa: ANN202 (Covariates, imported late)
    """The covariates of ``--covariates release`` for this release (``analysis.byo``)."""
    from implicit_bench.analysis.byo.covariates import load_covariates

    return load_covariates(str(args.release.resolve()))


def _columns(source, values: dict, metric: str, new: str, others: list[str], which: str):  # noqa: ANN001, ANN202
    """The covariate columns of ``metric`` when ``new`` is the new model, one row per unit in
    the values' order (the units sorted by id; checked: the source's own column of ``new``
    equals its values): every column ``--covariates release`` gives (``release``), or the
    other three Table 4 generators' only (``table4``, the columns before the derived ones)."""
    every = source.columns[metric].sort_index()
    own = every[RELEASE_NAMES.get(new, new)].to_numpy(float)
    if not np.allclose(own, values[f"{metric}/{new}"][0], equal_nan=True):
        raise SystemExit(f"{metric}/{new}: the covariates' units are not the values' units")
    frame = source.for_estimand(metric, {RELEASE_NAMES.get(new, new)}).sort_index()
    if which == "table4":
        frame = frame[[RELEASE_NAMES.get(g, g) for g in others]]
    return frame


def _release_values(args: argparse.Namespace, draw: str = "unit") -> dict:
    """Per-unit (or per-image) values of every Table 4 estimand
    (``bench_anytime.release_estimands``), read from ``--values-cache`` (``NAME-images.npz``
    for images) when it exists, else imported and written there."""
    from bench_anytime import release_estimands

    cache = args.values_cache
    if cache is not None and draw == "image":
        cache = cache.with_name(f"{cache.stem}-images{cache.suffix}")
    if cache is not None and cache.exists():
        with np.load(cache) as npz:
            names = json.loads(str(npz["names"]))
            return {n: (npz[f"v{i}"], tuple(npz[f"s{i}"])) for i, n in enumerate(names)}
    values = release_estimands(args.release.resolve(), draw)
    if cache is not None:
        arrays = {f"v{i}": v for i, (v, _) in enumerate(values.values())}
        arrays |= {f"s{i}": np.asarray(s) for i, (_, s) in enumerate(values.values())}
        np.savez(cache, names=json.dumps(list(values)), **arrays)
    return values


def _score(
    y: np.ndarray,
    scale: tuple[float, float],
    cov: np.ndarray,
    orders: np.ndarray,
    step: int,
    target: float | None,
    methods: tuple[str, ...],
    draw: str = "unit",
) -> dict:
    start = time.perf_counter()
    ends, units_at, truth, _ = sequences(y, scale, cov, orders, step, target, methods)
    result: dict = {f"population_{draw}s": int((~np.isnan(y)).sum()), "value": round(truth, 6)}
    for method, (lo, hi) in ends.items():
        row: dict = {"covered_at_every_look": covered(lo, hi, truth)}
        if target is not None:
            row[f"stop_for_half_width_{target:g}"] = first_reached(
                (hi - lo) / 2 <= target, units_at, draw
            )
        else:
            row["stop_when_resolved"] = first_reached((lo > 0) | (hi < 0), units_at, draw)
        result[method] = row
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


def _summary(per_new: dict, methods: tuple[str, ...]) -> dict:
    """Median over the generators of the images to a ±0.10 bias score, per method, and the
    smallest coverage anywhere."""
    out: dict = {}
    for method in methods:
        images = [
            e["estimands"][f"bias_score/{g}"][method]["stop_for_half_width_0.1"]["median_images"]
            for g, e in per_new.items()
        ]
        out[method] = {
            "bias_0.1_images_per_generator": images,
            "median_images": float(np.median(images)),
            "median_share_of_5493": round(float(np.median(images)) / (N_UNITS * SEEDS), 3),
        }
    cover = [
        row["covered_at_every_look"]
        for e in per_new.values()
        for est in e["estimands"].values()
        for k, row in est.items()
        if isinstance(row, dict)
    ]
    out["min_coverage"] = min(cover)
    return out


def _variance_components(rubric) -> dict:  # noqa: ANN001 (a DataFrame, pandas imported late)
    """Per generator, the variance of its valid neutral rubric scores within a unit (over
    seeds) and between units (of the unit means, less the within part over the seeds per
    unit), and what they make of the variance of a mean per image rendered: drawing units
    with every seed (``3 between + within``) against drawing images (``between + within``)."""
    out = {}
    neutral = rubric[(rubric["variant"] == "neutral") & rubric["valid"]]
    for config, frame in neutral.groupby("config"):
        per_unit = frame.groupby("unit_id")["score"]
        within = float(per_unit.var(ddof=1).mean())
        seeds = float(per_unit.size().mean())
        between = float(per_unit.mean().var(ddof=1)) - within / seeds
        out[str(config)] = {
            "within_unit": round(within, 3),
            "between_units": round(between, 3),
            "seeds_per_unit": round(seeds, 2),
            "units_over_images": round((SEEDS * between + within) / (between + within), 2),
        }
    return out


def r2(args: argparse.Namespace) -> dict:
    """Cross-validated R² of each Table 4 generator's per-unit bias score (and alignment share)
    from candidate covariate sets of the release: the sequences' own fit (``design_matrix``:
    standardised columns, missing values 0 plus an indicator; ridge penalty 1, intercept
    free), 10 folds of the units with a value, and the mean R² on the other units of a fit on
    400 random ones (20 splits; the sequences stop near there)."""
    import pandas as pd

    from implicit_bench.analysis.byo.covariates import debias_run_columns
    from implicit_bench.release.benchmark import benchmark_units
    from implicit_bench.release.beside import judged_scores, release_table4
    from implicit_bench.release.importer import Release, read_scores

    path = str(args.release.resolve())
    release = Release(path)
    source = _release_covariates(args)
    judgements, _ = release_table4(release, benchmark_units(path))
    rubric = judgements[judgements["task"] == "rubric"]
    spread = rubric.groupby(["unit_id", "config"])["score"].std().unstack("config")
    components = _variance_components(rubric)
    scores, _ = read_scores(release)
    scores = scores[scores["task"] == "rubric"].assign(score=lambda f: judged_scores(f))
    construction = (
        scores.groupby(["unit_id", "judge", "variant"])["score"]
        .mean()
        .unstack(["judge", "variant"])
    )
    construction.columns = [f"qwen_image_{j}_{v}" for j, v in construction.columns]
    construction = construction[[c for c in construction.columns if "neutral" not in c]]
    runs = debias_run_columns(release)
    prompts = benchmark_units(path).units.set_index("unit_id")
    bias_type = pd.get_dummies(prompts["bias_type"].astype(str)).astype(float)
    rng = np.random.default_rng(args.seed)
    out: dict = {
        "folds": 10,
        "held_out_fit_units": 400,
        "variance_components": components,
        "bias_score": {},
        "alignment": {},
    }
    bias, align = source.columns["bias_score"], source.columns["alignment"]
    for new in sorted(align.columns):  # the four generators (no derived alignment columns)
        others = [g for g in align.columns if g != new]
        release_cols = source.for_estimand("bias_score", {new})
        derived = [c for c in release_cols.columns if c not in others]
        sets = {
            "table4 (the other three generators)": release_cols[others],
            "release (`--covariates release`)": release_cols,
            "release + their alignment shares": release_cols.join(
                align[others].add_suffix("_aligned")
            ),
            "release + their per-seed SD": release_cols.join(spread[others].add_suffix("_sd")),
            "release + bias type": release_cols.join(bias_type),
        }
        if derived:
            sets["release + construction stereotype / anti scores"] = release_cols.join(
                construction
            )
            sets["release, the debiasing runs one column each"] = release_cols.drop(
                columns=derived[1:]
            ).join(runs)
        out["bias_score"][new] = {k: _r2_of(bias[new], v, rng) for k, v in sets.items()}
        out["alignment"][new] = {
            "table4 alignment shares": _r2_of(align[new], align[others], rng),
            "+ their bias scores": _r2_of(
                align[new], align[others].join(bias[others].add_suffix("_bias")), rng
            ),
        }
    return out


def _r2_of(y_frame, x_frame, rng: np.random.Generator) -> dict:  # noqa: ANN001
    from implicit_bench.analysis.assisted import _fit

    y = y_frame.to_numpy(float)
    keep = ~np.isnan(y)
    x = design_matrix(x_frame.reindex(y_frame.index).to_numpy(float)[keep], int(keep.sum()))
    y = y[keep]
    folds = rng.permutation(len(y)) % 10
    pred = np.empty_like(y)
    for k in range(10):
        beta, _ = _fit(x[folds != k], y[folds != k])
        pred[folds == k] = x[folds == k] @ beta
    held = []
    for _ in range(20):
        train = np.zeros(len(y), bool)
        train[rng.choice(len(y), 400, replace=False)] = True
        beta, _ = _fit(x[train], y[train])
        rest = y[~train] - x[~train] @ beta
        held.append(1 - rest.var() / y[~train].var())
    return {
        "columns": x.shape[1] - 1,
        "cv_r2": round(float(1 - ((y - pred) ** 2).mean() / y.var()), 3),
        "held_out_r2_from_400": round(float(np.mean(held)), 3),
    }


def planted(args: argparse.Namespace) -> dict:
    """Coverage (and units to ±0.10) on planted populations with covariates of every strength:
    one population per case, ``--orders`` uniformly random orders of it."""
    rng = np.random.default_rng(args.seed)
    looks = looks_of(N_UNITS, args.step)
    out: dict = {"orders": args.orders, "units": N_UNITS, "looks_every": args.step, "cases": {}}
    latent = rng.normal(size=N_UNITS)
    unit_mean = np.clip(3.2 + 1.0 * latent, 0, 5)
    scores = np.clip(np.rint(rng.normal(unit_mean[:, None], 1.0, (N_UNITS, SEEDS))), 0, 5)
    y = scores.mean(axis=1) / 5  # per unit: mean 0-5 score of 3 seeds, on [0, 1]
    truth = float(y.mean())
    noise = rng.normal(size=(N_UNITS, 3))
    cases = {
        "none": None,
        "useless (3 noise columns)": noise,
        "R2 0.25": np.sqrt(0.25) * latent + np.sqrt(0.75) * noise[:, 0],
        "R2 0.5": np.sqrt(0.5) * latent + np.sqrt(0.5) * noise[:, 0],
        "R2 0.9": np.sqrt(0.9) * latent + np.sqrt(0.1) * noise[:, 0],
        "perfect (the value itself)": y,
        "adversarial: heavy-tailed outliers": np.where(
            rng.random(N_UNITS) < 0.01, 1e3 * rng.standard_cauchy(N_UNITS), latent
        ),
        "adversarial: predictive on 2% of units only": np.where(
            rng.random(N_UNITS) < 0.02, latent, noise[:, 1]
        ),
        "adversarial: sign flips half way (x = +-latent by unit id)": np.where(
            np.arange(N_UNITS) % 2 == 0, latent, -latent
        ),
    }
    orders = np.argsort(rng.random((args.orders, N_UNITS)), axis=1)
    x = y[orders]
    units_at = np.broadcast_to(np.asarray(looks), (args.orders, len(looks)))
    lo, hi = confidence_sequence(x, N_UNITS, looks, ALPHA)
    out["plain (today)"] = {
        "covered_at_every_look": covered(lo, hi, truth),
        "stop_for_half_width_0.1": first_reached(5 * (hi - lo) / 2 <= 0.10, units_at),
    }
    for name, cov in cases.items():
        start = time.perf_counter()
        design = design_matrix(None if cov is None else cov.reshape(N_UNITS, -1), N_UNITS)
        entry: dict = {}
        for rule, target in (("plugin", None), ("target", 0.10 / 5)):
            run = assisted_sequence(x, orders, design, looks, ALPHA, rule, target, estimates=False)
            entry[rule] = {
                "covered_at_every_look": covered(run.lo, run.hi, truth),
                "stop_for_half_width_0.1": first_reached(
                    5 * (run.hi - run.lo) / 2 <= 0.10, units_at
                ),
            }
        entry["seconds"] = round(time.perf_counter() - start, 1)
        out["cases"][name] = entry
        print(f"{name}: done", file=sys.stderr, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["planted", "release", "r2"])
    parser.add_argument("--orders", type=int, default=200)
    parser.add_argument(
        "--step", type=int, default=1, help="units between looks (1: a look after every unit)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--release", type=Path, help="a checkout of ydai94/IMPLICIT-Bench")
    parser.add_argument(
        "--methods",
        default="plain,assisted_plugin,assisted_target",
        help="release: comma-separated, of plain, assisted_plugin, assisted_target, "
        "target_without_covariates",
    )
    parser.add_argument("--new", help="release: only this generator as the new model")
    parser.add_argument(
        "--draw",
        choices=["unit", "image"],
        default="unit",
        help="release: draw units (every seed of each) or images (one seed of one unit; "
        "Table 4's mean over images)",
    )
    parser.add_argument("--metric", choices=sorted(TARGETS), help="release: only this score")
    parser.add_argument(
        "--values-cache", type=Path, help="an .npz of the release's per-unit values (reused)"
    )
    parser.add_argument(
        "--covariates",
        choices=["release", "table4"],
        default="release",
        help="release: every column of `--covariates release`; table4: the other three Table "
        "4 generators' only (the columns before the derived ones)",
    )
    args = parser.parse_args()
    if args.part in ("release", "r2") and args.release is None:
        parser.error(f"{args.part} needs --release CHECKOUT")
    start = time.perf_counter()
    result = {"planted": planted, "release": release, "r2": r2}[args.part](args)
    result["alpha"] = ALPHA
    result["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
