"""The DVC wiring of the debiasing stages: a foreach over the configurations, and debias.alpha
tracked by exactly the steering entries (and what reads their outputs)."""

from __future__ import annotations

import yaml

from tests.helpers.paths import REPO_ROOT


def _stages():
    from dvc.repo import Repo

    repo = Repo(str(REPO_ROOT))
    try:
        return {
            st.name: {k for dep in st.deps if getattr(dep, "params", None) for k in dep.params}
            for st in repo.index.stages
        }
    finally:
        repo.close()


def test_alpha_reruns_only_steering_entries():
    configs = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["debias"]["configs"]
    stages = _stages()
    for name, spec in configs.items():
        params = stages[f"debias_render@{name}"]
        assert f"debias.configs.{name}" in params
        assert ("debias.alpha" in params) == (spec["method"] == "steer"), name
    for upstream in ("retrieve", "rewrite"):
        assert "debias.alpha" not in stages[upstream]
    # one entry per configuration, none per image
    assert sum(n.startswith("debias_render@") for n in stages) == len(configs)
