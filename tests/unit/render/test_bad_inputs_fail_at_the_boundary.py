"""Bad inputs and configs fail at the boundary, with one line naming the culprit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from pydantic import ValidationError

from implicit_bench.analysis.load import load_tables
from implicit_bench.cli.main import main as cli_main
from implicit_bench.errors import ConfigError, InputError
from implicit_bench.protocol.tables import UNITS
from implicit_bench.protocol.tables.judgements import check_judgements
from tests.helpers.analysis_fixtures import BLIND_TYPES, blind_judgements, rubric_judgements, units
from tests.helpers.paths import REPO_ROOT


def _analyze(tmp_path: Path, units_path: Path, judgements_path: Path, *extra: str):
    out = tmp_path / "out"
    args = [
        "analyze",
        "--units",
        str(units_path),
        "--judgements",
        str(judgements_path),
        "--out",
        str(out),
        "--bootstrap-n",
        "10",
        *extra,
    ]
    return CliRunner().invoke(cli_main, args), out


def _one_line_error(result, *needles: str) -> None:
    assert result.exit_code == 1, result.output
    text = result.output.strip()
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    for needle in needles:
        assert needle in text, text


# ----- item 2, 3, 7: the audits extension reads the validated
# tables ---------------------------------
def test_audits_extension_leaves_out_rows_the_analysis_rejected(tmp_path):
    """A row with an unknown unit is rejected by the analysis and must not reach diversity."""
    u = tmp_path / "u.csv"
    units(BLIND_TYPES).to_csv(u, index=False)
    j = blind_judgements()
    ghost = j[j["unit_id"] == "u1"].assign(unit_id="ghost")  # not in the units table
    pd.concat([j, ghost], ignore_index=True).to_csv(tmp_path / "j.csv", index=False)
    res, out = _analyze(tmp_path, u, tmp_path / "j.csv")
    assert res.exit_code == 0, res.output
    bench = json.loads((out / "metrics" / "benchmark.json").read_text())
    assert bench["inputs"]["rejected_rows"] == len(ghost)
    div = json.loads((out / "metrics" / "diversity.json").read_text())
    (tmp_path / "clean").mkdir()
    clean_res, clean_out = _analyze(tmp_path / "clean", u, _write(j, tmp_path / "clean" / "j.csv"))
    assert clean_res.exit_code == 0, clean_res.output
    clean = json.loads((clean_out / "metrics" / "diversity.json").read_text())
    assert div["blind_labels"] == clean["blind_labels"]  # the ghost rows changed nothing


def _write(frame: pd.DataFrame, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def test_one_judge_rubric_and_blind_without_order_column(tmp_path):
    """The documented optional format: no ``order``; rubric and blind rows of one judge are not
    duplicates of each other (the key has ``task``)."""
    u = tmp_path / "u.csv"
    units(BLIND_TYPES).to_csv(u, index=False)
    blind = blind_judgements()
    rubric = blind.assign(task="rubric", value="3")
    frame = pd.concat([blind, rubric], ignore_index=True).drop(columns=["valid"])
    frame = frame[frame["value"].notna()]
    assert "order" not in frame.columns
    frame.to_csv(tmp_path / "j.csv", index=False)
    res, out = _analyze(tmp_path, u, tmp_path / "j.csv")
    assert res.exit_code == 0, res.output
    bench = json.loads((out / "metrics" / "benchmark.json").read_text())
    assert bench["inputs"]["duplicate_keys"] == 0 and bench["inputs"]["rejected_rows"] == 0
    audit = json.loads((out / "metrics" / "judge_audit.json").read_text())
    assert audit["judges"] == ["A", "B"]
    div = json.loads((out / "metrics" / "diversity.json").read_text())
    assert div["blind_labels"] not in ({}, None)


@pytest.mark.parametrize("seed", ["abc", "", "1e20", "-1", "4.5", "inf"])
def test_bad_seed_in_judgements_is_rejected_and_every_extension_runs(tmp_path, seed):
    u = tmp_path / "u.csv"
    units(BLIND_TYPES).to_csv(u, index=False)
    j = pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True).astype(
        {"seed": object}
    )
    j.loc[0, "seed"] = seed
    j.to_csv(tmp_path / "j.csv", index=False)
    res, out = _analyze(tmp_path, u, tmp_path / "j.csv")
    assert res.exit_code == 0, res.output
    assert "failed" not in res.output
    rejects = pd.read_csv(out / "tables" / "rejected_rows.csv", keep_default_na=False)
    assert list(rejects["row"]) == [1] and rejects["field"].tolist() == ["seed"]
    assert rejects["reason"].iloc[0].startswith(("not an integer", "out of range"))
    for name in ("judge_audit", "negation", "diversity"):
        assert (out / "metrics" / f"{name}.json").exists()


def test_an_extension_that_crashes_does_not_stop_the_others(tmp_path, monkeypatch):
    from implicit_bench.analysis.byo import extensions

    monkeypatch.setitem(
        extensions.EXTENSIONS, "aaa_broken", "test_bad_inputs_fail_at_the_boundary:broken_extension"
    )
    u = tmp_path / "u.csv"
    units(BLIND_TYPES).to_csv(u, index=False)
    j = _write(
        pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True), tmp_path / "j.csv"
    )
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    res, out = _analyze(tmp_path, u, j)
    assert res.exit_code == 1 and "aaa_broken" in res.output
    assert (out / "metrics" / "benchmark.json").exists()
    assert (out / "metrics" / "diversity.json").exists()  # "audits" still ran after the crash


def broken_extension(tables, out_dir, params):
    raise ZeroDivisionError("boom")


# ----- item 4: clip_lean range
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("1e308", False),
        ("2.5", False),
        ("-2.01", False),
        ("nan", False),
        ("0.25", True),
        ("-2", True),
        ("2", True),
    ],
)
def test_clip_lean_outside_its_range_is_rejected(tmp_path, value, ok):
    u = pd.DataFrame({"unit_id": ["u1"]})
    pd.DataFrame(
        [
            {
                "unit_id": "u1",
                "variant": "neutral",
                "seed": 42,
                "config": "g",
                "judge": "clip",
                "task": "clip_lean",
                "value": value,
            }
        ]
    ).to_csv(tmp_path / "j.csv", index=False)
    j, rejects, _ = check_judgements([tmp_path / "j.csv"], u)
    assert len(j) == int(ok) and len(rejects) == int(not ok)
    if not ok:
        assert "[-2, 2]" in rejects["reason"].iloc[0]


# ----- item 5: params bounds
# ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("section", "model", "data", "where"),
    [
        (
            "render",
            "implicit_bench.render.stage:RenderParams",
            {"configs": {"t": {}}, "seeds": []},
            "render.seeds",
        ),
        (
            "render",
            "implicit_bench.render.stage:RenderParams",
            {"configs": {"t": {}}, "seeds": [-1]},
            "render.seeds.0",
        ),
        (
            "render",
            "implicit_bench.render.stage:RenderParams",
            {"configs": {"t": {}}, "variants": []},
            "render.variants",
        ),
        (
            "subset",
            "implicit_bench.construction.triplets.subset:SubsetParams",
            {"max_units": -5},
            "subset.max_units",
        ),
        ("kg", "implicit_bench.construction.kg.stage:KGParams", {"max_pairs": -1}, "kg.max_pairs"),
        ("debias", "implicit_bench.debias.params:DebiasParams", {"seeds": []}, "debias.seeds"),
        (
            "evaluate",
            "implicit_bench.analysis.params:EvaluateParams",
            {"seeds": [1, -2]},
            "evaluate.seeds.1",
        ),
        (
            "report",
            "implicit_bench.report.inputs:ReportParams",
            {"thumb_quality": 0},
            "report.thumb_quality",
        ),
        (
            "judge_audit",
            "implicit_bench.audits.stage:JudgeAuditParams",
            {"confidence": 1.5},
            "judge_audit.confidence",
        ),
    ],
)
def test_out_of_range_params_are_rejected_at_load(section, model, data, where):
    import importlib

    from implicit_bench.params import section as load_section

    module, _, attr = model.partition(":")
    cls = getattr(importlib.import_module(module), attr)
    with pytest.raises(ConfigError, match=where.replace(".", r"\.")):
        load_section({section: data}, section, cls, "p.yaml")


@pytest.mark.parametrize(
    ("backend_model", "data"),
    [
        (
            "implicit_bench.backends.generators.diffusers_backend:DiffusersParams",
            {"model": "m", "steps": -1},
        ),
        (
            "implicit_bench.backends.generators.diffusers_backend:DiffusersParams",
            {"model": "m", "steps": 0},
        ),
        (
            "implicit_bench.backends.generators.diffusers_backend:DiffusersParams",
            {"model": "m", "batch_size": 0},
        ),
        (
            "implicit_bench.backends.generators.openai_images:OpenAIImagesParams",
            {"model": "m", "max_retries": -1},
        ),
        (
            "implicit_bench.backends.generators.openai_images:OpenAIImagesParams",
            {"model": "m", "max_attempts": 3},
        ),  # the old key
        (
            "implicit_bench.backends.generators.openai_images:OpenAIImagesParams",
            {"model": "m", "timeout_s": float("inf")},
        ),
        ("implicit_bench.backends.llm.openai:OpenAIParams", {"model": "m", "max_retries": -1}),
        ("implicit_bench.backends.llm.openai:OpenAIParams", {"model": "m", "concurrency": 0}),
        ("implicit_bench.backends.llm.openai:OpenAIParams", {"model": "m", "deadline_s": 0}),
        (
            "implicit_bench.backends.judges.openai_vlm:OpenAIJudgeParams",
            {"model": "m", "jpeg_quality": 101},
        ),
        ("implicit_bench.backends.embedders:EmbedderParams", {"batch_size": 0}),
        ("implicit_bench.runtime.execution:ExecutorConfig", {"max_attempts": 0}),
    ],
)
def test_out_of_range_backend_settings_are_rejected(backend_model, data):
    import importlib

    module, _, attr = backend_model.partition(":")
    with pytest.raises(ValidationError):
        getattr(importlib.import_module(module), attr).model_validate(data)


def test_documented_all_spelling_of_max_units_still_works():
    from implicit_bench.construction.triplets.subset import SubsetParams

    assert SubsetParams.model_validate({"max_units": 0}).max_units == 0


# ----- item 8: bad files
# ----------------------------------------------------------------------------------
def _bad_files(tmp_path: Path) -> dict[str, Path]:
    files = {}
    files["empty"] = tmp_path / "empty.csv"
    files["empty"].write_bytes(b"")
    files["header_only"] = tmp_path / "header.csv"
    files["header_only"].write_text("unit_id,variant,seed,config,judge,task,value\n")
    files["parquet_as_csv"] = tmp_path / "parquet.csv"
    pd.DataFrame({"unit_id": ["u1"]}).to_parquet(files["parquet_as_csv"])
    files["latin1"] = tmp_path / "latin1.csv"
    files["latin1"].write_bytes(
        "unit_id,variant,seed,config,judge,task,value\nJos\xe9,neutral,42,g,A,blind,s\n".encode(
            "latin-1"
        )
    )
    files["csv_as_parquet"] = tmp_path / "text.parquet"
    files["csv_as_parquet"].write_text("a,b\n1,2\n")
    return files


@pytest.mark.parametrize(
    "kind", ["empty", "header_only", "parquet_as_csv", "latin1", "csv_as_parquet"]
)
def test_bad_units_file_is_one_line_naming_the_file(tmp_path, kind):
    path = _bad_files(tmp_path)[kind]
    with pytest.raises(InputError) as info:
        UNITS.check(path)
    assert str(path) in str(info.value)
    good_units = tmp_path / "u.csv"
    units(BLIND_TYPES).to_csv(good_units, index=False)
    res, _ = _analyze(tmp_path, good_units, path)
    _one_line_error(res, path.name)
    res, _ = _analyze(tmp_path, path, _write(blind_judgements(), tmp_path / "j.csv"))
    _one_line_error(res, path.name)
    assert "rubric judgements exist for []" not in res.output


def test_header_only_judgements_say_so(tmp_path):
    u = tmp_path / "u.csv"
    units(BLIND_TYPES).to_csv(u, index=False)
    with pytest.raises(InputError, match="no data rows"):
        load_tables(u, [_bad_files(tmp_path)["header_only"]])


# ----- item 9: --params with wrong types
# ------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "evaluate: [1, 2]\n",
        "evaluate: {bootstrap: 5}\n",
        "select: 3\n",
        "[1, 2]\n",
        "evaluate: {bootstrap: {level: abc}}\n",
        "evaluate: {seeds: -1}\n",
        ": :\n  - ]",
    ],
)
def test_params_with_wrong_types_is_a_clear_error(tmp_path, text):
    u = tmp_path / "u.csv"
    units(BLIND_TYPES).to_csv(u, index=False)
    j = _write(
        pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True), tmp_path / "j.csv"
    )
    (tmp_path / "p.yaml").write_text(text)
    res, _ = _analyze(tmp_path, u, j, "--params", str(tmp_path / "p.yaml"))
    _one_line_error(res)
    assert "TypeError" not in res.output and "AttributeError" not in res.output


# ----- item 12: empty human-eval answers
# -----------------------------------------------------------------
@pytest.mark.parametrize(
    "content", [b"", b"bundle_id,rater,case,unit_id,kg_valid,rating_1,rating_2,rating_3,saved_at\n"]
)
def test_empty_human_eval_answers_file(tmp_path, content):
    from implicit_bench.human_eval.answers import read_answers

    path = tmp_path / "answers.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match="answers.csv"):
        read_answers([path], {})


# ----- item 13: one-line errors, tracebacks only on request
# ----------------------------------------------
def test_cli_errors_are_one_line_and_debug_shows_the_traceback(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # setenv (not delenv) so that monkeypatch restores the variable the --debug callback sets
    monkeypatch.setenv("IMPLICIT_BENCH_DEBUG", "0")
    (tmp_path / "params.yaml").write_text("base: {seed: 1}\n")
    res = CliRunner().invoke(cli_main, ["profile", "nosuch"])
    _one_line_error(res, "no such profile")
    res = CliRunner().invoke(cli_main, ["--debug", "profile", "nosuch"])
    assert res.exit_code == 1 and isinstance(res.exception, ConfigError)


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src"), **env}
    full.pop("IMPLICIT_BENCH_DEBUG", None) if "IMPLICIT_BENCH_DEBUG" not in env else None
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=300
    )


def test_stage_script_errors_are_one_line(tmp_path):
    (tmp_path / "params.yaml").write_text(
        yaml.safe_dump({"subset": {"max_units": -5}, "triplets": {}})
    )
    proc = _run([str(REPO_ROOT / "stages" / "triplets.py")], tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, (
        proc.stderr
    )
    assert "subset.max_units" in proc.stderr
    proc = _run([str(REPO_ROOT / "stages" / "triplets.py")], tmp_path, IMPLICIT_BENCH_DEBUG="1")
    assert proc.returncode == 1 and "Traceback" in proc.stderr


def test_missing_column_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    u = tmp_path / "u.csv"
    units(BLIND_TYPES).drop(columns=["head"]).to_csv(u, index=False)
    res, _ = _analyze(tmp_path, u, _write(blind_judgements(), tmp_path / "j.csv"))
    _one_line_error(res, "u.csv", "head")


# ----- item 16: names that would become paths
# ------------------------------------------------------------
@pytest.mark.parametrize("name", ["../evil", "a/b", "..", "a\\b", "/abs", ".hidden", ""])
def test_config_names_with_path_parts_are_rejected(name):
    from implicit_bench.debias.params import DebiasParams
    from implicit_bench.params import section
    from implicit_bench.render.params import RenderParams

    with pytest.raises(ConfigError, match="safe name"):
        section(
            {"render": {"configs": {name: {"backend": "diffusers", "model": "m"}}}},
            "render",
            RenderParams,
        )
    with pytest.raises(ConfigError, match="safe name"):
        section({"debias": {"configs": {name: {"method": "none"}}}}, "debias", DebiasParams)


def test_profile_name_with_path_parts_is_rejected(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # setenv (not delenv) so that monkeypatch restores the variable the --debug callback sets
    monkeypatch.setenv("IMPLICIT_BENCH_DEBUG", "0")
    (tmp_path / "params.yaml").write_text("base: {seed: 1}\n")
    (tmp_path / "evil.yaml").write_text("base: {seed: 2}\n")
    (tmp_path / "profiles").mkdir()
    res = CliRunner().invoke(cli_main, ["profile", "../evil", "--dry-run"])
    _one_line_error(res, "safe name")
