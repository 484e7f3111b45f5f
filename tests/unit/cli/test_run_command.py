"""``implicit-bench run``: the overlay, preflight and plan of a dry run
(README, "Evaluate your model")."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from implicit_bench.cli.main import main
from implicit_bench.planning.overlay import generator_entry, judge_entry
from tests.helpers.chat_server import ChatServer
from tests.helpers.paths import enter_project_copy


def test_specs_map_to_catalogue_entries():
    assert generator_entry("sim_local", {"sim_local": {}}, "auto") == ("sim_local", None)
    assert generator_entry("org/My Model", {}, "cuda") == (
        "My_Model",
        {"backend": "diffusers", "model": "org/My Model", "device": "cuda"},
    )
    assert generator_entry("openai-images:gpt-image-2", {}, "auto")[1] == {
        "backend": "openai_images",
        "model": "gpt-image-2",
        "api_key_env": "OPENAI_API_KEY",
    }
    assert generator_entry("gemini:imagen-x", {}, "auto")[1] == {
        "backend": "gemini",
        "model": "imagen-x",
    }
    assert judge_entry("openai:gpt-5.4", {}, "auto", None)[1] == {
        "backend": "openai",
        "model": "gpt-5.4",
        "base_url": "https://api.openai.com/v1",
        "api_key_env": "OPENAI_API_KEY",
    }
    name, block = judge_entry(
        "openai:Qwen/Qwen3-VL-8B-Instruct@http://gpu:8000/v1", {}, "auto", None
    )
    assert (
        name == "Qwen3-VL-8B-Instruct"
        and block["base_url"] == "http://gpu:8000/v1"
        and block["api_key_env"] is None
    )


def test_dry_run_writes_the_overlay_and_the_plan_for_a_hub_id_and_an_openai_compatible_judge(
    tmp_path, monkeypatch
):
    enter_project_copy(tmp_path, monkeypatch)
    before = (tmp_path / "params.yaml").read_text()
    with ChatServer(models=["Qwen/Qwen3-VL-8B-Instruct"]) as server:
        result = CliRunner().invoke(
            main,
            [
                "run",
                "--generator",
                "someone/tiny-diffusers-pipe",
                "--judge",
                f"openai:Qwen/Qwen3-VL-8B-Instruct@{server.base_url}",
                "--units",
                "4",
                "--seeds",
                "42,1042",
                "--dry-run",
            ],
        )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "params.yaml").read_text() == before  # a dry run switches nothing
    overlay = yaml.safe_load((tmp_path / "profiles/run.yaml").read_text())
    assert overlay["extends"] == "default" and overlay["base"] == {"profile": "run"}
    assert overlay["generators"] == {
        "tiny-diffusers-pipe": {
            "backend": "diffusers",
            "model": "someone/tiny-diffusers-pipe",
            "device": "auto",
        }
    }
    assert overlay["judges"]["Qwen3-VL-8B-Instruct"]["base_url"] == server.base_url
    # the benchmark phase only: construction keeps the profile's generators
    assert "render" not in overlay and "judge" not in overlay and "select" not in overlay
    assert overlay["subset"] == {"max_units": 4}
    assert overlay["bench"]["generators"] == {
        "tiny-diffusers-pipe": {
            "generator": "tiny-diffusers-pipe",
            "variants": ["neutral", "stereotype", "anti_stereotype"],
            "seeds": [42, 1042],
        }
    }
    assert overlay["bench"]["run"] == ["tiny-diffusers-pipe"]
    assert overlay["bench"]["tasks"]["blind"] == {
        "judges": ["Qwen3-VL-8B-Instruct"],
        "configs": ["tiny-diffusers-pipe"],
    }
    assert overlay["evaluate"]["config"] == "tiny-diffusers-pipe"
    # the preflight reached the judge's endpoint (it lists the
    # model) and names the hub model offline
    assert [r["path"] for r in server.requests] == ["/v1/models"]
    lines = result.output.splitlines()
    problems = [line for line in lines if line.startswith("check: ")]
    assert (
        len(problems) == 1
        and "someone/tiny-diffusers-pipe is not in the local Hugging Face cache" in problems[0]
    )
    assert not any(line.startswith("render tiny-diffusers-pipe") for line in lines)
    render = next(line for line in lines if line.startswith("bench_render tiny-diffusers-pipe"))
    assert render.split()[3:6] == [
        "24",
        "-",
        "24",
    ]  # at most the 4 candidate units (no selection yet) x 3 variants x 2 seeds
    # the overlay is a profile: switching to it gives the composed params
    switched = CliRunner().invoke(main, ["profile", "run"])
    assert switched.exit_code == 0, switched.output
    params = yaml.safe_load((tmp_path / "params.yaml").read_text())
    assert params["bench"]["run"] == ["tiny-diffusers-pipe"] and params["base"]["profile"] == "run"
    assert params["render"]["run"] == ["sim_local", "sim_api"]  # construction: the default's
    assert (
        "sim_local" in params["generators"]
    )  # the default's entries stay; only the overlay's were added
    # and back: every key the overlay set (catalogue entries,
    # evaluate.blind_judges, ...) is the default's again
    back = CliRunner().invoke(main, ["profile", "default"])
    assert back.exit_code == 0, back.output
    assert yaml.safe_load((tmp_path / "params.yaml").read_text()) == yaml.safe_load(before)


def test_a_failing_preflight_stops_the_run_before_dvc(tmp_path, monkeypatch):
    enter_project_copy(tmp_path, monkeypatch)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(
        main, ["run", "--generator", "sim_local", "--judge", "openai:gpt-5.4"]
    )
    assert result.exit_code == 1
    assert (
        "environment variable OPENAI_API_KEY is not set" in result.output
        and "== plan" not in result.output
    )
    assert yaml.safe_load((tmp_path / "params.yaml").read_text())["base"]["profile"] == "default"


def test_a_judge_named_like_a_profile_entry_gets_its_own_entry_and_debias_keeps_the_profiles(
    tmp_path, monkeypatch
):
    """`--judge openai:qwen3vl@URL` next to the profile's `qwen3vl`: the overlay adds
    `qwen3vl-2` and debias.scoring (docs/experiments.md) still uses the profile's qwen3vl."""
    from implicit_bench.params.profiles import compose

    enter_project_copy(tmp_path, monkeypatch)
    profile_qwen = compose("default")["judges"]["qwen3vl"]
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--generator",
            "sim_local",
            "--generator",
            "openai-images:sim_local",
            "--judge",
            "openai:qwen3vl@http://127.0.0.1:9/v1",
            "--judge",
            "openai:qwen3vl@http://127.0.0.1:10/v1",
            "--dry-run",
            "--no-preflight",
        ],
    )
    assert result.exit_code == 0, result.output
    overlay = yaml.safe_load((tmp_path / "profiles/run.yaml").read_text())
    assert sorted(overlay["judges"]) == ["qwen3vl-2", "qwen3vl-3"]
    assert overlay["judges"]["qwen3vl-2"]["base_url"] == "http://127.0.0.1:9/v1"
    assert sorted(overlay["generators"]) == ["sim_local-2"]
    params = compose("run")
    assert params["judges"]["qwen3vl"] == profile_qwen
    assert params["debias"]["scoring"]["rubric_judge"] == "qwen3vl"
    assert params["bench"]["tasks"]["alignment"]["judges"] == ["qwen3vl-2"]
    # sim_local renders in construction: its benchmark-phase store gets a name of its own
    assert params["bench"]["run"] == ["sim_local-bench", "sim_local-2"]
    assert params["bench"]["generators"]["sim_local-bench"]["generator"] == "sim_local"
    assert params["render"]["run"] == ["sim_local", "sim_api"]


