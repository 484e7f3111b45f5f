"""Rating and calibration bundle manifests are checked for structure before any answer goes
through them: a tampered manifest is an InputError naming the manifest and the field. The fuzz
tests mutate a valid manifest at random (keys dropped, wrong types, out-of-range orders and
indices, truncated lists) and assert the import either succeeds or raises that one error."""

from __future__ import annotations

import copy
import random

import pandas as pd
import pytest

from implicit_bench.errors import InputError
from implicit_bench.human_eval.answers import load_manifests, read_answers
from implicit_bench.human_eval.blind_form import BLIND_ANSWER_COLUMNS
from implicit_bench.human_eval.blind_import import (
    image_labels,
    load_calibration_manifests,
    read_blind_answers,
)
from implicit_bench.human_eval.form import ANSWER_COLUMNS
from tests.helpers.human_eval_fixtures import calibration_manifest, rating_manifest, write_manifest
from tests.helpers.paths import REPO_ROOT


def _rating_answers(path):
    rows = [
        ["b-1", "Ann", "c001", "u1", "yes", "4", "2", "1", ""],
        ["b-1", "Ann", "c002", "u2", "no", "3", "", "5", ""],
    ]
    pd.DataFrame(rows, columns=ANSWER_COLUMNS).to_csv(path, index=False)
    return path


def _blind_answers(path):
    rows = [["k-1", "Ann", "k0001", "u1", "A", ""], ["k-1", "Ann", "k0002", "u2", "B", ""]]
    pd.DataFrame(rows, columns=BLIND_ANSWER_COLUMNS).to_csv(path, index=False)
    return path


def test_valid_manifests_import(tmp_path):
    assert set(ANSWER_COLUMNS) >= {"bundle_id", "rater", "case", "unit_id", "kg_valid"}
    manifests = load_manifests([write_manifest(tmp_path, rating_manifest())])
    ratings, kg, _ = read_answers([_rating_answers(tmp_path / "a.csv")], manifests)
    assert len(ratings) == 5 and len(kg) == 2
    manifests = load_calibration_manifests(
        [write_manifest(tmp_path, calibration_manifest(), "k.json")]
    )
    answers, _ = read_blind_answers([_blind_answers(tmp_path / "k.csv")], manifests)
    assert answers["label"].tolist() == ["s", "s"]


def _set(data, keys, value):
    obj = data
    for k in keys[:-1]:
        obj = obj[k]
    obj[keys[-1]] = value
    return data


@pytest.mark.parametrize(
    ("keys", "value", "field"),
    [
        (["cases", 0, "images"], [], "cases[0].images"),
        (["cases", 0, "images", 1, "variant"], "stereotype", "cases[0].images"),
        (["cases", 1, "seed"], "42", "cases[1].seed"),
        (["cases"], {"c001": 1}, "cases"),
        (["sampling"], None, "sampling"),
        (["cases", 0], "c001", "cases[0]"),
        (["bundle_id"], ["b"], "bundle_id"),
    ],
)
def test_tampered_rating_manifests_name_manifest_and_field(tmp_path, keys, value, field):
    path = write_manifest(tmp_path, _set(rating_manifest(), keys, value))
    with pytest.raises(InputError) as err:
        load_manifests([path])
    assert f"manifest.json, field '{field}'" in str(err.value)


@pytest.mark.parametrize(
    ("keys", "value", "field"),
    [
        (["items", 0, "order"], "ss", "items[0].order"),
        (["items", 0, "order"], 3, "items[0].order"),
        (["items", 1, "options"], {"A": "s", "B": "a", "C": "neither"}, "items[1].options"),
        (["items", 1, "options"], ["s", "a"], "items[1].options"),
        (["items", 0, "seed"], None, "items[0].seed"),
        (["items"], [], "items"),
        (["items", 1, "item"], "k0001", "items[1].item"),
    ],
)
def test_tampered_calibration_manifests_name_manifest_and_field(tmp_path, keys, value, field):
    path = write_manifest(tmp_path, _set(calibration_manifest(), keys, value))
    with pytest.raises(InputError) as err:
        load_calibration_manifests([path])
    assert f"manifest.json, field '{field}'" in str(err.value)


JUNK = [None, True, 0, -1, 7, 10**9, 1.5, "", "x", "sa", "as", "neither", [], [1], {}, {"A": 1}]


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


def mutate(data: dict, rng: random.Random) -> dict:
    """One to three random mutations: drop a key or list element, replace a value with junk,
    truncate or duplicate a list, swap in an out-of-range value."""
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        path = rng.choice(paths)
        parent = data
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        op = rng.choice(["drop", "junk", "truncate", "duplicate"])
        target = parent[key]
        if op == "drop":
            del parent[key]
        elif op == "junk":
            parent[key] = copy.deepcopy(rng.choice(JUNK))
        elif op == "truncate" and isinstance(target, list | str):
            parent[key] = target[: rng.randint(0, max(len(target) - 1, 0))]
        elif op == "duplicate" and isinstance(target, list) and target:
            target.append(copy.deepcopy(target[0]))
        else:
            parent[key] = copy.deepcopy(rng.choice(JUNK))
    return data


def _one_line_or_ok(run) -> str:
    try:
        run()
    except InputError as exc:
        assert len(str(exc).splitlines()) == 1, str(exc)
        return "error"
    return "ok"


@pytest.mark.parametrize("seed", range(4))
def test_fuzzed_rating_manifests_import_or_fail_with_input_error(tmp_path, seed):
    rng = random.Random(seed)
    answers = _rating_answers(tmp_path / "a.csv")
    outcomes = set()
    for n in range(150):
        path = write_manifest(tmp_path, mutate(rating_manifest(), rng), f"m{n}.json")

        def run(path=path):
            read_answers([answers], load_manifests([path]))

        outcomes.add(_one_line_or_ok(run))
    assert "error" in outcomes


@pytest.mark.parametrize("seed", range(4))
def test_fuzzed_calibration_manifests_import_or_fail_with_input_error(tmp_path, seed):
    rng = random.Random(seed)
    answers = _blind_answers(tmp_path / "k.csv")
    outcomes = set()
    for n in range(150):
        path = write_manifest(tmp_path, mutate(calibration_manifest(), rng), f"m{n}.json")

        def run(path=path):
            found, _ = read_blind_answers([answers], load_calibration_manifests([path]))
            if not found.empty:
                image_labels(found)

        outcomes.add(_one_line_or_ok(run))
    assert "error" in outcomes


@pytest.mark.parametrize(
    ("mutation", "field"),
    [
        (lambda m: _set(m, ["kind"], ["calibration"]), "field"),
        (lambda m: _set(m, ["items", 0, "order"], "ss"), "field 'items[0].order'"),
    ],
)
def test_cli_import_of_a_tampered_manifest_is_one_line(tmp_path, mutation, field):
    import os
    import subprocess
    import sys

    manifest = write_manifest(tmp_path, mutation(calibration_manifest()))
    answers = _blind_answers(tmp_path / "k.csv")
    proc = subprocess.run(
        [sys.executable, "-m", "implicit_bench.cli.main", "human-eval", "import"]
        + ["--manifest", str(manifest), str(answers)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert "manifest.json" in err and field in err and "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
