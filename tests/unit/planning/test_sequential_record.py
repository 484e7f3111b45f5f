"""The record of a sequential run (planning/sequential_record.py): params that change between
rounds are refused before the next round is spent, every round names its settings, a start
with other settings begins at round 1, and a tampered ``logs/sequential-*.json`` is one line
naming the file and the field (docs/errors.md, "Records of multi-round runs and benchmarks")."""

from __future__ import annotations

import copy
import json

import pytest

from implicit_bench.errors import ConfigError, InputError
from implicit_bench.planning import sequential
from implicit_bench.planning.sequential_record import changed_keys
from tests.helpers.sequential_fixtures import ROUNDS, Pipeline, params

RECORD = "logs/sequential-t.json"


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(pipeline, params_of=params):
    return sequential.run_sequential(
        params_of, ROUNDS, 0.001, ["default_rate"], [], None, "t", run_round=pipeline
    )


class Edited:
    """params.yaml as read by each call: ``bootstrap.level`` edited once ``after`` rounds ran."""

    def __init__(self, pipeline: Pipeline, after: int):
        self.pipeline, self.after = pipeline, after

    def __call__(self) -> dict:
        p = params()
        if len(self.pipeline.calls) >= self.after:
            p["evaluate"]["bootstrap"]["level"] = 0.5
        return p


def test_params_changed_after_a_round_are_refused_before_the_next(workspace):
    pipeline = Pipeline(workspace)
    edited = Edited(pipeline, after=1)
    with pytest.raises(ConfigError) as caught:
        _run(pipeline, edited)
    message = str(caught.value)
    assert "\n" not in message and "params changed during round 1" in message
    assert "evaluate.bootstrap.level" in message and RECORD in message
    assert pipeline.calls == [30]  # round 2 was never run
    assert not (workspace / RECORD).exists()  # round 1 is not recorded either
    # restored: the run resumes on its settings and every round names them
    state = _run(Pipeline(workspace))
    hashes = {r["params"] for r in state["rounds"]}
    assert hashes == {state["settings"]["params"]} and len(state["rounds"]) == 4


def test_params_changed_between_rounds_stop_before_the_round(workspace):
    pipeline = Pipeline(workspace)
    calls = {"n": 0}

    def params_of():
        calls["n"] += 1  # start, before round 1, after round 1, before round 2 (edited)
        p = params()
        if calls["n"] >= 4:
            p["evaluate"]["bootstrap"]["level"] = 0.5
        return p

    with pytest.raises(ConfigError, match="params changed before round 2"):
        _run(pipeline, params_of)
    assert pipeline.calls == [30]
    saved = json.loads((workspace / RECORD).read_text())
    assert [r["units"] for r in saved["rounds"]] == [30]
    assert saved["rounds"][0]["params"] == saved["settings"]["params"]


def test_a_start_with_other_settings_begins_again_at_round_1(workspace, capsys):
    with pytest.raises(KeyboardInterrupt):
        _run(Pipeline(workspace, fail_at=3))
    first = json.loads((workspace / RECORD).read_text())
    assert len(first["rounds"]) == 2

    def other():
        p = params()
        p["evaluate"]["bootstrap"]["level"] = 0.5
        return p

    again = Pipeline(workspace)
    state = _run(again, other)
    assert again.calls == ROUNDS  # the two rounds of other settings are not reused
    assert "other settings (params): starting again at round 1" in capsys.readouterr().out
    assert state["settings"]["params"] != first["settings"]["params"]
    assert {r["params"] for r in state["rounds"]} == {state["settings"]["params"]}


def test_changed_keys_names_keys_only():
    a = {"evaluate": {"bootstrap": {"level": 0.95, "n": 20}}, "judges": {"j": {"url": "x"}}}
    b = copy.deepcopy(a)
    b["evaluate"]["bootstrap"]["level"] = 0.5
    b["judges"]["j"]["url"] = "http://user:secret@host"
    b["new"] = 1
    assert changed_keys(a, b) == ["evaluate.bootstrap.level", "judges.j.url", "new"]
    assert changed_keys(a, a) == []


def _tampered(workspace, edit):
    """A finished record of two rounds, edited by ``edit``; then the run started again."""
    with pytest.raises(KeyboardInterrupt):
        _run(Pipeline(workspace, fail_at=3))
    path = workspace / RECORD
    record = json.loads(path.read_text())
    text = edit(record)
    path.write_text(text if isinstance(text, str) else json.dumps(text))
    again = Pipeline(workspace)
    with pytest.raises(InputError) as caught:
        _run(again)
    assert again.calls == []  # nothing run on a record that cannot be read
    message = str(caught.value)
    assert "\n" not in message and message.startswith(RECORD)
    return message


def _set(record, key, value):
    record[key] = value
    return record


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda r: "{not json", ": not a JSON record"),
        (lambda r: json.dumps([r]), ": not a JSON object (list)"),
        (lambda r: _set(r, "rounds", {"0": 1}), ", field 'rounds': "),
        (lambda r: _set(r, "rounds", [[30]]), ", field 'rounds[0]': "),
        (lambda r: _set(r, "settings", None), ", field 'settings': "),
        (lambda r: {k: v for k, v in r.items() if k != "settings"}, ", field 'settings': "),
        (lambda r: _set(r, "stopped", []), ", field 'stopped': "),
        (lambda r: _set(r, "stopped", {"round": 1}), ", field 'stopped.why': "),
        (lambda r: _set(r, "stopped", {"round": 9, "why": "x"}), ", field 'stopped.round': 9"),
        (lambda r: r["rounds"][1].update(units="60") or r, ", field 'rounds[1].units': "),
        (lambda r: r["rounds"][1].update(units=61) or r, ", field 'rounds[1].units': 61"),
        (lambda r: r["rounds"][1].update(round=3) or r, ", field 'rounds[1].round': 3"),
        (lambda r: r["rounds"][0].update(targets=[]) or r, ", field 'rounds[0].targets': "),
        (lambda r: _set(r, "rounds", r["rounds"] * 3), ", field 'rounds': 6 rounds recorded"),
    ],
)
def test_a_tampered_record_is_one_line_naming_file_and_field(workspace, edit, expected):
    message = _tampered(workspace, edit)
    assert expected in message and "move the file aside" in message


def test_a_record_of_every_round_without_its_stop_is_refused(workspace):
    _run(Pipeline(workspace))
    path = workspace / RECORD
    record = json.loads(path.read_text())
    del record["stopped"]  # was KeyError: 'stopped'
    path.write_text(json.dumps(record))
    with pytest.raises(InputError, match="field 'stopped': missing though every round"):
        _run(Pipeline(workspace))
