"""Coverage of the benchmark's 95% intervals over many simulated worlds (fast path, no pixels).

Each world plants new units (a new ``world.seed``) and draws new images and answers; the real
estimators give each estimand an interval. An interval covers when it contains the
**superpopulation** truth: the expected value over the distribution of units the world plants
from (computed once on a large planted population with the same bias-type design). That is the
target of the cluster bootstrap over units (units are the sampled clusters). The share of
intervals covering the **finite-population** truth (this world's units, expected over images
and answers only) is reported too: the unit bootstrap is conservative for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from implicit_bench._util.closed_form import wilson_interval
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.protocol.estimate import Estimate, estimate_json
from implicit_bench.world.params import WorldParams
from implicit_bench.world.recovery.fastpath import (
    METHODS,
    calibration_set,
    estimates,
    simulate,
    truths,
)


def superpopulation_truth(
    params: WorldParams,
    n_units: int,
    seeds: list[int],
    gens: tuple[str, str | None],
    judges: tuple[str, list[str]],
) -> dict[str, float]:
    """Estimand truths on one large planted population (the units' distribution)."""
    big = simulate(
        params.model_copy(update={"seed": params.seed + 10**6}),
        n_units=n_units,
        seeds=seeds,
        generator=gens[0],
        api_generator=gens[1],
        blind_judge=judges[0],
        rubric_judges=judges[1],
        rng=np.random.default_rng(0),
        tag="super",
    )
    return truths(big, params, judges[0], judges[1], len(seeds))


CORRECTED_SUFFIX = " (corrected)"
RENDERED_SUFFIX = " (rendered)"
JUDGED_VS_RENDERED = " (judged, vs rendered)"
# another interval method's row, from the same resamples: "<estimand> (<method>)" and
# "<estimand> (corrected, <method>)" (fastpath.estimates, compare=True)
METHOD_SUFFIXES = tuple(f" ({m})" for m in METHODS)
CORRECTED_METHOD_SUFFIXES = tuple(f" (corrected, {m})" for m in METHODS)
UNIT_BOOTSTRAP_SUFFIX = " (unit bootstrap)"  # slot-A share: cluster bootstrap beside Wilson


def targets(name: str) -> list[tuple[str, str]]:
    """(table row, truth key) pairs an estimate is checked against: a judged estimate against
    the judged truth and, as its own row, against the rendered truth; a corrected estimate
    against the rendered truth (what the pictures show)."""
    for suffix in CORRECTED_METHOD_SUFFIXES:
        if name.endswith(suffix):
            return [(name, name.removesuffix(suffix) + RENDERED_SUFFIX)]
    for suffix in (*METHOD_SUFFIXES, UNIT_BOOTSTRAP_SUFFIX):
        if name.endswith(suffix):
            return [(name, name.removesuffix(suffix))]
    if name.endswith(CORRECTED_SUFFIX):
        return [(name, name.removesuffix(CORRECTED_SUFFIX) + RENDERED_SUFFIX)]
    return [
        (name, name),
        (name + JUDGED_VS_RENDERED, name + RENDERED_SUFFIX),
    ]  # the second only where a rendered truth exists


def world_intervals(
    params: WorldParams,
    w: int,
    *,
    n_units: int,
    seeds: list[int],
    n_boot: int,
    gens: tuple[str, str | None],
    judges: tuple[str, list[str]],
    seed: int,
    methods: dict[str, str],
) -> tuple[dict[str, float], dict[str, Any]]:
    """World ``w``: its finite-population truths and every estimate with its interval. A pure
    function of its arguments (the world's draws come from ``w`` and ``seed``), so worlds can
    run in any order and in parallel."""
    world_params = params.model_copy(update={"seed": params.seed + 1000 + w})
    rng = np.random.default_rng([seed, w])
    world = simulate(
        world_params,
        n_units=n_units,
        seeds=seeds,
        generator=gens[0],
        api_generator=gens[1],
        blind_judge=judges[0],
        rubric_judges=judges[1],
        rng=rng,
        tag="w",
    )  # same unit ids in every world (their truth is drawn from the world's seed)
    finite = truths(world, world_params, judges[0], judges[1], len(seeds))
    calibration = calibration_set(
        world, world_params, judges[0], np.random.default_rng([seed, w, 1])
    )
    est = estimates(
        world,
        judges[0],
        judges[1],
        len(seeds),
        Bootstrap(n=n_boot, seed=w, method=dict(methods)),
        calibration,
    )
    return finite, est


def _world_job(job: tuple[WorldParams, int, dict[str, Any]]) -> tuple[dict[str, float], Any]:
    from implicit_bench.analysis.bootstrap import one_blas_thread

    params, w, kwargs = job
    with one_blas_thread():
        return world_intervals(params, w, **kwargs)


def run_coverage(
    params: WorldParams,
    *,
    n_worlds: int,
    n_units: int,
    seeds: list[int],
    n_boot: int,
    gens: tuple[str, str | None],
    judges: tuple[str, list[str]],
    super_units: int = 100_000,
    seed: int = 0,
    progress: bool = True,
    methods: dict[str, str] | None = None,
    jobs: int = 1,
    raw: list[dict[str, Any]] | None = None,
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
    every: int = 50,
) -> dict[str, Any]:
    """Coverage of every estimand over ``n_worlds`` worlds; ``jobs`` worker processes (the
    result does not depend on it: worlds are drawn from their index and gathered in order);
    ``raw``: a list that receives one row per (world, estimand) (value, interval, truths);
    ``checkpoint``: called with the result over the worlds done so far every ``every`` worlds
    (``complete: false``), so a long run that is stopped still leaves its figures."""
    t0 = time.perf_counter()
    superpop = superpopulation_truth(params, super_units, seeds, gens, judges)
    hits: dict[str, list[bool]] = {}
    hits_finite: dict[str, list[bool]] = {}
    widths: dict[str, list[float]] = {}
    bias: dict[str, list[float]] = {}
    undefined: dict[str, int] = {}
    truth_of: dict[str, str] = {}

    def summary(done: int, complete: bool) -> dict[str, Any]:
        rows = {}
        for name, h in hits.items():
            k, n = int(np.sum(h)), len(h)
            rows[
                name
            ] = {  # coverage: an Estimate with its Wilson interval over worlds (docs/metrics.md)
                "truth": superpop[truth_of[name]],
                "truth_key": truth_of[name],
                "worlds": n,
                "covered": k,
                "undefined": undefined.get(name, 0),
                "coverage": estimate_json(k / n, wilson_interval(k, n, 0.95), n, 0.95),
                "coverage_finite_population": float(np.mean(hits_finite[name])),
                "mean_width": float(np.mean(widths[name])),
                "mean_bias": float(np.mean(bias[name])),
                "in_target": 0.93 <= k / n <= 0.97,
            }
        return {
            "worlds": done,
            "complete": complete,
            "units": n_units,
            "seeds": list(seeds),
            "n_boot": n_boot,
            "calibration": params.calibration.model_dump(),
            "bootstrap_method": dict(methods or {}),
            "superpopulation_units": super_units,
            "jobs": jobs,
            "estimands": rows,
            "seconds": round(time.perf_counter() - t0, 1),
        }

    args = [
        (
            params,
            w,
            {
                "n_units": n_units,
                "seeds": seeds,
                "n_boot": n_boot,
                "gens": gens,
                "judges": judges,
                "seed": seed,
                "methods": dict(methods or {}),
            },
        )
        for w in range(n_worlds)
    ]
    pool = None
    if jobs > 1:
        import multiprocessing

        pool = multiprocessing.get_context("fork").Pool(jobs)
        results = pool.imap(_world_job, args)
    else:
        results = map(_world_job, args)
    for w, (finite, est) in enumerate(results):
        for est_name, block in est.items():
            for name, key in targets(est_name):
                ci = block.get("ci")
                if key not in superpop:
                    continue
                if ci is None or None in ci or block.get("value") is None:
                    undefined[name] = undefined.get(name, 0) + 1
                    continue
                truth_of[name] = key
                hits.setdefault(name, []).append(ci[0] <= superpop[key] <= ci[1])
                hits_finite.setdefault(name, []).append(ci[0] <= finite[key] <= ci[1])
                widths.setdefault(name, []).append(ci[1] - ci[0])
                bias.setdefault(name, []).append(block["value"] - superpop[key])
                if raw is not None:
                    raw.append(
                        {
                            "world": w,
                            "estimand": name,
                            "value": block["value"],
                            "lo": ci[0],
                            "hi": ci[1],
                            "truth": superpop[key],
                            "truth_finite": finite[key],
                        }
                    )
        if progress and (w + 1) % 10 == 0:
            print(
                f"coverage: {w + 1}/{n_worlds} worlds ({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
        if checkpoint is not None and (w + 1) % every == 0 and w + 1 < n_worlds:
            checkpoint(summary(w + 1, False))
    if pool is not None:
        pool.close()
        pool.join()
    return summary(n_worlds, True)


def _cell(r: dict[str, Any]) -> str:
    cov = Estimate.from_json(r["coverage"])
    lo, hi = cov.ci
    return f"{100 * cov.value:.1f}% ({100 * lo:.1f}-{100 * hi:.1f})"


def is_method_row(name: str) -> bool:
    """A row of an interval method the params do not choose (compared in ``method_markdown``)."""
    return name.endswith((*METHOD_SUFFIXES, *CORRECTED_METHOD_SUFFIXES))


def markdown(result: dict[str, Any], methods: bool = True) -> str:
    """The coverage table, one row per estimand (``methods=False``: without the rows of the
    interval methods the params do not choose)."""
    lines = [
        "| estimand | truth | coverage (95% CI) | finite-pop. coverage | mean width | "
        "mean bias | in 93-97% |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in result["estimands"].items():
        if not methods and is_method_row(name):
            continue
        lines.append(
            f"| {name} | {r['truth']:.3f} | {_cell(r)} | "
            f"{100 * r['coverage_finite_population']:.1f}% | {r['mean_width']:.3f} | "
            f"{r['mean_bias']:+.4f} | {'yes' if r['in_target'] else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def method_markdown(result: dict[str, Any]) -> str:
    """Coverage of each estimand with a switchable interval (Hedges' g, the corrected rates) by
    method, from the same resamples; the params' choice is marked with *."""
    chosen = result.get("bootstrap_method", {})
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    for name, r in result["estimands"].items():
        for m in METHODS:
            for suffix, base_of in (
                (f" (corrected, {m})", lambda n, s: n.removesuffix(s) + CORRECTED_SUFFIX),
                (f" ({m})", lambda n, s: n.removesuffix(s)),
            ):
                if name.endswith(suffix):
                    groups.setdefault(base_of(name, suffix), {})[m] = r
                    break
    for base in groups:
        groups[base]["*"] = result["estimands"][base]
    lines = [
        "| estimand | " + " | ".join(METHODS) + " | chosen |",
        "| --- |" + " --- |" * (len(METHODS) + 1),
    ]
    for base, by in groups.items():
        key = "corrected" if base.endswith(CORRECTED_SUFFIX) else base.split(" [")[0]
        pick = chosen_method(chosen, key, base.removesuffix(CORRECTED_SUFFIX))
        cells = [
            _cell(by["*"] if m == pick else by[m]) if (m == pick or m in by) else "-"
            for m in METHODS
        ]
        lines.append(f"| {base} | " + " | ".join(cells) + f" | {pick} |")
    return "\n".join(lines) + "\n"


def chosen_method(methods: dict[str, str], key: str, base: str) -> str:
    """The method ``bootstrap.method`` gives a row: Hedges' g by ``hedges_g``; a corrected rate
    by ``<rate>_corrected``, else ``corrected`` (``analysis.correction.corrected_method``)."""
    if key == "corrected":
        rate = base.split(" [")[0]
        return methods.get(f"{rate}_corrected", methods.get("corrected", "percentile"))
    return methods.get(key, "percentile")


def relabel(result: dict[str, Any], methods: dict[str, str]) -> dict[str, Any]:
    """The result as if run with ``methods`` (``bootstrap.method``): every method's interval
    of Hedges' g and of the corrected rates is computed in every run from the same resamples
    (``fastpath.estimates(compare=True)``), so choosing another method only swaps which row
    carries the plain name. ``relabelled_from`` records the methods of the run itself."""
    old = dict(result.get("bootstrap_method") or {})  # raw: a coverage result record
    rows = dict(result["estimands"])
    out: dict[str, Any] = {}
    for name, r in rows.items():
        if is_method_row(name):
            continue
        if name.endswith(CORRECTED_SUFFIX):
            key, base = "corrected", name.removesuffix(CORRECTED_SUFFIX)

            def row(m: str, base: str = base) -> str:
                return f"{base} (corrected, {m})"
        elif name.startswith("hedges_g ["):
            key, base = "hedges_g", name

            def row(m: str, base: str = base) -> str:
                return f"{base} ({m})"
        else:
            out[name] = r
            continue
        was, now = chosen_method(old, key, base), chosen_method(methods, key, base)
        by = {m: rows[row(m)] for m in METHODS if row(m) in rows} | {was: r}
        if now not in by:
            raise ValueError(f"{name}: the run has no {now} interval")
        out[name] = by[now]
        for m in METHODS:
            if m != now and m in by:
                out[row(m)] = by[m]
    return result | {
        "estimands": out,
        "bootstrap_method": dict(methods),
        "relabelled_from": result.get("relabelled_from", old),
    }
