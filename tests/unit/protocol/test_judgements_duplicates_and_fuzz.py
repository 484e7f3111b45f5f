"""The same file given twice is a one-line error (every row was dropped
as a duplicate, then "rubric judgements exist for []"); a fuzz test of judge answers (a result,
never an exception) and the parser's size bound; answers of a million characters in the shapes
that once made a parser quadratic. How parse time grows with the answer's length is measured by
`python benchmarks/bench_parse.py` (benchmarks/README.md), not timed here."""

from __future__ import annotations

import signal
from contextlib import contextmanager

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


# ----- fuzz: judge answers of any shape and size: a result, never an exception ---------------
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
        " ",
        "\n",
        '"aligned": true',
        '{"score": 2}',
        "\u2028",
        "é",
    ]
)
answer_parts = st.tuples(st.lists(pieces, max_size=40).map("".join), st.integers(0, 50_000), pieces)


def _parse(text: str, spec) -> None:  # noqa: ANN001
    """Parse ``text`` as a JSON answer and as the task's answer: a result either way."""
    parsed = parse_json_answer(text)
    assert parsed.valid in (True, False)
    result = spec.parse(text) if hasattr(spec, "parse") else parsed
    assert result is not None


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(answer_parts, st.sampled_from(["rubric", "blind", "alignment"]))
def test_fuzz_judge_answers(parts, task):
    head, repeats, piece = parts
    _parse(head + piece * repeats, load_task(task))


@contextmanager
def _hang_guard(seconds: int):
    """Fail instead of hanging: a linear parse of a million characters takes seconds at most, the
    quadratic ones these inputs once hit took hours. Not a speed target (benchmarks/)."""

    def _stop(signum, frame):  # noqa: ANN001, ARG001
        raise TimeoutError(f"parsing did not finish in {seconds} s: quadratic again?")

    previous = signal.signal(signal.SIGALRM, _stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# far above the slowest shape's 15 s (braces and quotes: 16 bounded rescans, JSON and task
# parse) on a loaded 2-core machine, far below the hours a quadratic parse takes
HANG_GUARD_S = 600
NEAR_LIMIT = MAX_ANSWER_CHARS - 100
ADVERSARIAL = {
    # an opening fence that never closes, then whitespace: backtracking into the whitespace
    # rescanned the rest once per character (hypothesis found it at 6,632 newlines)
    "unclosed fence, newlines": "```json\n" + "\n" * NEAR_LIMIT,
    "unclosed fence, spaces": "```" + " " * NEAR_LIMIT + "x",
    # every "{" starting a scan of its own (40,000 took 52.6 s)
    "open braces": "{" * NEAR_LIMIT,
    "braces and quotes": '{"' * (NEAR_LIMIT // 2),
    "keys without values": '"score": ' * (NEAR_LIMIT // 9),
    "unclosed string after a key": '{"score": "' + "\\" * (NEAR_LIMIT // 2),
}


@pytest.mark.parametrize("task", ["rubric", "blind", "alignment"])
@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_million_character_answers_parse(shape, task):
    text = ADVERSARIAL[shape]
    assert len(text) <= MAX_ANSWER_CHARS
    with _hang_guard(HANG_GUARD_S):
        _parse(text, load_task(task))
        assert not parse_json_answer(text).valid


def test_answer_size_bound_is_enforced_before_parsing():
    parsed = parse_json_answer("{" * (MAX_ANSWER_CHARS + 1))
    assert not parsed.valid and parsed.error.startswith(
        f"answer of {MAX_ANSWER_CHARS + 1} characters"
    )
    assert parsed.error.endswith("not parsed")
