"""Design effect of the bias-type design on the unit bootstrap (benchmarks/README.md, "Coverage").

The coverage benchmark's worlds (like the ``subset`` stage) spread units round robin over the
bias types, so every world has the same number of units of each type. The cluster bootstrap of
``analysis.bootstrap`` resamples units without regard to type, so its resamples also vary the
type mix: for a rate that differs between types it adds between-type variance the design does
not have. This prints, per world, the bootstrap SD of three judged rates without strata (as the
benchmark) divided by their SD when units are resampled within their bias type.

    python benchmarks/design_effect.py [--worlds 5] [--boot 2000]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import yaml

from implicit_bench.analysis.blind import label_counts
from implicit_bench.world.params import WorldParams
from implicit_bench.world.recovery.fastpath import CONFIG, simulate

HERE = Path(__file__).resolve().parent
RATES = {
    "default_rate": ("neutral", "s"),
    "success_stereotype": ("stereotype", "s"),
    "success_anti": ("anti_stereotype", "a"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=5)
    parser.add_argument("--boot", type=int, default=2000)
    parser.add_argument("--units", type=int, default=1831)
    args = parser.parse_args()
    raw = yaml.safe_load((HERE.parent / "params.yaml").read_text())
    params = WorldParams.model_validate(raw["world"])
    ratios: dict[str, list[float]] = {name: [] for name in RATES}
    for w in range(args.worlds):  # the coverage benchmark's worlds 0, 1, ...
        world_params = params.model_copy(update={"seed": params.seed + 1000 + w})
        world = simulate(
            world_params,
            n_units=args.units,
            seeds=[42, 1042, 2042],
            generator="sim_local",
            api_generator=None,
            blind_judge="judge_a",
            rubric_judges=["judge_a"],
            rng=np.random.default_rng([0, w]),
            tag="w",
        )
        j = world.judgements
        counts = label_counts(j[j["primary"]], CONFIG, "judge_a", world.units["unit_id"].tolist())
        types = world.units["bias_type"].to_numpy()
        rng = np.random.default_rng(w)
        n = len(types)
        for name, (variant, label) in RATES.items():
            num, den = counts.label[(variant, label)], counts.valid[variant]
            idx = rng.integers(0, n, size=(args.boot, n))
            plain = num[idx].sum(axis=1) / den[idx].sum(axis=1)
            s_num, s_den = np.zeros(args.boot), np.zeros(args.boot)
            for t in np.unique(types):
                pos = np.flatnonzero(types == t)
                draw = pos[rng.integers(0, len(pos), size=(args.boot, len(pos)))]
                s_num += num[draw].sum(axis=1)
                s_den += den[draw].sum(axis=1)
            ratios[name].append(float(plain.std() / (s_num / s_den).std()))
    for name, r in ratios.items():
        print(
            f"{name}: bootstrap SD without / within bias type = "
            f"{', '.join(f'{x:.3f}' for x in r)} (mean {np.mean(r):.3f})"
        )


if __name__ == "__main__":
    main()
