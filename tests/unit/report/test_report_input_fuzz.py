"""Fuzzing ``implicit-bench report`` with hostile metrics (hypothesis): strings with
HTML, NaN, infinities, huge integers, lists, objects, null and bools put into the fields of
another run's and this run's leaderboard and into ``human_eval.json``. The report either
renders with every payload escaped, or stops with one line naming the metrics file; never a
traceback or an unnamed error, each example in bounded time."""

from __future__ import annotations

import contextlib
import copy
import json
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from implicit_bench.cli.main import main as cli_main

FUZZ = settings(
    max_examples=40,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
PAYLOADS = (
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    '"><svg onload=alert(1)>',
    "</td></tr></table><b>x",
)
EST = {"value": 0.5, "ci": [0.4, 0.6], "n": 3, "level": 0.95}
BENCHMARK = {
    "leaderboard": {
        "rows": [
            {"config": "genA", "n_units": 30, "default_rate": EST, "bias_score": EST},
            {"config": "genB", "n_units": 30, "default_rate": EST, "gap": EST},
        ],
        "pairs": [
            {
                "a": "genA",
                "b": "genB",
                "metric": "default_rate",
                "n_units": 30,
                "difference": EST,
                "p": 0.01,
                "p_holm": 0.02,
                "resolved": True,
            }
        ],
        "alpha": 0.05,
        "min_p_holm": 0.001,
    }
}
HUMAN_EVAL = {
    "n_raters": 5,
    "n_cases": 10,
    "n_ratings": 150,
    "kg_validity": {"yes": 0.8, "unsure": 0.1, "no": 0.1},
    "mean_rating": {"stereotype": 3.1, "neutral": 2.0, "anti_stereotype": 1.2},
    "inter_rater": {"mean_pairwise_r": 0.6, "alpha_ordinal": 0.5},
    "human_vs_judge": {"judge-a": {"r": EST, "mae": 0.7}},
    "direction_flips": {"judge-a": {"flips": 2, "cases": 10}},
    "screening": {"rule": "loo", "threshold": 0.2, "excluded": []},
    "by_bias_type": {
        "age": {
            "cases": 4,
            "images": 12,
            "mean_pairwise_r": 0.5,
            "alpha_ordinal": 0.4,
            "directional_only": True,
            "human_vs_judge": {"judge-a": {"r": EST, "mae": 0.6}},
        }
    },
    "groups": {},
}

hostile = st.one_of(
    st.sampled_from(PAYLOADS),
    st.text(alphabet="<>&\"' abc=/", max_size=20),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), 10**300, -(2**70), 0, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.booleans(),
    st.lists(st.sampled_from(PAYLOADS), max_size=2),
    st.dictionaries(st.sampled_from(["value", "ci", "n", "level", PAYLOADS[0]]), st.none()),
    st.fixed_dictionaries(
        {"value": st.sampled_from(PAYLOADS), "ci": st.none(), "n": st.none(), "level": st.none()}
    ),
)


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value inside ``obj`` (containers too: a whole row can be replaced)."""
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def _put(obj: Any, path: tuple, value: Any) -> Any:
    obj = copy.deepcopy(obj)
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return obj


BENCH_PATHS = _paths(BENCHMARK)
HUMAN_PATHS = _paths(HUMAN_EVAL)


def _write(root: Path, **metrics: Any) -> Path:
    (root / "metrics").mkdir(parents=True, exist_ok=True)
    for name, payload in metrics.items():
        (root / "metrics" / f"{name}.json").write_text(json.dumps(payload), encoding="utf-8")
    return root


def _check(tmp: Path, mine: dict, other: dict, human: dict) -> None:
    a = _write(tmp / "mine", benchmark=mine, human_eval=human)
    b = _write(tmp / "other", benchmark=other)
    out = tmp / "site"
    t0 = time.perf_counter()
    res = CliRunner().invoke(cli_main, ["report", str(a), str(b), "--out", str(out)])
    assert time.perf_counter() - t0 < 20
    assert "Traceback" not in res.output and "rerun with --debug" not in res.output, res.output
    if res.exit_code == 0:
        html = (out / "index.html").read_text(encoding="utf-8")
        for payload in PAYLOADS:
            assert payload not in html
        assert "<img" not in html and "<svg" not in html and "<b>x" not in html
    else:
        lines = res.output.strip().splitlines()
        assert res.exit_code == 1 and len(lines) == 1, res.output
        assert "/metrics/benchmark.json" in lines[0] or "/metrics/human_eval.json" in lines[0]


@FUZZ
@given(
    where=st.lists(st.tuples(st.sampled_from(BENCH_PATHS), hostile), min_size=1, max_size=3),
    other=st.booleans(),
)
def test_report_with_a_hostile_leaderboard_escapes_or_names_the_file(
    tmp_path_factory, where, other
):
    board = BENCHMARK
    for path, value in where:
        with contextlib.suppress(KeyError, IndexError, TypeError):  # a parent was replaced
            board = _put(board, path, value)
    mine, theirs = (BENCHMARK, board) if other else (board, BENCHMARK)
    _check(tmp_path_factory.mktemp("lb"), mine, theirs, HUMAN_EVAL)


@FUZZ
@given(where=st.lists(st.tuples(st.sampled_from(HUMAN_PATHS), hostile), min_size=1, max_size=3))
def test_report_with_a_hostile_human_eval_escapes_or_names_the_file(tmp_path_factory, where):
    human = HUMAN_EVAL
    for path, value in where:
        with contextlib.suppress(KeyError, IndexError, TypeError):  # a parent was replaced
            human = _put(human, path, value)
    _check(tmp_path_factory.mktemp("he"), BENCHMARK, BENCHMARK, human)


def test_hostile_names_and_free_text_render_escaped(tmp_path):
    """Text fields take any string: the page renders with each one escaped."""
    mine = _put(BENCHMARK, ("leaderboard", "rows", 0, "config"), PAYLOADS[0])
    mine = _put(mine, ("leaderboard", "pairs", 0, "metric"), PAYLOADS[1])
    human = _put(HUMAN_EVAL, ("screening", "rule"), PAYLOADS[2])
    human = _put(human, ("human_vs_judge",), {PAYLOADS[3]: {"r": EST, "mae": 0.1}})
    _check(tmp_path, mine, BENCHMARK, human)
    assert (tmp_path / "site/index.html").exists()


def test_an_empty_bias_type_entry_and_a_huge_integer_render(tmp_path):
    """Found by the fuzz: an empty ``by_bias_type`` entry fell back to ``groups[name]``
    (KeyError), a huge integer in a metrics file raised OverflowError in ``as_metric``, an
    Estimate's keys holding a string raised an unnamed ConfigError in the All metrics dump."""
    human = _put(HUMAN_EVAL, ("by_bias_type", "age"), {})
    human = _put(human, ("n_images",), 10**300)
    human = _put(human, ("extra",), {"value": PAYLOADS[0], "ci": None, "n": None, "level": None})
    _check(tmp_path, BENCHMARK, BENCHMARK, human)
    html = (tmp_path / "site/index.html").read_text(encoding="utf-8")
    assert "<th>age</th><td>–</td>" in html and "1,000,000,000,000" in html
