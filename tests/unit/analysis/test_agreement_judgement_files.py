"""``implicit-bench agreement``: two judges or deployments on the same images, by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from implicit_bench.analysis.agreement.judgement_files import pair_agreement, paired, side
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.cli.main import main


def _rows(judge: str, labels: dict[tuple[str, int], str], task: str = "blind") -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "unit_id": u,
                "variant": "neutral",
                "seed": s,
                "config": "gen",
                "judge": judge,
                "task": task,
                "value": v,
                "valid": True,
                "order": "sa" if task == "blind" else None,
            }
            for (u, s), v in labels.items()
        ]
    )


# local: s s a neither | s a ; served: s a a neither | s a (one disagreement in six)
LOCAL = {
    ("u1", 42): "s",
    ("u1", 1042): "s",
    ("u2", 42): "a",
    ("u2", 1042): "neither",
    ("u3", 42): "s",
    ("u3", 1042): "a",
}
SERVED = {**LOCAL, ("u1", 1042): "a", ("u4", 42): "s"}  # u4: only one side, not paired


def test_agreement_and_kappa_by_hand():
    pairs = paired(
        side(_rows("q", LOCAL), None, "blind", None, "first"),
        side(_rows("q", SERVED), None, "blind", None, "second"),
    )
    res = pair_agreement(pairs, Bootstrap(200, 1, 0.95), "t")
    assert res["n_images"] == 6 and res["n_units"] == 3
    assert res["agreement"]["value"] == pytest.approx(5 / 6)
    # confusion (rows local, columns served) over a, neither, s: [[2,0,0],[0,1,0],[1,0,2]]
    assert res["confusion"]["counts"] == [[2, 0, 0], [0, 1, 0], [1, 0, 2]]
    # p_o = 5/6; marginals local a 2 n 1 s 3, served a 3 n 1 s 2: p_e = (6 + 1 + 6) / 36 = 13/36
    assert res["cohen_kappa"]["value"] == pytest.approx((5 / 6 - 13 / 36) / (1 - 13 / 36))  # 17/23
    lo, hi = res["cohen_kappa"]["ci"]
    assert lo <= res["cohen_kappa"]["value"] <= hi <= 1.0


def test_agreement_command(tmp_path):
    _rows("qwen3vl", LOCAL).to_parquet(tmp_path / "local.parquet")
    both = pd.concat([_rows("qwen3vl", SERVED), _rows("gpt54", LOCAL)])
    both.to_parquet(tmp_path / "served.parquet")
    out = tmp_path / "agree.json"
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "agreement",
            "--first",
            str(tmp_path / "local.parquet"),
            "--second",
            f"{tmp_path / 'served.parquet'}:qwen3vl",
            "--n-boot",
            "50",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["agreement"]["value"] == pytest.approx(5 / 6) and data["cohen_kappa"][
        "value"
    ] == pytest.approx(17 / 23)
    # a file with two judges needs FILE:JUDGE
    result = runner.invoke(
        main,
        [
            "agreement",
            "--first",
            str(tmp_path / "local.parquet"),
            "--second",
            str(tmp_path / "served.parquet"),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code != 0 and "2 judges" in result.output and "FILE:JUDGE" in result.output
