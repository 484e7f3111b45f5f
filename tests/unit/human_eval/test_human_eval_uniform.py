"""Human evaluation as the paper ran it (D.1, D.4): a uniform random sample of units and the
mean-pairwise-r screen, set by the paper profile."""

from __future__ import annotations

import numpy as np
import pytest

from implicit_bench.human_eval.bundle import HumanEvalParams, sample_cases
from implicit_bench.params.profiles import compose
from tests.helpers.paths import REPO_ROOT
from tests.helpers.synthetic_project import build_synthetic_project


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("he_uniform")
    build_synthetic_project(root, n_units=24, image_size=24, debias_configs=(), with_metrics=False)
    return root


def _params(root, **kw):
    return HumanEvalParams(
        units=str(root / "data/interim/units.parquet"),
        image_roots=[str(root / "data/images")],
        selected_units=str(root / "data/processed/selected_units.parquet"),
        judgements=[str(root / "data/judgements/*.parquet")],
        **kw,
    )


def test_uniform_sample_is_numpys_choice_over_the_sorted_eligible_units(project):
    cases, record, _ = sample_cases(_params(project, sample_size=10, seed=5, stratify_by=None))
    assert record["design"] == "uniform" and record["allocation"] is None
    assert record["stratify_by"] is None
    eligible = sorted(
        c["unit_id"]
        for c in sample_cases(_params(project, sample_size=24, seed=5, stratify_by=None))[0]
    )
    assert len(eligible) == record["eligible_units"] == 24
    expected = np.random.default_rng(5).choice(eligible, size=10, replace=False).tolist()
    assert [c["unit_id"] for c in cases] == expected  # the draw, in the drawn order


def test_stratified_sample_is_unchanged_by_default(project):
    cases, record, _ = sample_cases(_params(project, sample_size=12, seed=7))
    assert record["design"] == "stratified" and sum(record["allocation"].values()) == 12


def test_paper_profile_runs_the_papers_protocol():
    params = compose("paper", REPO_ROOT / "params.yaml", REPO_ROOT / "profiles")
    he = HumanEvalParams(**params["human_eval"])
    assert he.stratify_by is None and he.screen_rule == "mean_pairwise"
    assert he.screen_threshold == 0.40
