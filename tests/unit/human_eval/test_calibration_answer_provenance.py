"""Calibration answers must come from the bundle they were exported from: a blank unit id, or
a unit id that is not the item's unit in the named bundle (answers relabelled with another
bundle's id), is a one-line error naming the file, row and field."""

from __future__ import annotations

import pandas as pd
import pytest

from implicit_bench.errors import InputError
from implicit_bench.human_eval.blind_form import BLIND_ANSWER_COLUMNS
from implicit_bench.human_eval.blind_import import read_blind_answers


def _manifest(bundle: str, units: list[str], orders: list[str]) -> dict:
    items = []
    for n, (uid, order) in enumerate(zip(units, orders, strict=True), start=1):
        items.append(
            {
                "item": f"k{n:04d}",
                "config": "c1",
                "unit_id": uid,
                "variant": "neutral",
                "seed": 42,
                "sheet_row": n,
                "image_sha256": "0" * 64,
                "order": order,
                "options": {"A": order[0], "B": order[1], "C": "neither"},
            }
        )
    return {"bundle_id": bundle, "kind": "calibration", "sheet": "s.csv", "items": items}


MANIFESTS = {
    "k-one": _manifest("k-one", ["u1", "u2"], ["sa", "as"]),
    "k-two": _manifest("k-two", ["u7", "u8"], ["as", "sa"]),
}


def _write(path, rows):
    pd.DataFrame(rows, columns=BLIND_ANSWER_COLUMNS).to_csv(path, index=False)
    return path


def test_matching_answers_are_read(tmp_path):
    path = _write(tmp_path / "a.csv", [["k-one", "Ann", "k0001", "u1", "A", ""]])
    answers, _ = read_blind_answers([path], MANIFESTS)
    assert answers["label"].tolist() == ["s"]


def test_answers_relabelled_with_another_bundle_id_and_blank_units_are_refused(tmp_path):
    # k-one's answers, bundle id rewritten to k-two and unit ids blanked
    path = _write(
        tmp_path / "relabelled.csv",
        [["k-two", "Ann", "k0001", "", "A", ""], ["k-two", "Ann", "k0002", "", "B", ""]],
    )
    with pytest.raises(InputError) as err:
        read_blind_answers([path], MANIFESTS)
    msg = str(err.value)
    assert "relabelled.csv, row 1, field 'unit_id'" in msg and "empty unit id" in msg
    assert len(msg.splitlines()) == 1


def test_answers_with_another_bundles_unit_ids_are_refused(tmp_path):
    path = _write(tmp_path / "other.csv", [["k-two", "Ann", "k0001", "u1", "A", ""]])
    with pytest.raises(InputError, match=r"other.csv, row 1, field 'unit_id'.*another bundle"):
        read_blind_answers([path], MANIFESTS)
