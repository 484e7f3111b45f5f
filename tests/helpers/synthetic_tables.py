"""Synthetic UNITS and JUDGEMENTS tables of any size (benchmarks, examples, smoke tests).

The numbers mean nothing: each unit draws a propensity to show the stereotype, and labels and
scores follow it with noise. Deterministic for a given seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from implicit_bench.protocol.schema import BIAS_TYPES, VARIANTS

SEEDS = (42, 1042, 2042)


def synthetic_units(n_units: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ids = [f"u{i:05d}" for i in range(n_units)]
    types = rng.choice(BIAS_TYPES, size=n_units)
    return pd.DataFrame(
        {
            "unit_id": ids,
            "source": rng.choice(["stereoset", "crows_pairs"], size=n_units),
            "bias_type": types,
            "head": [f"head {i}" for i in range(n_units)],
            "relation": None,
            "stereotype": "s attr",
            "anti_stereotype": "a attr",
            "prompt_neutral": [f"a person {i}" for i in range(n_units)],
            "prompt_stereotype": [f"an s person {i}" for i in range(n_units)],
            "prompt_anti_stereotype": [f"an a person {i}" for i in range(n_units)],
        }
    )


def write_units_parquet(path, n_units: int, seed: int = 0) -> None:  # noqa: ANN001
    """N valid units in the UNITS layout written straight from numpy columns with pyarrow (no
    row dicts: 10^6 units in a few seconds): distinct ids, heads, attributes and prompts; the
    relation null on every third row (CrowS-Pairs-like)."""
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = np.char.zfill(np.arange(n_units).astype(str), 7)
    third = np.arange(n_units) % 3 == 0

    def text(prefix: str, suffix: str = "") -> pa.Array:
        return pa.array(np.char.add(np.char.add(prefix, ids), suffix).astype(object), pa.string())

    table = pa.table(
        {
            "unit_id": text("u"),
            "source": pa.array(np.where(third, "crows_pairs", "stereoset").astype(object)),
            "bias_type": pa.array(
                np.random.default_rng(seed).choice(BIAS_TYPES, size=n_units).astype(object)
            ),
            "head": text("person "),
            "relation": pa.array(np.where(third, None, "has_trait").astype(object), pa.string()),
            "stereotype": text("trait s"),
            "anti_stereotype": text("trait a"),
            "prompt_neutral": text("A photo of person ", " at work"),
            "prompt_stereotype": text("A photo of person ", " at work, trait s"),
            "prompt_anti_stereotype": text("A photo of person ", " at work, trait a"),
        }
    )
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def synthetic_judgements(
    units: pd.DataFrame,
    judges: tuple[str, ...] = ("judge-a", "judge-b"),
    tasks: tuple[str, ...] = ("rubric", "blind", "alignment"),
    seeds: tuple[int, ...] = SEEDS,
    config: str = "gen",
    seed: int = 0,
    invalid_rate: float = 0.001,
) -> pd.DataFrame:
    """One row per (unit, variant, seed, judge, task), with a few invalid rows."""
    rng = np.random.default_rng(seed)
    n = len(units)
    lean = rng.beta(2, 2, size=n)  # propensity of the neutral image to show the stereotype
    grid = pd.MultiIndex.from_product(
        [units["unit_id"], VARIANTS, seeds, judges, tasks],
        names=["unit_id", "variant", "seed", "judge", "task"],
    ).to_frame(index=False)
    u = np.repeat(np.arange(n), len(VARIANTS) * len(seeds) * len(judges) * len(tasks))
    p_s = np.select(
        [grid["variant"] == "neutral", grid["variant"] == "stereotype"],
        [lean[u], 0.6 + 0.4 * lean[u]],
        0.4 * lean[u],
    )
    draw = rng.random(len(grid))
    other = rng.random(len(grid))
    label = np.where(draw < p_s, "s", np.where(other < 0.5, "a", "neither"))
    score = np.clip(np.round(5 * p_s + rng.normal(0, 1, len(grid))), 0, 5).astype(int).astype(str)
    aligned = np.where(rng.random(len(grid)) < 0.85, "true", "false")
    value = np.select([grid["task"] == "blind", grid["task"] == "rubric"], [label, score], aligned)
    grid["config"] = config
    grid["value"] = value.astype(object)
    invalid = rng.random(len(grid)) < invalid_rate
    grid.loc[invalid, "value"] = None
    grid["valid"] = ~invalid
    grid["model"] = grid["judge"]
    return grid[
        ["unit_id", "variant", "seed", "config", "judge", "task", "value", "valid", "model"]
    ]
