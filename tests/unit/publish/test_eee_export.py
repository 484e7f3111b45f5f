"""``implicit-bench export eee`` and its import by ``implicit-bench report``: records of the
default profile's committed outputs and of a ``--benchmark``-style pilot validate against the
published schema files (vendored), read back into the same leaderboard rows as the run folder,
carry per-image rows whose means are the leaderboard's, and pair two labs' generators on the
(unit, seed) keys they share (hand-worked values)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from implicit_bench.analysis.byo.core import run_analyze
from implicit_bench.cli.main import main as cli_main
from implicit_bench.publish import schema
from implicit_bench.publish.eee import Options, export_eee
from implicit_bench.publish.eee_import import load_source
from implicit_bench.release.benchmark import benchmark_units
from implicit_bench.report.leaderboard import leaderboard_table
from implicit_bench.report.runs import run_of
from tests.helpers.paths import REPO_ROOT
from tests.helpers.release_fixtures import write_release


@pytest.fixture(autouse=True)
def _away_from_the_checkout(tmp_path, monkeypatch):
    """Run from an empty folder: a table a run names relative to where it ran is then looked
    for there, not in this checkout (whose data/ exists after a ``dvc repro``)."""
    monkeypatch.chdir(tmp_path)


def _default_run(root: Path) -> Path:
    """A run folder of the default profile: the committed metrics/ and params.yaml."""
    root.mkdir(parents=True)
    shutil.copytree(REPO_ROOT / "metrics", root / "metrics")
    shutil.copy(REPO_ROOT / "params.yaml", root / "params.yaml")
    return root


def _records(out: Path) -> list[tuple[Path, dict]]:
    return [(p, json.loads(p.read_text())) for p in sorted(out.rglob("*.json"))]


def _rows_html(run) -> list[str]:
    """The leaderboard's row cells without the source cell (the label differs by design)."""
    html = leaderboard_table([run])
    return [re.sub(r"^<td[^>]*>.*?</td>", "", r) for r in re.findall(r"<tr>(.*?)</tr>", html)][1:]


def test_default_profile_records_validate_and_round_trip(tmp_path):
    run_dir = _default_run(tmp_path / "run")
    written, reason = export_eee(run_dir, tmp_path / "eee", Options(organization="my lab"))
    assert [w.config for w in written] == ["sim_api", "sim_local"]
    assert "not found" in reason and all(w.samples is None for w in written)  # no data/ here
    records = _records(tmp_path / "eee")
    assert len(records) == 2
    for path, rec in records:
        assert schema.problems(rec) == [], path
        assert path.parent.relative_to(tmp_path / "eee").parts[:2] == ("data", "implicit-bench")
        # labelled SIMULATED where a reader looks first
        assert rec["source_metadata"]["source_name"].endswith("(SIMULATED run)")
        assert rec["source_metadata"]["additional_details"]["simulated"] == "true"
        assert rec["model_info"]["id"].startswith("simulated/")
        assert rec["schema_version"] == schema.schema_version() == "0.3.0"
    bench = json.loads((run_dir / "metrics/benchmark.json").read_text())
    row = bench["leaderboard"]["rows"][0]
    by_id = {r["evaluation_result_id"]: r for r in records[0][1]["evaluation_results"]}
    dr = by_id["default_rate"]
    assert dr["score_details"]["score"] == row["default_rate"]["value"]
    assert dr["score_details"]["uncertainty"] == {
        "confidence_interval": {
            "lower": row["default_rate"]["ci"][0],
            "upper": row["default_rate"]["ci"][1],
            "confidence_level": 0.95,
            "method": "percentile cluster bootstrap over units",
        },
        "num_bootstrap_samples": 1000,
        "num_samples": 139,
    }
    assert dr["metric_config"]["lower_is_better"] is True
    assert by_id["alignment"]["metric_config"]["lower_is_better"] is False
    assert by_id["hedges_g"]["score_details"]["uncertainty"]["confidence_interval"]["method"] == (
        "studentized cluster bootstrap over units"
    )
    judges = by_id["bias_score"]["metric_config"]["llm_scoring"]
    assert judges["judges"][0]["model_info"]["name"] == row["bias_judge"] == "gemma4"
    assert re.search(r"sha256 [0-9a-f]{64}", judges["input_prompt"])
    # Hedges' g per bias type: the run's own configuration (sim_local) only
    local = {r["evaluation_result_id"] for r in records[1][1]["evaluation_results"]}
    assert "hedges_g/profession" in local and "hedges_g/profession" not in by_id
    # read back: the same leaderboard rows, cell for cell, as the run folder's
    imported = load_source(tmp_path / "eee", "eee").run
    assert imported.simulated and imported.board["benchmark_sha256"] is None
    assert _rows_html(imported) == _rows_html(run_of(run_dir, "run"))


