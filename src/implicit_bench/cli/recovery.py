"""``implicit-bench recovery``: power and steering-strength studies on the simulated world (the
planted-truth check's design questions; ``simulate`` is its old, hidden name)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from implicit_bench.cli.options import FiniteFloat
from implicit_bench.params import BOOTSTRAP_N_MAX, SEEDS_MAX, load_params, section
from implicit_bench.world.params import WorldParams
from implicit_bench.world.recovery.power import calibration_table, plot, power_table


@click.group("recovery")
def recovery_group() -> None:
    """Design questions answered with the simulated world (docs/world.md)."""


@recovery_group.command("power")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option(
    "--units",
    "units",
    type=click.IntRange(1),
    multiple=True,
    default=(50, 100, 250, 500, 1000),
    show_default=True,
)
@click.option(
    "--seeds",
    type=click.IntRange(1, SEEDS_MAX),
    default=3,
    show_default=True,
    help="seeds per unit (K)",
)
@click.option(
    "--gap",
    type=FiniteFloat(-1, 1),
    default=0.1,
    show_default=True,
    help="planted success gap to detect",
)
@click.option(
    "--worlds",
    type=click.IntRange(1),
    default=50,
    show_default=True,
    help="simulated worlds per design",
)
@click.option(
    "--boot", "n_boot", type=click.IntRange(1, BOOTSTRAP_N_MAX), default=300, show_default=True
)
@click.option("--generator", default="sim_local", show_default=True)
@click.option("--judge", default="judge_a", show_default=True)
@click.option(
    "--calibration",
    "calibration",
    type=click.IntRange(1),
    multiple=True,
    help="calibration images: corrected interval widths per N instead (at the largest --units)",
)
@click.option(
    "--out",
    default="simulate_power.json",
    show_default=True,
    help="JSON table; the plot goes beside it (.png)",
)
def power_command(
    *,
    params_path: str,
    units: tuple[int, ...],
    seeds: int,
    gap: float,
    worlds: int,
    n_boot: int,
    generator: str,
    judge: str,
    calibration: tuple[int, ...],
    out: str,
) -> None:
    """Interval width and power to detect a success gap for N units and K seeds; with
    --calibration, the width of the judge-corrected intervals per calibration size (SIMULATED)."""
    params = section(load_params(params_path), "world", WorldParams, params_path)
    seed_list = [42 + 1000 * i for i in range(seeds)]
    if calibration:
        n_units = max(units)
        rows = calibration_table(
            params,
            sizes=sorted(calibration),
            n_units=n_units,
            seeds=seed_list,
            worlds=worlds,
            n_boot=n_boot,
            generator=generator,
            judge=judge,
        )
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"simulated": True, "calibration_rows": rows}, indent=2) + "\n")
        click.echo(
            f"SIMULATED corrected-interval widths, {n_units} units x "
            f"{seeds} seeds (judged width beside):"
        )
        for r in rows:
            click.echo(
                f"  calibration {r['calibration']:>5}: gap width "
                f"{r.get('gap_corrected_width', float('nan')):.3f} "
                f"(judged {r['gap_judged_width']:.3f}), default rate "
                f"{r.get('default_rate_corrected_width', float('nan')):.3f} "
                f"(judged {r['default_rate_judged_width']:.3f}); covers rendered truth "
                f"{100 * r.get('gap_corrected_covers', float('nan')):.0f}% (gap); "
                f"matrix usable in {r['usable']}/{r['worlds']} worlds"
            )
        click.echo(f"-> {path}")
        return
    rows = power_table(
        params,
        units=sorted(units),
        seeds=seed_list,
        gap=gap,
        worlds=worlds,
        n_boot=n_boot,
        generator=generator,
        judge=judge,
        rubric_judges=[judge],
    )
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"simulated": True, "rows": rows}, indent=2) + "\n")
    plot(rows, path.with_suffix(".png"))
    click.echo("SIMULATED power (interval of the gap excludes 0):")
    for r in rows:
        p = r["power"]  # an Estimate (Wilson interval over worlds)
        click.echo(
            f"  N={r['units']:>5} K={r['seeds']}: width "
            f"{r['mean_width']:.3f}, power {p['value']:.2f} "
            f"[{p['ci'][0]:.2f}, {p['ci'][1]:.2f}] over {r['worlds']} worlds"
        )
    click.echo(f"-> {path}, {path.with_suffix('.png')}")


@recovery_group.command("alpha")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option(
    "--alpha",
    "alphas",
    type=FiniteFloat(),
    multiple=True,
    default=(0.0, 0.5, 1.0, 1.5, 2.0, 3.0),
    show_default=True,
)
@click.option(
    "--out",
    default="simulate_alpha.json",
    show_default=True,
    help="JSON table; the plot goes beside it (.png)",
)
def alpha_command(params_path: str, alphas: tuple[float, ...], out: str) -> None:
    """The planted dS of each steering configuration over alpha (SIMULATED; needs the world,
    retrieval and units of a default run: run after `dvc repro`)."""
    from implicit_bench.world.recovery.power import alpha_table, plot_alpha

    rows = alpha_table(load_params(params_path), params_path, alphas)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"simulated": True, "rows": rows}, indent=2) + "\n")
    plot_alpha(rows, path.with_suffix(".png"))
    for r in rows:
        click.echo(f"  alpha={r['alpha']:.2f} {r['config']}: dS {r['dS']:+.2f}")
    click.echo(f"-> {path}, {path.with_suffix('.png')}")


simulate_alias = click.Group(
    "simulate",
    commands=recovery_group.commands,
    help="Old name of `implicit-bench recovery`.",
    hidden=True,
)
