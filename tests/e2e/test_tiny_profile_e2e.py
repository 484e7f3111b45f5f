"""`dvc repro` of the tiny profile, every stage, in a temporary copy of the repository.

The tiny profile is the paper profile on tiny random models of the paper's architectures
(docs/profiles.md): this run is the CPU rehearsal of a first paper run. Reduced here to three
units and five of the twelve debiasing configurations (one of each kind) so it takes minutes.
"""

from __future__ import annotations

import pytest

from tests.helpers.tiny_pipelines import run_tiny_profile


@pytest.mark.slow
def test_tiny_profile_runs_every_stage(repo_root, tmp_path):
    run_tiny_profile(repo_root, tmp_path)
