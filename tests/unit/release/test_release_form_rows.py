"""A Google Form export row with more or fewer cells than its header (a truncated export) is a
one-line error naming the file and the row, not unanswered items."""

from __future__ import annotations

import pytest

from implicit_bench.errors import InputError
from implicit_bench.release.human_study import read_human_study
from implicit_bench.release.importer import Release
from tests.helpers.release_fixtures import HUMAN_FILES, write_release, write_studies

RESPONSES = [k for k in HUMAN_FILES if k.startswith("data/human_eval/Stereo")][0]


@pytest.fixture
def release(tmp_path):
    return write_studies(write_release(tmp_path / "rel"))


def _rewrite(root, old, new):
    path = root / RESPONSES
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(("old", "new"), [("Yes,4,3,1", "Yes,4"), ("Yes,4,3,1", "Yes,4,3,1,2")])
def test_a_ragged_form_row_names_file_and_row(release, old, new):
    _rewrite(release, old, new)
    with pytest.raises(InputError) as err:
        read_human_study(Release(release))
    msg = str(err.value)
    assert "Form responses 1.csv, row 2:" in msg and "header has 5 columns" in msg
    assert len(msg.splitlines()) == 1


def test_the_unmodified_export_reads(release):
    study = read_human_study(Release(release))
    assert study["counts"]["round1"]["submissions"] == 4
