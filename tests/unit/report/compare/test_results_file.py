"""``implicit-bench results``: one results file per run (params,
versions, git, run log, samples)."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pandas as pd
from click.testing import CliRunner

from implicit_bench.cli.main import main as cli_main


def test_results_file_of_a_run(tmp_path):
    root = tmp_path
    (root / "params.yaml").write_text(
        "generators:\n  gen: {backend: diffusers, model: org/model, revision: "
        "abc123}\njudges:\n  j: {backend: sim, model: 'sim:a'}\n"
    )
    (root / "metrics").mkdir()
    (root / "metrics/summary.json").write_text(
        json.dumps({"default_rate_pct": 50.0, "simulated": True})
    )
    (root / "metrics/benchmark.json").write_text(
        json.dumps(
            {
                "leaderboard": {"rows": [{"config": "gen"}], "pairs": []},
                "provenance": {
                    "models": [{"role": "blind:j", "model": "sim:a"}],
                    "simulated": True,
                },
            }
        )
    )
    (root / "data/judgements").mkdir(parents=True)
    pd.DataFrame({"unit_id": ["u1", "u2"], "raw": ["A", "B"]}).to_parquet(
        root / "data/judgements/judgements.parquet"
    )
    (root / "logs").mkdir()
    (root / "logs/runs.jsonl").write_text(
        json.dumps({"stage": "judge", "seconds": 1.0, "model_calls": 5})
        + "\n"
        + json.dumps({"stage": "judge", "seconds": 2.5, "model_calls": 0})
        + "\nnot json\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "params.yaml", "metrics"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "run"],
        cwd=root,
        check=True,
    )
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    res = CliRunner().invoke(cli_main, ["results", "--repo", str(root)])
    assert res.exit_code == 0, res.output
    path = root / f"logs/results_{commit[:12]}.json"
    assert f"results: {path} (SIMULATED)" in res.output
    doc = json.loads(path.read_text())
    assert doc["simulated"] is True and doc["results"]["default_rate_pct"] == 50.0
    assert doc["git"] == {"commit": commit, "branch": doc["git"]["branch"], "dirty": False}
    assert doc["models"]["catalogues"]["generators"]["gen"] == {
        "backend": "diffusers",
        "model": "org/model",
        "revision": "abc123",
    }
    assert doc["models"]["provenance"]["benchmark.json"]["models"][0]["model"] == "sim:a"
    assert doc["run_log"]["stages"]["judge"]["seconds"] == 2.5  # the last run of each stage
    assert doc["leaderboard"]["rows"][0]["config"] == "gen"
    judgements = root / "data/judgements/judgements.parquet"
    assert doc["samples"] == [
        {
            "what": "judgements (every answer, raw text kept)",
            "path": "data/judgements/judgements.parquet",
            "rows": 2,
            "sha256": hashlib.sha256(judgements.read_bytes()).hexdigest(),
        }
    ]
    assert doc["versions"]["implicit-bench"] and doc["params"]["judges"]["j"]["model"] == "sim:a"
