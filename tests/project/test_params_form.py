"""``dvc exp run -S key=value`` changes only that value's lines of params.yaml.

DVC applies ``-S`` with ``dvc.utils.hydra.apply_overrides`` (ruamel.yaml load, Hydra override,
dump); params.yaml is kept in the form that writer produces (scripts/params_dvc_form.py), so
the rewrite is a fixed point and an experiment's params diff is one line.
"""

from __future__ import annotations

import difflib
import shutil

import pytest
import yaml

from tests.helpers.paths import REPO_ROOT


def _apply(tmp_path, overrides: list[str]) -> tuple[list[str], list[str]]:
    from dvc.utils.hydra import apply_overrides

    path = tmp_path / "params.yaml"
    shutil.copy(REPO_ROOT / "params.yaml", path)
    before = path.read_text(encoding="utf-8").splitlines()
    apply_overrides(path, overrides)
    after = path.read_text(encoding="utf-8").splitlines()
    diff = [
        line
        for line in difflib.unified_diff(before, after, lineterm="", n=0)
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    return diff, after


def test_params_yaml_is_a_fixed_point_of_dvcs_writer(tmp_path):
    seed = yaml.safe_load((REPO_ROOT / "params.yaml").read_text(encoding="utf-8"))["bootstrap"][
        "seed"
    ]
    diff, _ = _apply(tmp_path, [f"bootstrap.seed={seed}"])
    assert diff == [], (
        "params.yaml is not in DVC's writer form: run python scripts/params_dvc_form.py\n"
        + "\n".join(diff[:20])
    )


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            "debias.alpha=1",
            [
                "-  alpha: 2.0  # steering strength (Appendix E.3: 1.0)",
                "+  alpha: 1    # steering strength (Appendix E.3: 1.0)",
            ],
        ),
        ("subset.max_units=10", None),
        ("generators.sim_local.batch_size=16", None),
        ("bootstrap.n=200", None),
    ],
)
def test_set_param_changes_one_line(tmp_path, override, expected):
    diff, after = _apply(tmp_path, [override])
    assert len(diff) == 2 and diff[0][0] == "-" and diff[1][0] == "+", diff
    if expected:
        assert diff == expected
    key, value = override.split("=")
    node = yaml.safe_load("\n".join(after))
    for part in key.split("."):
        node = node[part]
    assert str(node) == value


def test_set_list_param_changes_only_its_items(tmp_path):
    diff, _ = _apply(tmp_path, ["render.seeds=[42,1042]"])
    assert diff == ["-  - 2042"]
