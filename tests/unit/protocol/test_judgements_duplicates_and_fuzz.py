"""The same file given twice is a one-line error (every row was dropped
as a duplicate, then "rubric judgements exist for []"); a fuzz test of judge answers with the
parser's size and time bounds asserted."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from implicit_bench._util.jsonparse import MAX_ANSWER_CHARS, parse_json_answer
from implicit_bench.cli.main import main as cli_main
from implicit_bench.errors import InputError
from implicit_bench.protocol.judge_tasks import load_task


def _inputs(tmp_path):
    import pandas as pd

    from tests.helpers.analysis_fixtures import (
        BLIND_TYPES,
        blind_judgements,
        rubric_judgements,
        units,
    )

    units(BLIND_TYPES).to_csv(tmp_path / "units.csv", index=False)
    pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True).to_parquet(
        tmp_path / "j.parquet"
    )
    return tmp_path / "units.csv", tmp_path / "j.parquet"


def test_same_judgements_file_twice_is_an_error(tmp_path, monkeypatch):
    from implicit_bench.analysis.byo.core import run_analyze

    u, j = _inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"judgements file given twice \(also as .*j.parquet\)"):
        run_analyze(str(u), [str(j), "./j.parquet"], str(tmp_path / "out"), {})
    result = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(u),
            "--judgements",
            str(j),
            "--judgements",
            str(j),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert (
        result.exit_code == 1
        and "given twice" in result.output
        and "Traceback" not in result.output
    )
    assert not (tmp_path / "out").exists()


# ----- fuzz: judge answers of any shape and size: a result,
# never an exception, fast ---------------
pieces = st.sampled_from(
    [
        "{",
        "}",
        '"',
        "\\",
        '"score"',
        ": ",
        "4",
        ", ",
        '"choice": "A"',
        "```json\n",
        "```",
        "[",
        "]",
        "x",
        " ",
        "\n",
        '"aligned": true',
        '{"score": 2}',
        "\u2028",
        "é",
    ]
)
answer_parts = st.tuples(st.lists(pieces, max_size=40).map("".join), st.integers(0, 50_000), pieces)


def _parse(text: str, spec) -> float:  # noqa: ANN001
    """Seconds to parse ``text`` as a JSON answer and as the task's answer."""
    t0 = time.perf_counter()
    parsed = parse_json_answer(text)
    assert parsed.valid in (True, False)
    result = spec.parse(text) if hasattr(spec, "parse") else parsed
    assert result is not None
    return time.perf_counter() - t0


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(answer_parts, st.sampled_from(["rubric", "blind", "alignment"]))
def test_fuzz_judge_answers(parts, task):
    head, repeats, piece = parts
    spec = load_task(task)
    tenth = _parse(head + piece * (repeats // 10), spec)
    whole = _parse(head + piece * repeats, spec)
    # up to 50,000 repeated pieces: linear in the length (ten times the text, about ten times
    # the time; a quadratic parser takes a hundred times), whatever the machine's speed
    assert whole < 30 * tenth + 0.5


def test_answer_size_bound_is_enforced_before_parsing():
    t0 = time.perf_counter()
    parsed = parse_json_answer("{" * (MAX_ANSWER_CHARS + 1))
    assert time.perf_counter() - t0 < 0.5
    assert not parsed.valid and parsed.error.startswith(
        f"answer of {MAX_ANSWER_CHARS + 1} characters"
    )
