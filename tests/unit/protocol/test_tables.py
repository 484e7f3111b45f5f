"""The table layer (implicit_bench.protocol.tables): every catalogue table round-trips through its
spec,
every validation error names file, row and field, and each path is written once."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest
import yaml

from implicit_bench.errors import InputError
from implicit_bench.protocol import tables
from implicit_bench.protocol.tables import TABLES, UNITS, Column, TableSpec
from implicit_bench.protocol.tables.judgements import read_judgements, write_judgements
from tests.helpers.paths import REPO_ROOT

JUDGEMENT_TABLES = ("judgements", "clip judgements", "bench judgements", "debias judgements")


def _value(spec: TableSpec, col: Column, i: int):
    if spec.name.endswith("judgements") and col.name in ("task", "value"):
        return {"task": "rubric", "value": "3"}[col.name]  # a rubric score
    if spec.name.endswith("judgements") and col.name == "valid":
        return True
    if spec.name == "calibration" and col.name == "raters":  # JSON rater -> label
        return f'{{"rater-{i}": "s"}}'
    if col.allowed is not None:
        return col.allowed[0]
    return {
        "text": f"{col.name}-{i}",
        "int": 42 + i,
        "float": 0.25 * i,
        "bool": bool(i % 2),
        "any": f"x{i}",
    }[col.kind]


def _frame(spec: TableSpec, rows: int = 3) -> pd.DataFrame:
    """A valid frame with every column of the spec (distinct keys)."""
    return pd.DataFrame({c.name: [_value(spec, c, i) for i in range(rows)] for c in spec.columns})


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_every_table_round_trips(tmp_path, name, suffix):
    spec = TABLES[name]
    if suffix not in spec.suffixes:
        pytest.skip(f"{name} is not read from {suffix}")
    frame = _frame(spec)
    path = tmp_path / f"t{suffix}"
    if name in JUDGEMENT_TABLES:  # values checked against the task registry
        write_judgements(frame, path)
        back = read_judgements(path)
    else:
        spec.write(frame, path)
        back = spec.read(path)
    assert list(back.columns[: len(frame.columns)]) == list(frame.columns)
    for col in spec.columns:
        got, want = back[col.name].tolist(), frame[col.name].tolist()
        if (
            col.kind == "any" and suffix == ".csv" and col.name != "valid"
        ):  # CSV cells come back as text
            want = [str(v) for v in want]
        assert got == want, (name, col.name)
    checked, rejects = spec.check(path)
    assert len(checked) == len(frame) and rejects.empty and checked.attrs["rows_in"] == len(frame)


@pytest.mark.parametrize("name", [n for n in sorted(TABLES) if TABLES[n].key])
def test_duplicate_keys_name_file_row_and_key(tmp_path, name):
    spec = TABLES[name]
    frame = _frame(spec)
    frame = pd.concat([frame, frame.iloc[[1]]], ignore_index=True)
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    with pytest.raises(InputError) as exc:
        spec.read(path)
    assert (
        exc.value.path == str(path) and exc.value.row == 2 and exc.value.field == ",".join(spec.key)
    )
    assert "duplicate" in exc.value.reason and "(2 rows)" in exc.value.reason
    _, rejects = spec.check(path)  # reject mode: both rows of the key listed
    assert sorted(rejects["row"]) == [2, 4] and set(rejects["file"]) == {str(path)}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_missing_required_column_is_named(tmp_path, name):
    spec = TABLES[name]
    required = spec.required
    if not required:
        pytest.skip("no required column")
    frame = _frame(spec).drop(columns=[required[-1]])
    path = tmp_path / f"t{spec.suffixes[-1]}"
    frame.to_csv(path, index=False) if path.suffix == ".csv" else frame.to_parquet(path)
    with pytest.raises(InputError) as exc:
        spec.read(path)
    assert (
        exc.value.field == required[-1]
        and exc.value.row is None
        and "missing column" in exc.value.reason
    )
    with pytest.raises(InputError, match="missing column"):
        spec.write(frame, tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def _units_csv(path: Path, rows: list[str]) -> Path:
    header = ",".join(c.name for c in UNITS.columns if c.required)
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows))
    return path


GOOD = "u1,stereoset,gender,nurse,is,caring,cold,a nurse,a caring nurse,a cold nurse"


def test_hand_made_bad_unit_rows(tmp_path):
    rows = [
        GOOD,
        "u2,stereoset,astrology,nurse,is,caring,cold,a nurse,a caring nurse,a cold nurse",  # row 2
        # row 3: empty head
        "u3,stereoset,gender,,is,caring,cold,a nurse,a caring nurse,a cold nurse",
        # row 4: ok, relation null
        "u4,crows_pairs,Race_color,man,,poor,rich,a man,a poor man,a rich man",
        GOOD,  # row 5: u1 again
    ]
    path = _units_csv(tmp_path / "u.csv", rows)
    with pytest.raises(InputError) as exc:
        UNITS.read(path)  # the first bad row in file order: u1 is duplicated
    assert str(exc.value) == f"{path}, row 1, field 'unit_id': duplicate unit_id (2 rows)"
    with pytest.raises(InputError) as exc:
        UNITS.read(_units_csv(tmp_path / "v.csv", rows[1:4]))
    assert str(exc.value).startswith(
        f"{tmp_path / 'v.csv'}, row 1, field 'bias_type': unknown bias type 'astrology'"
    )
    units, rejects = UNITS.check(path)
    assert units["unit_id"].tolist() == ["u4"] and units["bias_type"].tolist() == ["race-color"]
    assert units["relation"].isna().all()
    got = {(r.row, r.field): r.reason for r in rejects.itertuples()}
    assert got[(3, "head")] == "empty"
    assert got[(1, "unit_id")] == got[(5, "unit_id")] == "duplicate unit_id (2 rows)"


def test_a_reader_asks_for_its_own_columns(tmp_path):
    frame = pd.DataFrame({"unit_id": [7, 8], "prompt_neutral": ["a nurse", " "]})
    frame.to_parquet(tmp_path / "u.parquet")
    with pytest.raises(InputError, match=r"row 2, field 'prompt_neutral': empty"):
        UNITS.read(tmp_path / "u.parquet", require=("unit_id", "prompt_neutral"))
    frame.loc[1, "prompt_neutral"] = "a cold nurse"
    frame.to_parquet(tmp_path / "u.parquet")
    units = UNITS.read(tmp_path / "u.parquet", require=("unit_id", "prompt_neutral"))
    assert units["unit_id"].tolist() == ["7", "8"]  # ids read as strings
    with pytest.raises(InputError, match="field 'source': missing column"):
        UNITS.read(tmp_path / "u.parquet")  # the full UNITS table needs every required column


def test_read_keeps_the_file_order_and_check_sorts(tmp_path):
    frame = _frame(UNITS).iloc[::-1]
    UNITS.write(frame, tmp_path / "u.parquet")
    assert UNITS.read(tmp_path / "u.parquet")["unit_id"].tolist() == [
        "unit_id-2",
        "unit_id-1",
        "unit_id-0",
    ]
    assert UNITS.check(tmp_path / "u.parquet").frame["unit_id"].tolist() == [
        "unit_id-0",
        "unit_id-1",
        "unit_id-2",
    ]


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        ("u1,neutral,x,gen,J,rubric,3,true,", "seed", "not an integer: 'x'"),
        ("u1,neutral,-1,gen,J,rubric,3,true,", "seed", "out of range"),
        ("u1,sideways,42,gen,J,rubric,3,true,", "variant", "unknown variant 'sideways'"),
        ("u1,neutral,42,gen,J,vibes,3,true,", "task", "unknown task 'vibes'"),
        ("u1,neutral,42,gen,J,blind,s,true,ab", "order", "order must be sa, as"),
        ("u1,neutral,42,gen,J,rubric,9,true,", "value", "rubric score must be a number in 0..5"),
        ("u1,neutral,42,gen,J,blind,A,true,sa", "value", "blind value is an option letter"),
        (
            "u1,neutral,42,gen,J,alignment,maybe,true,",
            "value",
            "alignment value must be true or false",
        ),
        ("u1,neutral,42,gen,J,rubric,3,false,", "value", "valid is false but a value is set"),
        ("u1,neutral,42,gen,J,rubric,3,perhaps,", "valid", "expected true or false: 'perhaps'"),
        (
            "u1,stereotype,42,gen,J,clip_lean,0.1,true,",
            "variant",
            "clip_lean rows describe the neutral image",
        ),
        (",neutral,42,gen,J,rubric,3,true,", "unit_id", "empty"),
    ],
)
def test_hand_made_bad_judgement_rows(tmp_path, row, field, reason):
    path = tmp_path / "j.csv"
    path.write_text(
        "unit_id,variant,seed,config,judge,task,value,valid,order\n"
        "u1,neutral,42,gen,J,rubric,3,true,\n" + row + "\n"
    )
    with pytest.raises(InputError) as exc:
        read_judgements(path)
    assert exc.value.path == str(path) and exc.value.row == 2 and exc.value.field == field
    assert reason in exc.value.reason
    assert str(exc.value).count("\n") == 0  # one line


def test_judgements_read_keeps_every_option_order(tmp_path):
    path = tmp_path / "j.csv"
    path.write_text(
        "unit_id,variant,seed,config,judge,task,value,valid,order\n"
        "u1,neutral,42,gen,J,blind,s,true,sa\n"
        "u1,neutral,42,gen,J,blind,a,true,as\n"
        "u1,subject,42,gen,J,blind,neither,true,sa\n"
        "u1,neutral,42,gen,J,rubric,,false,\n"
    )
    frame = read_judgements(path)
    assert frame["order"].tolist() == ["sa", "as", "sa", None]
    assert frame["seed"].dtype == "int64" and frame["valid"].tolist() == [True, True, True, False]


def test_write_names_the_output_file_and_row(tmp_path):
    frame = _frame(UNITS)
    frame.loc[1, "bias_type"] = "astrology"
    out = tmp_path / "units.parquet"
    with pytest.raises(InputError) as exc:
        UNITS.write(frame, out)
    assert exc.value.path == str(out) and exc.value.row == 2 and exc.value.field == "bias_type"
    assert not out.exists()


def test_a_stage_may_write_and_read_an_empty_table(tmp_path):
    """No rewrites is a table with a header and no rows: read back empty; analyze needs rows."""
    from implicit_bench.protocol.tables import REWRITES

    empty = _frame(REWRITES).iloc[0:0]
    REWRITES.write(empty, tmp_path / "r.parquet")
    assert len(REWRITES.read(tmp_path / "r.parquet")) == 0
    UNITS.write(_frame(UNITS).iloc[0:0], tmp_path / "u.parquet")
    assert len(UNITS.read(tmp_path / "u.parquet")) == 0
    with pytest.raises(InputError, match="a header but no data rows"):
        UNITS.check(tmp_path / "u.parquet")


def test_format_errors_are_one_line(tmp_path):
    (tmp_path / "u.json").write_text("{}")
    with pytest.raises(
        InputError, match=r"units: expected a \.csv or \.parquet file, got '\.json'"
    ):
        UNITS.read(tmp_path / "u.json")
    (tmp_path / "u.csv").write_text(",".join(UNITS.required) + "\n")
    with pytest.raises(InputError, match="a header but no data rows"):
        UNITS.check(tmp_path / "u.csv")


# ----- the catalogue
# --------------------------------------------------------------------------------
def _catalogue_paths() -> dict[str, str]:
    return {n: getattr(tables, n) for n in tables.__all__ if n.endswith(("_PATH", "_DIR", "_GLOB"))}


def test_catalogue_paths_are_dvc_outputs():
    """Every catalogue path is (under) an output that dvc.yaml declares."""
    stages = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())["stages"]
    outs = set()
    for stage in stages.values():
        for out in stage.get("do", stage).get("outs", []):
            outs.add(next(iter(out)) if isinstance(out, dict) else out)
    for name, path in _catalogue_paths().items():
        if (
            path in tables.USER_INPUTS
        ):  # provided by the user (e.g. the calibration table), never a stage output
            continue
        stem = path.split("*")[0].split("{")[0].rstrip("/")
        assert any(
            o == stem or o.startswith(stem + "/") or stem.startswith(o + "/") for o in outs
        ), (name, path)


def test_each_path_is_written_once():
    """No library module or stage script spells a catalogue path: they import it from tables."""
    paths = set(_catalogue_paths().values())
    catalogue = REPO_ROOT / "src/implicit_bench/protocol/tables/__init__.py"
    found = []
    for file in [*(REPO_ROOT / "src").rglob("*.py"), *(REPO_ROOT / "stages").glob("*.py")]:
        if file == catalogue:
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in paths:
                found.append(f"{file.relative_to(REPO_ROOT)}:{node.lineno}: {node.value}")
    assert not found, "catalogue paths spelled outside implicit_bench/tables:\n" + "\n".join(found)


def test_read_if_present_is_none_for_a_missing_file_and_read_otherwise(tmp_path) -> None:
    from implicit_bench.protocol.tables import RETRIEVAL

    path = tmp_path / "retrieval.parquet"
    assert RETRIEVAL.read_if_present(path) is None
    RETRIEVAL.write(pd.DataFrame({"unit_id": ["007", "8"], "own_hit": [True, False]}), path)
    frame = RETRIEVAL.read_if_present(path)
    assert frame is not None and frame["unit_id"].tolist() == ["007", "8"]


def test_one_boolean_vocabulary_for_tables_stored_answers_and_debias_scoring():
    """true/false, yes/no, 1/0 (any case) everywhere, from booleans.py; nothing else ("t")."""
    import pandas as pd

    from implicit_bench._util.booleans import parse_bool as parse_value
    from implicit_bench.debias.scoring import _parse_aligned
    from implicit_bench.errors import InputError
    from implicit_bench.protocol.tables.spec import parse_bool as parse_column

    words = ["true", "YES", "1", "false", "No", "0", "t", "f"]
    expected = [True, True, True, False, False, False, None, None]
    assert [parse_value(w) for w in words] == expected
    parsed, ok = parse_column(pd.Series(words))
    assert [bool(p) if k else None for p, k in zip(parsed, ok, strict=True)] == expected
    for word, want in zip(words, expected, strict=True):
        if want is None:
            with pytest.raises(InputError):
                _parse_aligned(word, "j.parquet", 1)
        else:
            assert _parse_aligned(word, "j.parquet", 1) == float(want)


def test_each_tables_columns_are_spelled_once_in_its_spec():
    """Column lists derive from the specs: no module under src/ spells a spec's
    columns (all, required or optional; three or more) as its own tuple or list literal."""
    import ast

    from implicit_bench.protocol import tables

    lists = set()
    for spec in tables.TABLES.values():
        for names in (spec.names, spec.required, spec.optional):
            if len(names) >= 3:
                lists.add(tuple(names))
    copies = []
    for path in sorted((REPO_ROOT / "src" / "implicit_bench").rglob("*.py")):
        if "protocol/tables" in path.as_posix():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            literal = isinstance(node, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
            )
            if literal and tuple(e.value for e in node.elts) in lists:
                copies.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert copies == []
    assert tables.UNITS.required == tables.UNIT_COLUMNS
    assert tables.JUDGEMENTS.names == tables.JUDGEMENT_COLUMNS + tables.JUDGEMENT_EXTRA_COLUMNS