def _snapshot(root):
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in [root / "params.yaml", *sorted((root / "profiles").glob("*.yaml"))]
    }


@pytest.mark.parametrize(
    "bad", ["x.lock", "-x", "a/b", "a..b", "a b", "x.", ".x", "a~1", "a:b", "a@{b"]
)
def test_a_name_dvc_refuses_is_a_one_line_error_before_anything_is_written(
    tmp_path, monkeypatch, bad
):
    """`--name` follows DVC's experiment-name rules (git check-ref-format, no '/', no
    leading '-'): refused before params.yaml is switched or an overlay written."""
    enter_project_copy(tmp_path, monkeypatch)
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--generator",
            "sim_local",
            "--judge",
            "qwen3vl",
            "--no-preflight",
            f"--name={bad}",
        ],
    )
    assert result.exit_code != 0
    assert "--name" in result.output and "not a DVC experiment name" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert _snapshot(tmp_path) == before


def test_a_profile_that_is_the_overlay_is_refused_before_the_overlay_is_rewritten(
    tmp_path, monkeypatch
):
    """`run --profile run` (and a profile extending profiles/run.yaml) would make the overlay
    extend itself: a one-line error, profiles/run.yaml byte-unchanged."""
    enter_project_copy(tmp_path, monkeypatch)
    args = ["run", "--generator", "sim_local", "--judge", "qwen3vl", "--no-preflight"]
    first = CliRunner().invoke(main, [*args, "--dry-run"])
    assert first.exit_code == 0, first.output
    (tmp_path / "profiles/mine.yaml").write_text("extends: run\n")
    before = _snapshot(tmp_path)
    for profile in ("run", "mine"):
        result = CliRunner().invoke(main, [*args, "--profile", profile])
        assert result.exit_code != 0
        assert "--profile" in result.output and "profiles/run.yaml" in result.output
        assert len(result.output.strip().splitlines()) == 1
        assert _snapshot(tmp_path) == before
    named = CliRunner().invoke(main, [*args, "--profile", "run", "--name", "two", "--dry-run"])
    assert named.exit_code == 0, named.output  # another overlay may extend it


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--seeds", "42,,1042"),
        ("--seeds", "42,42"),
        ("--seeds", "42,42.0"),
        ("--seeds", "-1"),
        ("--seeds", "9007199254740992"),
        ("--timeout", "inf"),
        ("--timeout", "nan"),
        ("--timeout", "0"),
    ],
)
def test_a_bad_seed_list_or_timeout_is_a_usage_error_naming_the_option(
    tmp_path, monkeypatch, option, value
):
    """`--seeds` is checked as render.seeds is (params.Seeds), `--timeout` is finite in
    0.1 .. 60 (as `check --timeout`): click's one `Error:` line, nothing written."""
    enter_project_copy(tmp_path, monkeypatch)
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(
        main, ["run", "--generator", "sim_local", "--judge", "qwen3vl", option, value]
    )
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 2 and len(errors) == 1 and f"'{option}'" in errors[0]
    assert "Traceback" not in result.output
    assert _snapshot(tmp_path) == before


