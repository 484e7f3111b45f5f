"""Fuzzing the units / judgements loaders and the answer parsers (hypothesis).

Three properties: no exception escapes (a whole-file problem is an ``InputError`` naming the
file); every row is analysed or rejected with a reason; rows in = analysed + rejected +
duplicates (+ blind rows of a secondary option order, kept apart for the order audit).
Also item 15: CSV cells a spreadsheet would run are escaped, and read back unchanged.
"""

from __future__ import annotations

import math
import string
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from implicit_bench._util.files import escape_formula, read_table, write_table
from implicit_bench._util.jsonparse import parse_json_answer
from implicit_bench.analysis.load import load_tables
from implicit_bench.errors import InputError
from implicit_bench.protocol.judge_tasks import load_task, task_names
from implicit_bench.protocol.schema import BIAS_TYPES

FUZZ = settings(
    max_examples=60,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
IDS = ["u1", "u2", "u3", "=u4", "-u5", "u 6", "", "ghost"]
text = st.text(alphabet=string.printable + "éß€\u200b", max_size=12)
cell = st.one_of(
    st.none(),
    text,
    st.sampled_from(["", " ", "nan", "None", "NULL", "1e20", "-1", "inf", "=1+1", "@x"]),
)


def _units_row():
    return st.fixed_dictionaries(
        {
            "unit_id": st.one_of(st.sampled_from(IDS), cell),
            "source": st.one_of(st.just("crows_pairs"), cell),
            "bias_type": st.one_of(
                st.sampled_from([*BIAS_TYPES, "Race_color", "gender ", "nonsense"]), cell
            ),
            "head": st.one_of(st.just("head"), cell),
            "relation": cell,
            "stereotype": st.one_of(st.just("s"), cell),
            "anti_stereotype": st.one_of(st.just("a"), cell),
            "prompt_neutral": st.one_of(st.just("a person"), cell),
            "prompt_stereotype": st.one_of(st.just("an s person"), cell),
            "prompt_anti_stereotype": st.one_of(st.just("an a person"), cell),
        }
    )


def _judgement_row():
    return st.fixed_dictionaries(
        {
            "unit_id": st.one_of(st.sampled_from(IDS), cell),
            "variant": st.one_of(
                st.sampled_from(["neutral", "stereotype", "anti_stereotype", "negated_0_1", "x"]),
                cell,
            ),
            "seed": st.one_of(
                st.sampled_from(
                    ["42", "1042", "42.0", "4.5", "-3", "1e20", "abc", "", "nan", "inf"]
                ),
                cell,
            ),
            "config": st.one_of(st.sampled_from(["gen", "other"]), cell),
            "judge": st.one_of(st.sampled_from(["A", "B"]), cell),
            "task": st.one_of(
                st.sampled_from(["rubric", "blind", "alignment", "clip_lean", "bogus"]), cell
            ),
            "value": st.one_of(
                st.sampled_from(
                    [
                        "0",
                        "3",
                        "5",
                        "6",
                        "2.5",
                        "s",
                        "a",
                        "neither",
                        "A",
                        "true",
                        "false",
                        "0.25",
                        "-0.5",
                        "1e308",
                        "nan",
                        "-inf",
                    ]
                ),
                cell,
            ),
            "valid": st.one_of(
                st.sampled_from(["true", "false", "1", "0", "", "maybe"]), st.none()
            ),
            "order": st.one_of(st.sampled_from(["sa", "as", "", "ba"]), st.none()),
        }
    )


def _write(frame: pd.DataFrame, path: Path, fmt: str) -> Path:
    path = path.with_suffix(f".{fmt}")
    if fmt == "csv":
        frame.to_csv(
            path, index=False, lineterminator="\r\n"
        )  # CRLF: cells holding CR or LF are quoted
    else:
        frame.astype(object).where(frame.notna(), None).astype("string").to_parquet(path)
    return path


@FUZZ
@given(
    units=st.lists(_units_row(), min_size=1, max_size=12),
    rows=st.lists(_judgement_row(), min_size=1, max_size=40),
    fmt=st.sampled_from(["csv", "parquet"]),
    drop_order=st.booleans(),
)
def test_loaders_account_for_every_row(tmp_path_factory, units, rows, fmt, drop_order):
    tmp = tmp_path_factory.mktemp("fuzz")
    u = _write(pd.DataFrame(units), tmp / "units", fmt)
    judgements = pd.DataFrame(rows)
    if drop_order:
        judgements = judgements.drop(columns=["order"])
    j = _write(judgements, tmp / "judgements", fmt)
    try:
        tables = load_tables(u, [j])
    except InputError as exc:  # a whole-file problem: named, never a bare exception
        assert str(u) in str(exc) or str(j) in str(exc)
        return
    accounting = tables.accounting()
    assert accounting["units"]["rows_in"] == len(units)
    assert accounting["judgements"]["rows_in"] == len(rows)
    for name, entry in accounting.items():
        assert entry["conserved"] == 1, (name, entry)
        assert (
            entry["rows_in"]
            == entry["analysed"]
            + entry["rejected"]
            + entry["duplicates"]
            + entry["secondary_order"]
            + entry["other_variants"]
        )
    rejects = tables.rejects
    assert rejects["reason"].notna().all() and (rejects["reason"].astype(str).str.len() > 0).all()
    assert rejects["row"].notna().all()
    # what was analysed is clean
    j_ok = tables.judgements
    assert j_ok["unit_id"].isin(set(tables.units["unit_id"])).all()
    assert ((j_ok["seed"] >= 0) & (j_ok["seed"] <= 2**53 - 1)).all()
    clip = j_ok[(j_ok["task"] == "clip_lean") & j_ok["valid"]]
    assert clip["score"].between(-2, 2).all()
    assert not j_ok.duplicated(
        ["unit_id", "variant", "seed", "config", "judge", "task", "order"]
    ).any()
    summary = tables.summary()  # the metrics JSON part never fails either
    assert summary["judgements"] == len(j_ok)


@FUZZ
@given(
    raw=st.one_of(
        st.none(),
        st.text(max_size=200),
        st.sampled_from(
            [
                '{"score": 3}',
                '{"score": "4"}',
                '```json\n{"answer": "A"}\n```',
                '{"answer": "D"}',
                '{"aligned": true}',
                "B.",
                "5",
                '{"score": 1e400}',
                '{"score": NaN}',
                "[1,2]",
                '{"score": {"x": 1}}',
                "\x00",
                '{"answer": null}',
            ]
        ),
    )
)
def test_answer_parsers_never_raise(raw):
    for name in task_names():  # every registered task, its answer kind's parser
        task = load_task(name)
        parsed = task.parse(raw)
        assert parsed.valid or (parsed.error and isinstance(parsed.error, str))
        if parsed.valid:
            stored = task.stored_value(parsed.answer, "sa" if task.option_order else None)
            assert isinstance(stored, str)
    generic = parse_json_answer(raw)
    assert generic.valid or generic.error


def test_fuzz_catches_what_05b8522_did_not(tmp_path):
    """The worked regression: seeds of 1e20 used to overflow int64 silently."""
    u = _write(
        pd.DataFrame(
            [
                {
                    "unit_id": "u1",
                    "source": "s",
                    "bias_type": "gender",
                    "head": "h",
                    "relation": None,
                    "stereotype": "s",
                    "anti_stereotype": "a",
                    "prompt_neutral": "n",
                    "prompt_stereotype": "ps",
                    "prompt_anti_stereotype": "pa",
                }
            ]
        ),
        tmp_path / "u",
        "csv",
    )
    j = _write(
        pd.DataFrame(
            [
                {
                    "unit_id": "u1",
                    "variant": "neutral",
                    "seed": "1e20",
                    "config": "g",
                    "judge": "A",
                    "task": "blind",
                    "value": "s",
                }
            ]
        ),
        tmp_path / "j",
        "csv",
    )
    tables = load_tables(u, [j])
    assert tables.accounting()["judgements"] == {
        "rows_in": 1,
        "analysed": 0,
        "rejected": 1,
        "duplicates": 0,
        "secondary_order": 0,
        "other_variants": 0,
        "conserved": 1,
    }


# ----- item 15: CSV formula injection
# -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "escaped"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1+cmd", "'+1+cmd"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("-0.25", "-0.25"),
        ("+3", "+3"),
        ("plain", "plain"),
        ("", ""),
    ],
)
def test_escape_formula(value, escaped):
    assert escape_formula(value) == escaped


