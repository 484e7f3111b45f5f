"""Fuzz tests of form exports: random byte-level mutations of a valid Google Form export (the
release's human study) and of a valid bundle answers CSV (rating and calibration forms) either
import or raise the project's one-line InputError, never another exception."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from implicit_bench.errors import InputError
from implicit_bench.human_eval.answers import load_manifests, read_answers
from implicit_bench.human_eval.blind_form import BLIND_ANSWER_COLUMNS
from implicit_bench.human_eval.blind_import import load_calibration_manifests, read_blind_answers
from implicit_bench.human_eval.form import ANSWER_COLUMNS
from implicit_bench.release.human_study import read_human_study
from implicit_bench.release.importer import Release
from tests.helpers.human_eval_fixtures import calibration_manifest, rating_manifest, write_manifest
from tests.helpers.release_fixtures import HUMAN_FILES, write_release, write_studies

PIECES = [b",", b'"', b"\n", b"\r\n", b"", b" ", b"\xff", b"\xc3", b"x", b"5 - Extremely", b",,,"]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to four edits: delete a span, insert a piece, duplicate or drop a line, truncate."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(["delete", "insert", "dup_line", "drop_line", "truncate"])
        pos = rng.randrange(len(out) + 1)
        if op == "delete":
            del out[pos : pos + rng.randint(1, 8)]
        elif op == "insert":
            out[pos:pos] = rng.choice(PIECES)
        elif op in ("dup_line", "drop_line"):
            lines = bytes(out).split(b"\n")
            k = rng.randrange(len(lines))
            if op == "dup_line":
                lines.insert(k, lines[k])
            else:
                del lines[k]
            out = bytearray(b"\n".join(lines))
        else:
            out = out[:pos]
    return bytes(out)


def _outcome(run) -> str:
    try:
        run()
    except InputError as exc:
        assert len(str(exc).splitlines()) == 1, str(exc)
        return "error"
    return "ok"


@pytest.mark.parametrize("seed", range(3))
def test_fuzzed_google_form_exports_import_or_fail_with_input_error(tmp_path, seed):
    root = write_studies(write_release(tmp_path / "rel"))
    rel = [k for k in HUMAN_FILES if k.startswith("data/human_eval/Stereo")][0]
    valid = (root / rel).read_bytes()
    rng = random.Random(seed)
    outcomes = set()
    for _ in range(60):
        (root / rel).write_bytes(mutate(valid, rng))
        outcomes.add(_outcome(lambda: read_human_study(Release(root))))
    assert "error" in outcomes


def _csv(path, rows, columns):
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return path.read_bytes()


@pytest.mark.parametrize("seed", range(3))
def test_fuzzed_rating_form_answers_import_or_fail_with_input_error(tmp_path, seed):
    manifests = load_manifests([write_manifest(tmp_path, rating_manifest())])
    path = tmp_path / "answers.csv"
    valid = _csv(
        path,
        [
            ["b-1", "Ann", "c001", "u1", "yes", "4", "2", "1", "2026-01-01T00:00:00Z"],
            ["b-1", "Ann", "c002", "u2", "no", "3", "", "5", ""],
        ],
        ANSWER_COLUMNS,
    )
    rng = random.Random(seed)
    outcomes = set()
    for _ in range(100):
        path.write_bytes(mutate(valid, rng))
        outcomes.add(_outcome(lambda: read_answers([path], manifests)))
    assert "error" in outcomes


@pytest.mark.parametrize("seed", range(3))
def test_fuzzed_calibration_form_answers_import_or_fail_with_input_error(tmp_path, seed):
    manifests = load_calibration_manifests([write_manifest(tmp_path, calibration_manifest())])
    path = tmp_path / "answers.csv"
    valid = _csv(
        path,
        [["k-1", "Ann", "k0001", "u1", "A", ""], ["k-1", "Bob", "k0002", "u2", "C", ""]],
        BLIND_ANSWER_COLUMNS,
    )
    rng = random.Random(seed)
    outcomes = set()
    for _ in range(100):
        path.write_bytes(mutate(valid, rng))
        outcomes.add(_outcome(lambda: read_blind_answers([path], manifests)))
    assert "error" in outcomes


@pytest.mark.parametrize("columns", [ANSWER_COLUMNS, BLIND_ANSWER_COLUMNS])
def test_a_short_answer_row_names_file_and_row(tmp_path, columns):
    path = tmp_path / "short.csv"
    path.write_text(",".join(columns) + "\n" + ",".join(["x"] * (len(columns) - 2)) + "\n")
    manifests = {}
    with pytest.raises(InputError) as err:
        if columns == ANSWER_COLUMNS:
            read_answers([path], manifests)
        else:
            read_blind_answers([path], manifests)
    assert "short.csv, row 1:" in str(err.value) and "header has" in str(err.value)
