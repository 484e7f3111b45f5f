"""Shared fixtures. Everything runs offline: no hub downloads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.paths import REPO_ROOT

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def tiny_generator_dir(tmp_path_factory) -> Path:
    """The tiny random text-to-image pipeline, built once under a fixed seed."""
    from implicit_bench.backends.tiny.stage import build

    return build("generator", tmp_path_factory.mktemp("tiny") / "generator", seed=0)


@pytest.fixture(scope="session")
def dvc_base(tmp_path_factory) -> Path:
    """The run's one DVC workspace: the repository committed with `dvc repro triplets` run
    (tests/helpers/dvc_workspace.py), built once even on several xdist workers; tests copy it with
    ``dvc_workspace.copy_workspace``."""
    from tests.helpers.dvc_workspace import build_base, dvc_available, shared_build

    if not dvc_available():
        pytest.skip("dvc not installed")
    return shared_build(tmp_path_factory, "dvc-base", lambda root: build_base(REPO_ROOT, root))


# The test files that take minutes, in the order pytest-xdist should start them (`make test`:
# `--dist loadfile --no-loadscope-reorder`, docs/testing.md). xdist hands each worker a file,
# then another one to any worker with at most two tests pending: the experiment module (five
# tests) starts on one worker, the one-test tiny profile on the other with the SmolLM2 file
# queued behind it, and the subsets module goes to the first worker to have two tests
# pending (by then the experiments' shared baseline is built). The longest of the rest follow
# so that no long file is left for the end. Other files keep their order. (Measured on fresh
# clones: this order 8 min 14 s and 8 min 31 s; the subsets module queued behind the tiny
# profile instead, 9 min 15 s.)
RUN_FIRST = (
    "test_dvc_experiments.py",
    "test_tiny_profile_e2e.py",
    "test_llm_constrained.py",
    "test_dvc_experiment_subsets.py",
    "test_triplets.py",
    "test_ray_stages.py",
    "test_llm.py",
    "test_judge_stage.py",
    "test_dvc_deps.py",
    "test_execution.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(RUN_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(RUN_FIRST)))