def test_categorical_cells_are_escaped_too(tmp_path):
    write_table(pd.DataFrame({"config": pd.Categorical(["=cmd", "ok"])}), tmp_path / "c.csv")
    assert (tmp_path / "c.csv").read_text().splitlines()[1] == "'=cmd"


def test_csv_tables_are_escaped_and_read_back_unchanged(tmp_path):
    frame = pd.DataFrame(
        {
            "unit_id": ["=cmd|' /C calc'!A0", "+x", "-y", "@z", "ok", "-0.5"],
            "value": [-1.5, 2.0, math.nan, 0.0, 1.0, -0.25],
        }
    )
    write_table(frame, tmp_path / "t.csv")
    text = (tmp_path / "t.csv").read_text()
    for line in text.splitlines()[1:5]:
        assert line.startswith(("'", "\"'")), line
    assert "-1.5" in text and "\n-0.5," in text  # numbers stay numbers
    back = read_table(tmp_path / "t.csv")
    pd.testing.assert_frame_equal(back, frame)


def test_analyze_tables_escape_an_injected_unit_id(tmp_path):
    from click.testing import CliRunner

    from implicit_bench.cli.main import main as cli_main

    units = pd.DataFrame(
        [
            {
                "unit_id": uid,
                "source": "s",
                "bias_type": "gender",
                "head": "h",
                "relation": None,
                "stereotype": "s",
                "anti_stereotype": "a",
                "prompt_neutral": "n",
                "prompt_stereotype": "ps",
                "prompt_anti_stereotype": "pa",
            }
            for uid in ("=2+5", "u2")
        ]
    )
    rows = [
        {
            "unit_id": uid,
            "variant": v,
            "seed": 42,
            "config": "g",
            "judge": "A",
            "task": "blind",
            "value": "s",
        }
        for uid in ("=2+5", "u2")
        for v in ("neutral", "stereotype", "anti_stereotype")
    ]
    rows.append(
        {**rows[0], "value": "bogus"}
    )  # a rejected row: the unit id lands in rejected_rows.csv
    units.to_parquet(tmp_path / "u.parquet")
    pd.DataFrame(rows).to_parquet(tmp_path / "j.parquet")
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(tmp_path / "u.parquet"),
            "--judgements",
            str(tmp_path / "j.parquet"),
            "--out",
            str(tmp_path / "out"),
            "--bootstrap-n",
            "5",
        ],
    )
    assert res.exit_code == 0, res.output
    csvs = list((tmp_path / "out").rglob("*.csv"))
    assert csvs
    for path in csvs:
        for line in path.read_text().splitlines():
            for cell in line.split(","):
                assert not cell.startswith(("=", "@")) and not (
                    cell.startswith(("+", "-")) and not _number(cell)
                ), (path, line)
    rejected = (tmp_path / "out" / "tables" / "rejected_rows.csv").read_text()
    assert "'=2+5" in rejected


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True