def test_report_merges_records_beside_the_run(tmp_path):
    run_dir = _default_run(tmp_path / "run")
    export_eee(run_dir, tmp_path / "eee", Options())
    site = tmp_path / "site"
    res = CliRunner().invoke(
        cli_main, ["report", str(run_dir), str(tmp_path / "eee"), "--out", str(site)]
    )
    assert res.exit_code == 0, res.output
    html = (site / "index.html").read_text(encoding="utf-8")
    assert html.count('<th data-sort="sim_api">sim_api</th>') == 2
    assert 'eee <span class="sim">SIMULATED</span>' in html


# this lab's generator "new" (judge "myjudge"): (unit, seed, neutral, stereotype, anti rubric,
# neutral blind label); another lab's "rival" on three of the four keys
OURS = [
    ("a1", 42, 3, 5, 1, "s"),
    ("a1", 1042, 1, 4, 0, "a"),
    ("007", 42, 2, 2, 2, "s"),
    ("007", 1042, 4, 5, 0, "neither"),
]
RIVAL = [("a1", 42, 1, 5, 0, "s"), ("a1", 1042, 1, 5, 0, "s"), ("007", 42, 2, 3, 1, "a")]


def _pilot(tmp_path: Path, name: str, config: str, rows, release: Path) -> Path:
    """An analyze output on the release's units (a `--benchmark` pilot): rubric, alignment
    and blind judgements of one generator."""
    units = tmp_path / f"{name}_units.csv"
    benchmark_units(release).units.to_csv(units, index=False)
    out = []
    for u, s, n, st, a, label in rows:
        for variant, v in (("neutral", n), ("stereotype", st), ("anti_stereotype", a)):
            out.append((u, variant, s, "rubric", str(v), "9" * 64))
        out.append((u, "neutral", s, "alignment", "true" if u == "a1" else "false", None))
        out.append((u, "neutral", s, "blind", label, None))
    judgements = tmp_path / f"{name}_judgements.csv"
    pd.DataFrame(
        [
            {
                "unit_id": u,
                "variant": variant,
                "seed": s,
                "config": config,
                "judge": "myjudge",
                "task": task,
                "value": v,
                "valid": True,
                "model": "tiny-vlm",
                "image_sha256": img or f"{u}{variant}{s}".ljust(64, "0"),
            }
            for u, variant, s, task, v, img in out
        ]
    ).to_csv(judgements, index=False)
    params = {"evaluate": {"config": config, "rubric_judges": ["myjudge"], "bootstrap": {"n": 200}}}
    run_analyze(str(units), [str(judgements)], str(tmp_path / name), params)
    return tmp_path / name