def test_check_timeout_nan_is_refused():
    """click.FloatRange lets nan through (every comparison is false); FiniteFloat does not."""
    from implicit_bench.cli.check import check_command

    result = CliRunner().invoke(check_command, ["--timeout", "nan"])
    assert result.exit_code == 2 and "'--timeout'" in result.output


def test_run_starts_dvc_of_its_own_environment_without_path(tmp_path, monkeypatch):
    """Without the virtualenv's ``bin`` on PATH, ``run`` still starts DVC: ``python -m dvc``
    of the interpreter it runs in (``No such file or directory: 'dvc'``)."""
    import subprocess
    import sys

    import implicit_bench.cli.run as run_module

    enter_project_copy(tmp_path, monkeypatch)
    started, real_run = [], subprocess.run

    def fake_run(cmd, check):
        started.append(cmd)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(run_module.subprocess, "run", fake_run)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = CliRunner().invoke(
        main, ["run", "--generator", "sim_local", "--judge", "qwen3vl", "--no-preflight"]
    )
    assert result.exit_code == 0, result.output
    assert started == [[sys.executable, "-m", "dvc", "exp", "run", "evaluate"]]  # --stages
    assert "running dvc exp run" in result.output
    # that command line runs with nothing on PATH
    version = real_run(
        [*started[0][:3], "--version"], env={"PATH": ""}, capture_output=True, text=True
    )
    assert version.returncode == 0, version.stderr


