"""A real run's calibration table: its spec, the evaluate stage's corrected rates (hand-worked),
byte-identical outputs without one, and the CLI recipe of docs/correction.md ("Real run")."""

from __future__ import annotations

import shlex

import pytest
from click.testing import CliRunner

from implicit_bench._util.files import read_json
from implicit_bench.analysis.calibration import sample_sheet
from implicit_bench.cli.main import main as cli_main
from implicit_bench.errors import InputError
from implicit_bench.protocol.tables import CALIBRATION
from tests.helpers.analysis_fixtures import blind_judgements
from tests.helpers.calibration_fixtures import (
    LABELLED,
    calibration_inputs,
    calibration_table,
    run_evaluate,
)
from tests.helpers.paths import REPO_ROOT


def test_corrected_rates_match_hand_worked_values(tmp_path):
    calibration_inputs(tmp_path)
    calibration_table([*LABELLED, ("u2", "anti_stereotype", 42, None)]).to_csv(
        tmp_path / "calibration.csv", index=False
    )
    proc = run_evaluate(tmp_path)
    assert proc.returncode == 0, proc.stderr
    bench = read_json(tmp_path / "metrics" / "benchmark.json")
    block = bench["corrected"]
    assert block["judge"] == "A" and block["warning"] is None
    cal = block["calibration"]
    assert (cal["items"], cal["unlabelled"], cal["judge_invalid"], cal["by_source"]) == (
        9,
        1,
        1,
        {"human": 9},
    )
    assert cal["matrix"]["s"]["s"]["value"] == pytest.approx(0.8) and cal["matrix"]["s"]["a"][
        "value"
    ] == pytest.approx(0.2)
    # judged (all 4 units): neutral s 6/11; stereotype s 9/12; anti a 7/12, s 4/12.
    # q = pi M: q_s = 0.8 pi_s, q_a = 0.2 pi_s + pi_a
    rates = block["all"]
    assert rates["default_rate"]["value"] == pytest.approx((6 / 11) / 0.8)  # 15/22
    assert rates["success_stereotype"]["value"] == pytest.approx((9 / 12) / 0.8)  # 0.9375
    assert rates["a_to_s"]["value"] == pytest.approx((4 / 12) / 0.8)  # 5/12
    assert rates["success_anti"]["value"] == pytest.approx(7 / 12 - 0.2 * (4 / 12) / 0.8)  # 1/2
    assert rates["gap"]["value"] == pytest.approx(0.9375 - 0.5)
    lo, hi = rates["gap"]["ci"]
    assert lo <= rates["gap"]["value"] <= hi
    # the judged figures stay beside the corrected ones, unchanged
    assert bench["default_rate"]["value"] == pytest.approx(6 / 11)
    assert "corrected for judge error (9 calibration images)" in proc.stdout


def test_without_calibration_outputs_are_byte_identical(tmp_path):
    outs = []
    for name, calibration in (("off", None), ("absent", "calibration.csv")):
        d = tmp_path / name
        d.mkdir()
        calibration_inputs(d, calibration)
        proc = run_evaluate(d)
        assert proc.returncode == 0, proc.stderr
        outs.append(
            {
                p.relative_to(d).as_posix(): p.read_bytes()
                for p in sorted(d.glob("[mtp]*/**/*"))
                if p.is_file()
            }
        )
    assert outs[0] == outs[1] and "metrics/benchmark.json" in outs[0]
    assert b'"corrected"' not in outs[0]["metrics/benchmark.json"]


