"""`implicit-bench analyze` against an independent plain-pandas computation on random labels."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

from implicit_bench.cli.main import main
from tests.helpers.written import as_written

LABEL_PROBS = {
    "neutral": [0.5, 0.1, 0.4],
    "stereotype": [0.7, 0.05, 0.25],
    "anti_stereotype": [0.2, 0.5, 0.3],
}


def _tables(n_units: int = 80) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(7)
    types = ["gender", "race", "profession", "age"]
    units = pd.DataFrame(
        {
            "unit_id": [f"u{i}" for i in range(n_units)],
            "source": "stereoset",
            "bias_type": [types[i % 4] for i in range(n_units)],
            "head": "h",
            "relation": "r",
            "stereotype": "s",
            "anti_stereotype": "a",
            "prompt_neutral": "n",
            "prompt_stereotype": "ps",
            "prompt_anti_stereotype": "pa",
        }
    )
    rows = []
    for unit in units["unit_id"]:
        for variant, probs in LABEL_PROBS.items():
            for seed in (42, 1042, 2042):
                for judge in ("j1", "j2"):
                    rows.append(
                        (
                            unit,
                            variant,
                            seed,
                            "cfg",
                            judge,
                            "blind",
                            rng.choice(["s", "a", "neither"], p=probs),
                        )
                    )
                    rows.append(
                        (unit, variant, seed, "cfg", judge, "rubric", str(rng.integers(0, 6)))
                    )
    judgements = pd.DataFrame(
        rows, columns=["unit_id", "variant", "seed", "config", "judge", "task", "value"]
    )
    return units, judgements


def test_analyze_matches_an_independent_computation(tmp_path):
    units, judgements = _tables()
    units.to_csv(tmp_path / "units.csv", index=False)
    judgements.to_csv(tmp_path / "j.csv", index=False)
    result = CliRunner().invoke(
        main,
        [
            "analyze",
            "--units",
            str(tmp_path / "units.csv"),
            "--judgements",
            str(tmp_path / "j.csv"),
            "--out",
            str(tmp_path / "out"),
            "--blind-judge",
            "j1",
            "--blind-judge",
            "j2",
            "--bootstrap-n",
            "200",
        ],
    )
    assert result.exit_code == 0, result.output
    bench = json.loads((tmp_path / "out/metrics/benchmark.json").read_text())

    blind = judgements[(judgements["task"] == "blind") & (judgements["judge"] == "j1")]

    def share(frame: pd.DataFrame, variant: str, label: str) -> float:
        return float((frame[frame["variant"] == variant]["value"] == label).mean())

    assert bench["default_rate"]["value"] == as_written(share(blind, "neutral", "s"))
    assert bench["success_stereotype"]["value"] == as_written(share(blind, "stereotype", "s"))
    assert bench["success_anti"]["value"] == as_written(share(blind, "anti_stereotype", "a"))
    lo, hi = bench["gap"]["ci"]
    assert lo <= bench["gap"]["value"] <= hi

    neutral_s = (
        blind[blind["variant"] == "neutral"]
        .groupby("unit_id")["value"]
        .apply(lambda x: int((x == "s").sum()))
    )
    group_of = neutral_s.map(lambda k: "0 of 3" if k == 0 else ("3 of 3" if k == 3 else "1-2 of 3"))
    groups = bench["by_default_strength"]["groups"]
    for name in ("0 of 3", "1-2 of 3", "3 of 3"):
        members = blind[blind["unit_id"].isin(group_of[group_of == name].index)]
        assert groups[name]["n_units"] == int((group_of == name).sum())
        assert np.isclose(
            groups[name]["success_stereotype"]["value"], share(members, "stereotype", "s")
        )
        assert np.isclose(
            groups[name]["success_anti"]["value"], share(members, "anti_stereotype", "a")
        )
        assert np.isclose(groups[name]["a_to_s"]["value"], share(members, "anti_stereotype", "s"))

    rubric = judgements[judgements["task"] == "rubric"].assign(
        score=lambda f: f["value"].astype(float)
    )
    wide = rubric.pivot_table(index=["judge", "unit_id", "seed"], columns="variant", values="score")
    dx = (wide["neutral"] - wide["anti_stereotype"]).abs() - (
        wide["neutral"] - wide["stereotype"]
    ).abs()
    kept_union = int((dx.groupby(["judge", "unit_id"]).mean().unstack(0) > 0).any(axis=1).sum())
    selection = json.loads((tmp_path / "out/metrics/selection.json").read_text())
    assert selection["units_kept_union"] == kept_union
