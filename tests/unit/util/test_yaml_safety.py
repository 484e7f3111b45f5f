"""Every YAML we read refuses duplicate keys (as DVC does) and anchor bombs (bounded
once aliases are expanded); ``plan`` refuses what the stages would. A fuzz test of YAML."""

from __future__ import annotations

import time

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from implicit_bench._util.yamlsafe import MAX_NODES, YamlBoundError, load_yaml
from implicit_bench.cli.main import main as cli_main
from implicit_bench.errors import ConfigError
from implicit_bench.params import load_params
from tests.helpers.paths import REPO_ROOT
from tests.helpers.plan_fixtures import PLAN_PARAMS, write_plan_metrics
from tests.helpers.yaml_fixtures import BOMB


def test_duplicate_keys_are_an_error_naming_the_key_and_lines(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("render:\n  seeds: [1]\n  seeds: [2]\n")
    with pytest.raises(
        ConfigError,
        match=r"params.yaml: not valid YAML: .*duplicate key 'seeds' "
        r"\(first given on line 2\).* line 3",
    ):
        load_params(path)


def test_merge_keys_may_be_overridden():
    assert load_yaml("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\n")["d"] == {"x": 3, "y": 2}


def test_anchor_bomb_is_refused_at_once(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(BOMB)
    t0 = time.perf_counter()
    with pytest.raises(
        ConfigError, match=f"more than {MAX_NODES} values once aliases are expanded"
    ):
        load_params(path)
    assert time.perf_counter() - t0 < 2.0  # plan hung past 120 s at 1.4 GB
    with pytest.raises(YamlBoundError, match="an alias contains itself"):
        load_yaml("a: &a [*a]\n")


def test_plan_refuses_a_bomb_in_extra_body_duplicate_seeds_unknown_variant_and_bad_judge(
    tmp_path, monkeypatch
):
    write_plan_metrics(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    text = yaml.safe_dump(PLAN_PARAMS)
    cases = {
        "bomb": BOMB.replace("\n", "\n  ").join(["x:\n  ", ""]) + "\n" + text,
        "seeds twice": text.replace("render:\n", "render:\n  seeds: [1, 2]\n", 1),
        "unknown variant": yaml.safe_dump(
            {**PLAN_PARAMS, "render": {**PLAN_PARAMS["render"], "variants": ["neutral", "bogus"]}}
        ),
        "bad judge": yaml.safe_dump(
            {
                **PLAN_PARAMS,
                "judges": {
                    **PLAN_PARAMS["judges"],
                    "j1": {"backend": "transformers", "model": "x", "max_new_tokens": "lots"},
                },
            }
        ),
    }
    expected = {
        "bomb": "once aliases are expanded",
        "seeds twice": "duplicate key 'seeds'",
        "unknown variant": "unknown variant(s) ['bogus']",
        "bad judge": "judges.j1",
    }
    for name, body in cases.items():
        assert body != text or name == "bomb"
        (tmp_path / "params.yaml").write_text(body)
        result = CliRunner().invoke(cli_main, ["plan"])
        assert result.exit_code == 1, (name, result.output)
        assert (
            expected[name] in result.output
            and "Traceback" not in result.output
            and "KeyError" not in result.output
        ), (name, result.output)


# ----- fuzz: any text gives a mapping or a ConfigError, fast
# ---------------------------------------
yaml_text = st.lists(
    st.sampled_from(
        [
            "a: 1\n",
            "a: 2\n",
            "b: &x [1, 2]\n",
            "c: *x\n",
            "d: [*x, *x, *x]\n",
            "e: {f: 1, f: 2}\n",
            "- 1\n",
            "<<: *x\n",
            "g: !!python/object:os.system x\n",
            "h: 'unterminated\n",
            "  i: j\n",
            "k: &y [*y]\n",
            "\t\n",
            "{\n",
        ]
    ),
    max_size=12,
).map("".join)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(yaml_text)
def test_fuzz_params_yaml(tmp_path, text):
    path = tmp_path / "params.yaml"
    path.write_text(text)
    t0 = time.perf_counter()
    try:
        data = load_params(path)
    except ConfigError as exc:
        assert str(exc).startswith(f"{path}:")
    else:
        assert isinstance(data, dict)
    assert time.perf_counter() - t0 < 2.0


def test_plain_scalars_read_as_dvc_reads_them(tmp_path):
    """`1:1` (an aspect ratio DVC's writer leaves unquoted) is a string, as in YAML 1.2 and
    DVC's ruamel reader, not the YAML 1.1 base-60 integer 61; other numbers are unchanged."""
    from implicit_bench._util.yamlsafe import load_yaml

    got = load_yaml("a: 1:1\nb: 190:20:30\nc: 12\nd: 0.5\ne: 1.0e+3\nf: .inf\ng: 0x1f\nh: 1_000\n")
    assert got["a"] == "1:1" and got["b"] == "190:20:30"
    assert (got["c"], got["d"], got["e"], got["g"], got["h"]) == (12, 0.5, 1000.0, 31, 1000)
    assert got["f"] == float("inf")


def test_profile_switch_keeps_the_aspect_ratio_a_string(tmp_path):
    """`implicit-bench profile tiny` (DVC's writer drops the quotes of "1:1") and the params
    loader: every generators entry validates (the render stage validates them all)."""
    import shutil
    import subprocess
    import sys

    root = REPO_ROOT
    shutil.copy(root / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(root / "profiles", tmp_path / "profiles")
    done = subprocess.run(
        [sys.executable, "-m", "implicit_bench.cli.main", "profile", "tiny"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    from implicit_bench.params import load_params, section
    from implicit_bench.render.params import RenderParams

    params = load_params(tmp_path / "params.yaml")
    assert params["generators"]["nano_banana_2"]["aspect_ratio"] == "1:1"
    # validates every generators entry, as the render stage does
    section(params, "render", RenderParams, "params.yaml", attach={"generators": "configs"})
