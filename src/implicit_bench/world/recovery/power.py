"""``implicit-bench recovery power``: interval width and power for a benchmark design.

For each number of units N (and K seeds), simulated worlds are drawn from the ``world:``
params with the explicit-request success changed so that the planted gap (success of
stereotype prompts minus success of anti-stereotype prompts, as the primary judge reads them)
is about ``--gap``; power = share of worlds whose 95% interval of the gap excludes 0, width =
mean interval width. Fast path (no pixels), the same estimator as the benchmark.

``--calibration N`` (``calibration_table``): for each N calibration images (split over the
three core variants, read by the simulated human rater; docs/correction.md) the mean width of
the **corrected** 95% intervals (gap, default rate), the share of worlds where the matrix was
usable, and their coverage of the rendered truth, beside the judged interval's width: how many
calibration images a given precision needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from implicit_bench._util.closed_form import wilson_interval
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.protocol.estimate import Estimate, estimate_json
from implicit_bench.world.params import WorldParams
from implicit_bench.world.recovery.fastpath import calibration_set, estimates, simulate, truths


def with_gap(params: WorldParams, gap: float) -> WorldParams:
    """Anti success = stereo success - gap for every unit (no default-strength slope)."""
    s = params.success
    anti = min(1.0, max(0.0, s.stereo - gap))
    return params.model_copy(
        update={
            "success": s.model_copy(update={"anti_base": anti, "anti_slope": 0.0, "floor": 0.0})
        }
    )


def power_table(
    params: WorldParams,
    *,
    units: list[int],
    seeds: list[int],
    gap: float,
    worlds: int,
    n_boot: int,
    generator: str,
    judge: str,
    rubric_judges: list[str],
) -> list[dict[str, Any]]:
    planted = with_gap(params, gap)
    rows = []
    for n in units:
        widths, rejects, truth = [], [], []
        for w in range(worlds):
            wp = planted.model_copy(update={"seed": planted.seed + 7919 * w + n})
            world = simulate(
                wp,
                n_units=n,
                seeds=seeds,
                generator=generator,
                api_generator=None,
                blind_judge=judge,
                rubric_judges=rubric_judges,
                rng=np.random.default_rng([n, w]),
                tag=f"p{w}",
            )
            est = estimates(world, judge, rubric_judges, len(seeds), Bootstrap(n=n_boot, seed=w))[
                "gap"
            ]
            truth.append(truths(world, wp, judge, rubric_judges, len(seeds))["gap"])
            if est["ci"] is None:
                continue
            lo, hi = est["ci"]
            widths.append(hi - lo)
            rejects.append(lo > 0 or hi < 0)
        k = int(np.sum(rejects))
        rows.append(
            {
                "units": n,
                "seeds": len(seeds),
                "worlds": len(rejects),
                "planted_gap": gap,
                "measured_gap": float(np.mean(truth)),
                "mean_width": float(np.mean(widths)),
                # an Estimate with its Wilson interval over worlds (docs/metrics.md)
                "power": estimate_json(
                    k / len(rejects), wilson_interval(k, len(rejects), 0.95), len(rejects), 0.95
                ),
            }
        )
    return rows


def calibration_table(
    params: WorldParams,
    *,
    sizes: list[int],
    n_units: int,
    seeds: list[int],
    worlds: int,
    n_boot: int,
    generator: str,
    judge: str,
) -> list[dict[str, Any]]:
    """Mean corrected interval width (gap, default rate) and coverage of the rendered truth per
    calibration size, over ``worlds`` worlds of ``n_units`` units (the
    unmodified ``world`` params)."""
    rows = []
    for size in sizes:
        wp0 = params.model_copy(
            update={"calibration": params.calibration.model_copy(update={"images": size})}
        )
        acc: dict[str, list[float]] = {}
        usable = 0
        for w in range(worlds):
            wp = wp0.model_copy(update={"seed": wp0.seed + 7919 * w + size})
            world = simulate(
                wp,
                n_units=n_units,
                seeds=seeds,
                generator=generator,
                api_generator=None,
                blind_judge=judge,
                rubric_judges=[judge],
                rng=np.random.default_rng([size, w]),
                tag=f"c{w}",
            )
            cal = calibration_set(world, wp, judge, np.random.default_rng([size, w, 1]))
            est = estimates(world, judge, [judge], len(seeds), Bootstrap(n=n_boot, seed=w), cal)
            truth = truths(world, wp, judge, [judge], len(seeds))
            usable += est["gap (corrected)"]["ci"] is not None
            for name in ("gap", "default_rate"):
                judged, fixed = est[name]["ci"], est[f"{name} (corrected)"]["ci"]
                acc.setdefault(f"{name}_judged_width", []).append(judged[1] - judged[0])
                if fixed is not None:
                    acc.setdefault(f"{name}_corrected_width", []).append(fixed[1] - fixed[0])
                    acc.setdefault(f"{name}_corrected_covers", []).append(
                        fixed[0] <= truth[f"{name} (rendered)"] <= fixed[1]
                    )
        row: dict[str, Any] = {
            "calibration": size,
            "units": n_units,
            "seeds": len(seeds),
            "worlds": worlds,
            "usable": usable,
        }
        row |= {k: float(np.mean(v)) for k, v in acc.items()}
        rows.append(row)
    return rows


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.2))
    n = [r["units"] for r in rows]
    a1.plot(n, [r["mean_width"] for r in rows], marker="o")
    a1.set(xlabel="units", ylabel="mean 95% interval width (gap)", xscale="log")
    power = [Estimate.from_json(r["power"]) for r in rows]
    a2.errorbar(
        n,
        [p.value for p in power],
        yerr=np.array([[p.value - p.ci[0], p.ci[1] - p.value] for p in power]).T,
        marker="o",
        capsize=3,
    )
    a2.axhline(0.8, ls="--", c="grey")
    a2.set(xlabel="units", ylabel="power (interval excludes 0)", xscale="log", ylim=(0, 1.05))
    fig.suptitle(f"SIMULATED: gap {rows[0]['planted_gap']}, {rows[0]['seeds']} seeds")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def alpha_table(
    raw: dict[str, Any], params_path: str, alphas: tuple[float, ...]
) -> list[dict[str, Any]]:
    """The planted dS of each steering configuration at each alpha (``recovery alpha``,
    SIMULATED): rows {alpha, config, dS} from the world, retrieval and units of a default run."""
    from implicit_bench.debias.params import DebiasParams
    from implicit_bench.params import catalogue, section
    from implicit_bench.world.recovery.stage import expected_composites

    debias = section(
        raw, "debias", DebiasParams, params_path
    ).checked()  # validated once, not per alpha
    generators = catalogue(raw, "generators", params_path)
    world = section(raw, "world", WorldParams, params_path)
    judges = {
        n: c["model"].split(":", 1)[1]
        for n, c in catalogue(raw, "judges", params_path).items()
        if c.get("backend") == "sim"
    }
    unmodified = debias.scoring.unmodified
    rows = []
    for alpha in alphas:
        planted = expected_composites(world.out_dir, debias, generators, judges, alpha)
        base = planted.get(unmodified)
        for name, s in planted.items():
            if (
                name != unmodified
                and s is not None
                and base is not None
                and debias.configs[name].method == "steer"
            ):
                rows.append({"alpha": alpha, "config": name, "dS": s - base})
    return rows


def plot_alpha(rows: list[dict[str, Any]], path: Path) -> None:
    """dS over alpha, one line per steering configuration (PNG at ``path``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.2))
    for name in sorted({r["config"] for r in rows}):
        pts = [(r["alpha"], r["dS"]) for r in rows if r["config"] == name]
        ax.plot(*zip(*pts, strict=True), marker="o", label=name)
    ax.axhline(0, c="grey", lw=0.8)
    ax.set(xlabel="steering strength alpha", ylabel="planted dS", title="SIMULATED: dS over alpha")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