def test_benchmark_pilot_records_carry_instances_and_pair_on_shared_keys(tmp_path):
    release = write_release(tmp_path / "IMPLICIT-Bench")
    sha = benchmark_units(release).sha256
    ours = _pilot(tmp_path, "ours", "new", OURS, release)
    rival = _pilot(tmp_path, "rival", "rival", RIVAL, release)
    written, reason = export_eee(ours, tmp_path / "eee_ours", Options())
    export_eee(rival, tmp_path / "eee_rival", Options())
    assert written[0].rows == 4 * 3 + 4 + 4 and "rows from" in reason  # rubric, align, blind
    (path, rec) = _records(tmp_path / "eee_ours")[0]
    assert schema.problems(rec) == []
    assert rec["source_metadata"]["additional_details"]["benchmark_sha256"] == sha
    assert (
        rec["evaluation_results"][0]["source_data"]["additional_details"]["benchmark_sha256"] == sha
    )
    assert rec["source_metadata"]["additional_details"]["simulated"] == "false"
    samples = path.with_name(path.stem + "_samples.jsonl")
    lines = [json.loads(x) for x in samples.read_text().splitlines()]
    assert rec["detailed_evaluation_results"]["total_rows"] == len(lines) == 20
    assert rec["detailed_evaluation_results"]["file_path"].endswith(samples.name)
    for line in lines:
        assert schema.problems(line, schema.INSTANCE) == []
    bias = [x for x in lines if x["evaluation_result_id"] == "bias_score"]
    assert sorted(x["sample_id"] for x in bias) == [
        "007/neutral/1042",
        "007/neutral/42",
        "a1/neutral/1042",
        "a1/neutral/42",
    ]
    assert sum(x["evaluation"]["score"] for x in bias) / 4 == pytest.approx(2.5)  # the row's
    first = next(x for x in bias if x["sample_id"] == "a1/neutral/42")
    assert first["input"]["raw"] == "a nurse at work"
    assert first["metadata"]["image_sha256"] == "9" * 64
    assert first["metadata"]["judge_answer"] == "3"
    lean = [x for x in lines if x["evaluation_result_id"] == "lean_s"]
    assert len(lean) == 8 and not any(x["evaluation"]["is_correct"] for x in lean)
    blind = {x["sample_id"]: x for x in lines if x["evaluation_result_id"] == "default_rate"}
    assert blind["a1/neutral/42"]["evaluation"] == {"score": 1.0, "is_correct": False}
    assert blind["007/neutral/1042"]["evaluation"] == {"score": 0.0, "is_correct": True}
    # round trip of the pilot's rows
    imported = load_source(tmp_path / "eee_ours", "eee")
    assert _rows_html(imported.run) == _rows_html(run_of(ours, "ours"))
    assert imported.run.board["benchmark_sha256"] == sha
    # the merged leaderboard: ours (a run folder) beside the rival's records, paired on the
    # (unit, seed) keys both judged: a1/42, a1/1042, 007/42
    site = tmp_path / "site"
    res = CliRunner().invoke(
        cli_main,
        ["report", str(ours), str(tmp_path / "eee_rival"), "--out", str(site)],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    assert "paired differences on shared keys" in res.output and sha[:12] in res.output
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "new (ours)" in html and "rival (eee_rival)" in html
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.publish.eee_import import paired_rows
    from implicit_bench.publish.instances import instance_rows
    from implicit_bench.publish.run_dir import load_run

    board = paired_rows(
        [
            ("ours", instance_rows(load_run(ours)).rows),
            ("eee_rival", load_source(tmp_path / "eee_rival", "eee_rival").instances),
        ],
        Bootstrap(n=200, seed=42),
    )
    pairs = {p["metric"]: p for p in board["pairs"]}
    # bias: ours (3 + 1 + 2) / 3 = 2, rival (1 + 1 + 2) / 3 = 4/3 on the shared keys
    assert pairs["bias_score"]["difference"]["value"] == pytest.approx(2 - 4 / 3)
    assert pairs["bias_score"]["n_keys"] == 3 and pairs["bias_score"]["n_units"] == 2
    # default rate: ours s, a, s -> 2/3; rival s, s, a -> 2/3
    assert pairs["default_rate"]["difference"]["value"] == pytest.approx(0.0)
    # alignment: both a1 true twice, 007 false: 2/3 each
    assert pairs["alignment"]["difference"]["value"] == pytest.approx(0.0)
    assert all(isinstance(p["resolved"], bool) and "p_holm" in p for p in board["pairs"])


def test_report_refuses_records_of_another_benchmark(tmp_path):
    release = write_release(tmp_path / "IMPLICIT-Bench")
    ours = _pilot(tmp_path, "ours", "new", OURS, release)
    export_eee(_default_run(tmp_path / "default"), tmp_path / "eee_own_units", Options())
    res = CliRunner().invoke(
        cli_main, ["report", str(ours), str(tmp_path / "eee_own_units"), "--out", str(tmp_path)]
    )
    assert res.exit_code != 0
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "different benchmarks" in lines[0] and "eee_own_units" in lines[0]


def test_a_record_that_is_not_ours_or_not_valid_is_one_line(tmp_path):
    run_dir = _default_run(tmp_path / "run")
    export_eee(run_dir, tmp_path / "eee", Options())
    path, rec = _records(tmp_path / "eee")[0]
    rec["eval_library"]["name"] = "lm_eval"
    path.write_text(json.dumps(rec))
    res = CliRunner().invoke(cli_main, ["report", str(run_dir), str(path), "--out", str(tmp_path)])
    assert res.exit_code != 0 and "field 'eval_library.name'" in res.output
    assert "is not an implicit-bench record" in res.output
    del rec["model_info"]["id"]
    path.write_text(json.dumps(rec))
    res = CliRunner().invoke(cli_main, ["report", str(run_dir), str(path), "--out", str(tmp_path)])
    lines = res.output.strip().splitlines()
    assert res.exit_code != 0 and len(lines) == 1
    assert "field 'model_info'" in lines[0] and "'id' is a required property" in lines[0]


def test_vendored_schemas_are_the_published_files_with_their_licence():
    folder = REPO_ROOT / "src/implicit_bench/publish/schemas"
    assert (
        "MIT License" in (folder / "LICENSE").read_text()
        and "EvalEval" in (folder / "LICENSE").read_text()
    )
    import hashlib

    # sha256 of the two files in the every-eval-ever 0.3.0 wheel (schemas/README.md)
    assert hashlib.sha256((folder / schema.AGGREGATE).read_bytes()).hexdigest() == (
        "c9c6195aec8a9dfa0b2aba4924ac1aa8a184c9d8ca97cee778cb531088e39b48"
    )
    assert hashlib.sha256((folder / schema.INSTANCE).read_bytes()).hexdigest() == (
        "b16b7fa7f0aa32763444179d94ffb2336ddb12c3fd2903835fe491666c1ff3e6"
    )
    # the schema itself is what checks: a record without its results is refused
    assert any("evaluation_results" in p for p in schema.problems({"schema_version": "0.3.0"}))


def test_an_altered_instance_file_is_one_line(tmp_path):
    """A samples file whose bytes differ from the record's checksum is refused; with the
    checksum updated, a line whose score is not a number names the line and the field."""
    import hashlib

    release = write_release(tmp_path / "IMPLICIT-Bench")
    ours = _pilot(tmp_path, "ours", "new", OURS, release)
    export_eee(ours, tmp_path / "eee", Options())
    path, rec = _records(tmp_path / "eee")[0]
    samples = path.with_name(path.stem + "_samples.jsonl")
    lines = samples.read_text().splitlines()
    last = json.loads(lines[-1])
    last["evaluation"]["score"] = "high"
    lines[-1] = json.dumps(last)
    text = "".join(line + "\n" for line in lines)
    samples.write_text(text)
    res = CliRunner().invoke(cli_main, ["report", str(ours), str(path), "--out", str(tmp_path)])
    assert res.exit_code != 0 and "sha256 differs from the record's checksum" in res.output
    rec["detailed_evaluation_results"]["checksum"] = hashlib.sha256(text.encode()).hexdigest()
    path.write_text(json.dumps(rec))
    res = CliRunner().invoke(cli_main, ["report", str(ours), str(path), "--out", str(tmp_path)])
    lines_out = res.output.strip().splitlines()
    assert res.exit_code != 0 and len(lines_out) == 1
    assert f"row {len(lines)}, field 'evaluation.score'" in lines_out[0]
