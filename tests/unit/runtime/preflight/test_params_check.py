"""``implicit-bench check`` validates every params section with its stage's model before any
model call (params_check.validate_params): values `dvc exp run -S` or a profile sets wrong are
one line naming the key, and params.yaml is left as it was (docs/errors.md)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from implicit_bench.cli.main import main
from implicit_bench.errors import ConfigError
from implicit_bench.params import load_params
from implicit_bench.params.profiles import compose
from implicit_bench.runtime.preflight.params_check import validate_params
from tests.helpers.paths import REPO_ROOT


def _set(params: dict, key: str, value) -> dict:
    node = params
    *head, last = key.split(".")
    for part in head:
        node = node[part]
    node[last] = value
    return params


BAD = [
    ("render.seeds", [42, 1042, 42.0], "render.seeds"),
    ("render.seeds", [42, 1042, 42], "render.seeds"),
    ("render.run", ["sim_local", "sim_local"], "render.run"),
    ("judge.max_failure_rate", math.nan, "judge.max_failure_rate"),
    ("base.cache_dir", "/proc/self", "base.cache_dir"),
    ("base.cache_dir", "/proc/self/deeper/cache", "base.cache_dir"),
    ("judges.qwen3vl", None, "judges.qwen3vl"),
    ("base.preflight", "maybe", "base.preflight"),
]


@pytest.mark.parametrize(("key", "value", "named"), BAD)
def test_a_bad_value_is_one_config_error_naming_the_key(key, value, named):
    params = _set(load_params(REPO_ROOT / "params.yaml"), key, value)
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")) as err:
        validate_params(params, "params.yaml")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("key", "value", "named"), BAD)
def test_check_refuses_it_in_one_line_and_leaves_params_yaml_as_it_was(
    tmp_path, monkeypatch, key, value, named
):
    shutil.copy(REPO_ROOT / "params.yaml", tmp_path / "params.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IMPLICIT_BENCH_CACHE_DIR", raising=False)
    params = _set(yaml.safe_load(Path("params.yaml").read_text()), key, value)
    Path("params.yaml").write_text(yaml.safe_dump(params))
    before = Path("params.yaml").read_bytes()
    result = CliRunner().invoke(main, ["check", "--no-disk"])
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 1 and len(errors) == 1 and named in errors[0], result.output
    assert "Traceback" not in result.output and "check: ok" not in result.output
    assert Path("params.yaml").read_bytes() == before


@pytest.mark.parametrize("profile", sorted(p.stem for p in (REPO_ROOT / "profiles").glob("*.yaml")))
def test_every_shipped_profile_validates(profile):
    path = REPO_ROOT / "profiles" / f"{profile}.yaml"
    validate_params(compose(profile, REPO_ROOT / "params.yaml", REPO_ROOT / "profiles"), path)


def test_a_cache_dir_that_does_not_exist_yet_is_fine(tmp_path):
    params = _set(load_params(REPO_ROOT / "params.yaml"), "base.cache_dir", "not/yet")
    validate_params(params, "params.yaml", root=tmp_path)


def test_the_cache_variable_naming_a_file_is_refused_where_the_cache_is_found(
    tmp_path, monkeypatch
):
    from implicit_bench.runtime.cache_location import ENV_VAR, cache_dir

    (tmp_path / "file").write_text("x")
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "file" / "cache"))
    with pytest.raises(ConfigError, match=f"{ENV_VAR}.*is not a directory"):
        cache_dir(tmp_path)
