"""Shared fixtures. Everything runs offline: no hub downloads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def tiny_generator_dir(tmp_path_factory) -> Path:
    """The tiny random text-to-image pipeline, built once under a fixed seed."""
    from implicit_bench.tiny import build

    return build("generator", tmp_path_factory.mktemp("tiny") / "generator", seed=0)
