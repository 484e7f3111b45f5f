"""`dvc repro` of the tiny profile, every stage, in a temporary copy of the repository.

The tiny profile is the paper profile on tiny random models of the paper's architectures
(docs/profiles.md): this run is the CPU rehearsal of a first paper run. Reduced here to three
units and five of the twelve debiasing configurations (one of each kind) so it takes minutes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from implicit_bench._util.yamlsafe import load_yaml
from tests.conftest import copy_repo
from tests.dvc_workspace import dvc_available, run_in

KEEP_CONFIGS = (
    "unmodified",
    "rewrite_removed",
    "sv_full_unit_removed",
    "sv_attributes_own",
    "sv_llm_pair_own",
)


@pytest.mark.slow
def test_tiny_profile_runs_every_stage(repo_root, tmp_path):
    run_tiny_profile(repo_root, tmp_path)


def run_tiny_profile(
    repo_root: Path, tmp_path: Path, overrides: dict[str, object] | None = None
) -> Path:
    """Copy the repo, apply the tiny profile (+ ``overrides``: dotted key -> value), reduce it,
    ``dvc repro`` everything and check the outputs; returns the copy."""
    if not dvc_available():
        pytest.skip("dvc not installed")
    repo = tmp_path / "repo"
    copy_repo(repo_root, repo)

    def run(*cmd: str) -> str:
        return run_in(repo, *cmd)

    run("git", "init", "-q")
    run(sys.executable, "-m", "implicit_bench.cli.main", "profile", "tiny")
    # read as DVC and the stages read it (YAML 1.2: `aspect_ratio: 1:1` stays a string)
    params = load_yaml((repo / "params.yaml").read_text(encoding="utf-8"))
    assert params["base"]["profile"] == "tiny"
    params["subset"]["max_units"] = 3
    params["debias"]["configs"] = {
        k: v for k, v in params["debias"]["configs"].items() if k in KEEP_CONFIGS
    }
    # B.6 re-scores the kept configurations only (b6.debias_configs must name debias.configs)
    params["b6"]["debias_configs"] = [
        c for c in params["b6"]["debias_configs"] if c in KEEP_CONFIGS
    ]
    for dotted, value in (overrides or {}).items():
        *parents, leaf = dotted.split(".")
        node = params
        for part in parents:
            node = node[part]
        node[leaf] = value
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    (repo / "dvc.lock").unlink(
        missing_ok=True
    )  # the default profile's lock: every stage must run here
    run("git", "add", "-A")
    run("git", "commit", "-qm", "tiny profile")

    from tests.dvc_deps import missing

    assert missing(repo) == {}, "dvc.yaml deps miss what the tiny profile's stages read"
    run("dvc", "repro")
    assert "up to date" in run("dvc", "status")
    stages = set(run("dvc", "stage", "list", "--name-only").split())
    locked = set(yaml.safe_load((repo / "dvc.lock").read_text())["stages"])
    assert stages == locked  # every stage ran

    built = sorted(p.name for p in (repo / "models" / "tiny").iterdir())
    assert built == sorted(params["models"]["build"])
    render = json.loads((repo / "metrics" / "render.json").read_text())
    assert render["provenance"]["random_init"] is True
    assert {m["model"] for m in render["provenance"]["models"]} >= {
        "models/tiny/qwen_image",
        "models/tiny/sd3",
    }
    judgements = pd.read_parquet(repo / "data" / "judgements" / "judgements.parquet")
    assert set(judgements["judge"]) == {"qwen3vl", "gemma4", "gpt54"} and judgements["valid"].any()
    assert set(judgements["config"]) == {"qwen_image", "sd3"}
    retrieval = pd.read_parquet(repo / "data" / "processed" / "retrieval.parquet")
    assert len(retrieval) == 3

    # steering went through Qwen-Image's own encoder: same unit and seed, other image
    def shas(config: str) -> dict[tuple[str, int], str]:
        index = pd.read_parquet(repo / "data" / "debias" / "images" / config / "index.parquet")
        return {(r.unit_id, int(r.seed)): r.sha256 for r in index.itertuples() if r.status == "ok"}

    # (a token-level direction is cut to the neutral prompt's length: where the two steering
    # texts agree on those first tokens it is zero and the image is the unmodified one)
    base = shas("unmodified")
    for config in ("sv_full_unit_removed", "sv_attributes_own"):
        steered = shas(config)
        assert base and set(steered) == set(base)
        assert any(steered[k] != base[k] for k in base), config
    debias = json.loads((repo / "metrics" / "debias.json").read_text())
    assert set(debias["configs"]) >= {
        "unmodified",
        "rewrite_removed",
        "sv_full_unit_removed",
        "sv_attributes_own",
    }
    assert (repo / "report" / "index.html").exists()
    return repo