def test_run_without_dvc_installed_is_one_line_and_leaves_params_yaml(tmp_path, monkeypatch):
    import importlib.util

    enter_project_copy(tmp_path, monkeypatch)
    before = (tmp_path / "params.yaml").read_text()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "dvc" else real(name, *a)
    )
    result = CliRunner().invoke(
        main, ["run", "--generator", "sim_local", "--judge", "qwen3vl", "--no-preflight"]
    )
    assert result.exit_code != 0
    assert "DVC is not installed in this Python environment" in result.output
    assert (tmp_path / "params.yaml").read_text() == before


def test_a_fixed_unit_set_needs_no_construction_and_units_makes_a_nested_pilot(
    tmp_path, monkeypatch
):
    """`run --units-file F --units N`: the world plants F's units, evaluate depends on the
    benchmark phase's files only (evaluate.inputs), the pilot is N units of F, and the plan
    lists no debiasing stage (the run's DVC target is evaluate)."""
    from implicit_bench.params.profiles import compose
    from implicit_bench.protocol.tables import UNITS
    from tests.helpers.render_fixtures import units_frame

    enter_project_copy(tmp_path, monkeypatch)
    UNITS.write(units_frame(), tmp_path / "mine.parquet")
    args = ["run", "--generator", "sim_api", "--judge", "qwen3vl", "--tables", "4"]
    args += ["--units-file", "mine.parquet", "--dry-run", "--no-preflight"]
    result = CliRunner().invoke(main, [*args, "--units", "2"])
    assert result.exit_code == 0, result.output
    assert "pilot: 2 of 4 units of mine.parquet" in result.output
    assert "debias_render" not in result.output and "retrieve " not in result.output
    params = compose("run")
    pilot = "data/raw/pilot_units.parquet"
    assert params["world"]["units"] == params["bench"]["units"] == pilot
    assert params["evaluate"]["units"] == pilot and params["evaluate"]["selected_units"] is None
    assert params["evaluate"]["judgements"] == ["data/judgements/bench.parquet"]
    assert params["evaluate"]["inputs"] == {
        "selection": pilot,
        "selection_metrics": pilot,
        "judgements": "data/judgements/bench.parquet",
        "clip": "data/judgements/bench.parquet",
        "images": "data/bench_images",
    }
    assert params["judge"]["images_dir"] == "data/bench_images"
    assert params["evaluate"]["config"] == "sim_api-bench"
    assert not (tmp_path / pilot).exists()  # a dry run plans the pilot it wrote aside
    assert "benchmark unit set: 2 (" in result.output


def test_an_unknown_stage_is_a_usage_error_before_anything_is_written(tmp_path, monkeypatch):
    import shutil

    from tests.helpers.paths import REPO_ROOT

    enter_project_copy(tmp_path, monkeypatch)
    shutil.copy(REPO_ROOT / "dvc.yaml", tmp_path / "dvc.yaml")
    result = CliRunner().invoke(
        main, ["run", "--generator", "sim_api", "--judge", "qwen3vl", "--stages", "evaluat"]
    )
    assert result.exit_code == 2
    assert "unknown stage(s) evaluat" in result.output
    assert not (tmp_path / "profiles/run.yaml").exists()