def test_unidentified_matrix_gives_warning_and_null(tmp_path):
    calibration_inputs(tmp_path)
    only_s = [row for row in LABELLED if row[3] == "s"]  # no calibration image shows a or neither
    calibration_table(only_s).to_csv(tmp_path / "calibration.csv", index=False)
    proc = run_evaluate(tmp_path)
    assert proc.returncode == 0, proc.stderr
    block = read_json(tmp_path / "metrics" / "benchmark.json")["corrected"]
    assert "not identified" in block["warning"] and "WARNING" in proc.stdout
    assert all(
        block["all"][k]["value"] is None and block["all"][k]["ci"] is None
        for k in ("default_rate", "gap")
    )


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (
            lambda t: t.assign(reference=t["reference"].where(t.index != 2, "maybe")),
            "row 3, field 'reference'",
        ),
        (lambda t: t.assign(source=t["source"].where(t.index != 1, None)), "row 2, field 'source'"),
        (
            lambda t: t.assign(unit_id=t["unit_id"].where(t.index != 4, "u9")),
            "row 5, field 'unit_id'",
        ),
    ],
)
def test_bad_calibration_rows_are_one_line_errors(tmp_path, edit, where):
    calibration_inputs(tmp_path)
    edit(calibration_table(LABELLED)).to_csv(tmp_path / "calibration.csv", index=False)
    proc = run_evaluate(tmp_path)
    assert proc.returncode != 0
    assert "calibration.csv" in proc.stderr and where in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    if "unit_id" not in where:  # the spec alone rejects these
        with pytest.raises(InputError, match=where.replace("'", ".")):
            CALIBRATION.read(tmp_path / "calibration.csv")


def test_sample_is_stratified_and_blind():
    sheet = sample_sheet(blind_judgements(), "gen", "A", 7, seed=1)
    assert sheet["variant"].value_counts().to_dict() == {
        "neutral": 3,
        "stereotype": 2,
        "anti_stereotype": 2,
    }
    assert sheet["reference"].isna().all() and "value" not in sheet.columns
    assert not sheet.duplicated(["unit_id", "variant", "seed"]).any()
    assert sheet.equals(sample_sheet(blind_judgements(), "gen", "A", 7, seed=1))
    # only images judge A answered validly (u4's third neutral image is invalid)
    assert not (
        (sheet["unit_id"] == "u4") & (sheet["variant"] == "neutral") & (sheet["seed"] == 2042)
    ).any()


def _recipe() -> list[list[str]]:
    """The commands of docs/correction.md's "Real run" block."""
    text = (REPO_ROOT / "docs" / "correction.md").read_text(encoding="utf-8")
    block = text.split("## Real run", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def test_recipe_of_docs(tmp_path, monkeypatch):
    """docs/correction.md, "Real run", command by command: sample, label from a reference judge
    (the doc's gpt54 is judge B here), label from people's answers, evaluate."""
    calibration_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    commands = _recipe()
    assert [c[:3] for c in commands] == [
        ["implicit-bench", "calibration", "sample"],
        ["implicit-bench", "calibration", "label"],
        ["implicit-bench", "calibration", "label"],
        ["dvc", "repro", "evaluate"],
    ]
    run = CliRunner()
    res = run.invoke(cli_main, commands[0][1:])
    assert res.exit_code == 0, res.output
    assert (
        run.invoke(cli_main, commands[0][1:]).exit_code != 0
    )  # never overwrites a sheet (its labels)
    sheet = CALIBRATION.read("calibration.csv")
    # 600 asked, all 35 images judge A answered validly drawn (11 neutral, 12 + 12)
    assert len(sheet) == 35 and sheet["reference"].isna().all()
    res = run.invoke(cli_main, [a.replace("gpt54", "B") for a in commands[1][1:]])
    assert res.exit_code == 0, res.output
    assert "35 of 35 images labelled" in res.output
    labelled = CALIBRATION.read("calibration.csv")
    assert set(labelled["source"]) == {"reference_judge"}
    # people's answers for three images replace the reference judge's labels there
    people = labelled.iloc[[0, 5, 20]][["config", "unit_id", "variant", "seed"]].assign(
        reference="neither"
    )
    people.to_csv("people.csv", index=False)
    res = run.invoke(cli_main, commands[2][1:])
    assert res.exit_code == 0, res.output
    final = CALIBRATION.read("calibration.csv")
    assert (final["source"] == "human").sum() == 3 and (
        final.loc[final["source"] == "human", "reference"] == "neither"
    ).all()
    proc = run_evaluate(tmp_path)  # dvc repro evaluate runs this script
    assert proc.returncode == 0, proc.stderr
    block = read_json(tmp_path / "metrics" / "benchmark.json")["corrected"]
    assert block["calibration"]["items"] == 35 and block["calibration"]["by_source"] == {
        "human": 3,
        "reference_judge": 32,
    }
    assert set(block["all"]) >= {
        "default_rate",
        "success_stereotype",
        "success_anti",
        "gap",
        "a_to_s",
    }
