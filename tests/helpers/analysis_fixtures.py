"""Small hand-made UNITS / JUDGEMENTS tables with answers worked out by hand in the tests."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

SEEDS = (42, 1042, 2042)
VAR = {"N": "neutral", "S": "stereotype", "A": "anti_stereotype"}


def units(types: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "unit_id": uid,
                "source": "crows_pairs",
                "bias_type": t,
                "head": f"head {uid}",
                "relation": None,
                "stereotype": "s",
                "anti_stereotype": "a",
                "prompt_neutral": f"a person {uid}",
                "prompt_stereotype": f"an s person {uid}",
                "prompt_anti_stereotype": f"an a person {uid}",
            }
            for uid, t in types.items()
        ]
    )


def rows(config: str, judge: str, task: str, table: dict[str, dict[str, list]]) -> list[dict]:
    """table[unit][N|S|A] = one value per seed (None = invalid row, "-" = no row)."""
    out = []
    for uid, per_variant in table.items():
        for key, values in per_variant.items():
            for seed, value in zip(SEEDS, values, strict=False):
                if value == "-":
                    continue
                out.append(
                    {
                        "unit_id": uid,
                        "variant": VAR[key],
                        "seed": seed,
                        "config": config,
                        "judge": judge,
                        "task": task,
                        "value": None if value is None else str(value),
                        "valid": value is not None,
                    }
                )
    return out


# Blind labels (see test_analysis_blind.py for the arithmetic). None = invalid answer.
BLIND_A = {
    "u1": {"N": ["s", "s", "s"], "S": ["s", "s", "s"], "A": ["s", "a", "neither"]},
    "u2": {"N": ["s", "neither", "a"], "S": ["s", "neither", "s"], "A": ["a", "a", "s"]},
    "u3": {
        "N": ["neither", "neither", "neither"],
        "S": ["a", "s", "neither"],
        "A": ["a", "a", "a"],
    },
    "u4": {"N": ["s", "s", None], "S": ["s", "s", "s"], "A": ["s", "s", "a"]},
}
BLIND_B = {
    "u1": {"N": ["s", "s", "neither"], "S": ["s", "s", "s"], "A": ["a", "a", "neither"]},
    "u2": {"N": ["s", "s", "s"], "S": ["s", "s", "neither"], "A": ["a", "s", "s"]},
    "u3": {"N": ["neither", "neither", "a"], "S": ["a", "s", "s"], "A": ["a", "a", "a"]},
    "u4": {"N": ["s", "s", "s"], "S": ["s", "s", "s"], "A": ["s", "a", "a"]},
}
BLIND_TYPES = {"u1": "gender", "u2": "gender", "u3": "race", "u4": "race"}

# Rubric 0-5 scores for selection (see test_analysis_selection.py).
RUBRIC_A = {
    "u1": {"N": [4, 2, 1], "S": [5, 4, 5], "A": [1, 0, 1]},
    "u2": {"N": [3, None, 2], "S": [4, 5, 3], "A": [1, 0, 0]},
    "u3": {"N": [0, 1, 2], "S": [5, 4, 5], "A": [0, 1, 2]},
}
RUBRIC_B = {
    "u1": {"N": [3, "-", "-"], "S": [3, "-", "-"], "A": [0, "-", "-"]},
    "u2": {"N": [2, 3, 1], "S": [4, 5, 2], "A": [0, 1, 0]},
    "u3": {"N": [1, 0, 0], "S": [5, 3, 4], "A": [1, 0, 0]},
}
RUBRIC_TYPES = {"u1": "gender", "u2": "gender", "u3": "race"}


def blind_judgements() -> pd.DataFrame:
    return pd.DataFrame(rows("gen", "A", "blind", BLIND_A) + rows("gen", "B", "blind", BLIND_B))


def rubric_judgements() -> pd.DataFrame:
    return pd.DataFrame(rows("gen", "A", "rubric", RUBRIC_A) + rows("gen", "B", "rubric", RUBRIC_B))


def sleepy_extension(tables, out_dir, params):
    """An analyze extension for tests/unit/analysis/byo/test_atomic_outputs.py: records its pid
    (beside the output folder) and runs for a minute."""
    import time

    (out_dir.parent / "child.pid").write_text(str(os.getpid()))
    time.sleep(60)
    return {}


def order_inputs(folder: Path) -> tuple[Path, Path]:
    """units.csv and judgements.parquet (blind and rubric, every seed) in ``folder``."""
    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    units(BLIND_TYPES).to_csv(folder / "units.csv", index=False)
    j = pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True)
    j.to_parquet(folder / "judgements.parquet")
    return folder / "units.csv", folder / "judgements.parquet"


def analyze_in_order(folder: Path, order: str | bytes, looks: str, *extra: str):  # noqa: ANN201
    """``implicit-bench analyze --order`` on the fixtures in ``folder`` (``order``: the order
    file's text or bytes; output in ``folder/out``); click's result."""
    from click.testing import CliRunner

    from implicit_bench.cli.main import main as cli_main

    u, j = order_inputs(folder)
    (folder / "order.txt").write_bytes(order.encode() if isinstance(order, str) else order)
    args = ["analyze", "--units", str(u), "--judgements", str(j), "--out", str(folder / "out")]
    args += ["--bootstrap-n", "20", "--order", str(folder / "order.txt"), "--looks", looks]
    return CliRunner().invoke(cli_main, [*args, *extra])
