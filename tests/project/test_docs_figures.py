"""Figures the docs quote stay true: the plan figures of docs/experiments.md follow
the committed construction metrics, and the stale statements found in review do not return."""

from __future__ import annotations

import json
import re

import pytest

from tests.helpers.paths import REPO_ROOT

# (file, text that was true once and is not any more, what is true instead)
STALE = [
    ("docs/experiments.md", "3,607", "the plan's unit count comes from metrics/triplets.json"),
    ("docs/experiments.md", "54,105", "images = units x 3 seeds x 5 prompts"),
    (
        "docs/gpu.md",
        "renders a tiny random model",
        "the default profile renders in the simulated world",
    ),
    (
        "docs/rendering.md",
        "default profile: tiny random",
        "the default profile renders in the simulated world",
    ),
    (
        "docs/profiles.md",
        "default profile renders a tiny random",
        "the default profile renders in the simulated world",
    ),
    ("docs/gpu.md", "cu124", "the lock pins torch 2.14.1 (CUDA 13)"),
    ("Makefile", "2.13.0", "torch 2.14.1"),
    ("pyproject.toml", "CPU build this project", "torch 2.14.1, a CUDA 13 build"),
    ("README.md", "master ", "dvc metrics diff labels the baseline HEAD"),
]


@pytest.mark.parametrize(("path", "stale", "truth"), STALE)
def test_stale_statements_are_gone(path, stale, truth):
    assert stale not in (REPO_ROOT / path).read_text(encoding="utf-8"), (
        f"{path} still says {stale!r}; {truth}"
    )


def test_plan_figures_follow_the_construction_metrics():
    doc = (REPO_ROOT / "docs/experiments.md").read_text(encoding="utf-8")
    triplets = json.loads((REPO_ROOT / "metrics/triplets.json").read_text())["triplets_total"]
    kg_units = json.loads((REPO_ROOT / "metrics/kg.json").read_text())["units_total"]
    units = int(re.search(r"^units: (\d+) ", doc, flags=re.M)[1])
    assert units == triplets, (
        "re-run `implicit-bench plan --profile paper` and paste its first lines"
    )
    images = [
        int(n.replace(",", ""))
        for n in re.findall(r"^render \w+\s+image\s+([\d,]+)", doc, flags=re.M)
    ]
    # 3 seeds x 3 prompts: the paper profile renders no negated variant
    assert images and all(n == units * 3 * 3 for n in images)
    assert re.search(
        r"^triplets\s+LLM answer\s+" + f"{kg_units:,}" + r"\s", doc, flags=re.M
    )  # one call per KG unit