def test_an_empty_input_table_names_the_stage_that_wrote_it(tmp_path, monkeypatch):
    """evaluate on a judgements table with a header only names bench_judge, not itself."""
    import shutil

    import pandas as pd

    from implicit_bench.analysis.stage import evaluate_inputs
    from implicit_bench.errors import InputError
    from implicit_bench.params import load_params
    from implicit_bench.protocol.tables import JUDGEMENTS, UNITS
    from tests.helpers.paths import REPO_ROOT
    from tests.helpers.render_fixtures import units_frame

    enter_project_copy(tmp_path, monkeypatch)
    shutil.copy(REPO_ROOT / "dvc.yaml", tmp_path / "dvc.yaml")
    UNITS.write(units_frame(), tmp_path / "units.parquet")
    (tmp_path / "data/judgements").mkdir(parents=True)
    pd.DataFrame(columns=list(JUDGEMENTS.required)).to_parquet(
        tmp_path / "data/judgements/bench.parquet", index=False
    )
    params = load_params("params.yaml")
    params["evaluate"] = {
        **params["evaluate"],
        "units": "units.parquet",
        "judgements": ["data/judgements/bench.parquet"],
        "image_index_glob": None,
    }
    with pytest.raises(InputError) as err:
        evaluate_inputs(params, "params.yaml")
    assert "no data rows: stage bench_judge wrote no rows" in str(err.value)
    assert "metrics/bench_judge.json" in str(err.value)


def test_run_exports_eee_records_when_asked(tmp_path, monkeypatch):
    """``run --export-eee DIR``: after the experiment, the records of the workspace's outputs
    (here the committed default-profile metrics: DVC is not started)."""
    import json
    import subprocess

    import implicit_bench.cli.run as run_module

    enter_project_copy(tmp_path, monkeypatch)
    real = subprocess.run

    def fake_run(cmd, *args, **kwargs):  # DVC is not started; git answers as it is
        return subprocess.CompletedProcess(cmd, 0) if "dvc" in cmd else real(cmd, *args, **kwargs)

    monkeypatch.setattr(run_module.subprocess, "run", fake_run)
    args = ["run", "--generator", "sim_local", "--judge", "qwen3vl", "--no-preflight"]
    result = CliRunner().invoke(main, [*args, "--export-eee", "eee"])
    assert result.exit_code == 0, result.output
    assert "export eee: 2 records -> eee (schema valid)" in result.output
    records = sorted((tmp_path / "eee").rglob("*.json"))
    assert len(records) == 2 and json.loads(records[0].read_text())["model_info"]["name"]
    result = CliRunner().invoke(main, [*args, "--queue", "--export-eee", "eee"])
    assert result.exit_code != 0 and "not with --queue" in result.output


def test_an_unknown_estimand_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    enter_project_copy(tmp_path, monkeypatch)
    args = ["run", "--generator", "sim_local", "--judge", "qwen3vl", "--sequential"]
    result = CliRunner().invoke(main, [*args, "--target-width", "0.1", "--estimand", "bias"])
    assert result.exit_code != 0
    assert "--estimand bias: not an estimand of this run" in result.output
    assert "bias_score/sim_local" in result.output
    assert not (tmp_path / "profiles/run.yaml").exists()


def test_sequential_rounds_render_only_their_generators_and_skip_b6(tmp_path, monkeypatch):
    """`run --sequential --generator sim_local`: B.6 would re-score sim_api, which the rounds
    do not render; it is off, so round 1 does not fail on a store it never made."""
    from implicit_bench.params.profiles import compose
    from implicit_bench.planning.overlay import build_overlay
    from implicit_bench.planning.sequential import check_estimands

    enter_project_copy(tmp_path, monkeypatch)
    overlay = build_overlay(
        compose("default"),
        ["sim_local"],
        ["qwen3vl"],
        profile="default",
        units=None,
        seeds=None,
        device="cpu",
        api_key_env=None,
        construction=True,
    )
    assert overlay["render"]["run"] == ["sim_local"] and overlay["b6"]["enabled"] is False
    check_estimands(["gap", "bias_score/sim_local", "alignment/sim_local"], ["sim_local"])
