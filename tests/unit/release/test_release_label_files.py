"""``labeled_matching.csv``: a ragged row is a one-line error naming the file and the row; a
``{model}_correct`` value other than the release's 0 / 1 (``yes``) names file, row and field."""

from __future__ import annotations

import pytest

from implicit_bench.errors import InputError
from implicit_bench.release.importer import Release
from implicit_bench.release.prompt_labels import read_prompt_labels
from tests.helpers.release_fixtures import write_release, write_studies

MATCHING = "data/labeled_matching.csv"


@pytest.fixture
def release(tmp_path):
    return write_studies(write_release(tmp_path / "rel"))


def _lines(root):
    return (root / MATCHING).read_text(encoding="utf-8").splitlines(keepends=True)


def test_a_ragged_row_is_one_line_naming_file_and_row(release):
    lines = _lines(release)
    lines[2] = lines[2].rstrip("\n") + ",extra,cells\n"
    (release / MATCHING).write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_prompt_labels(Release(release))
    msg = str(err.value)
    assert "labeled_matching.csv, row 2:" in msg and "cells but the header has" in msg
    assert len(msg.splitlines()) == 1


def test_correct_yes_is_refused_naming_file_row_and_field(release):
    header, *rows = _lines(release)
    cols = header.rstrip("\n").split(",")
    k = cols.index("claude_sonnet_correct")
    cells = rows[0].rstrip("\n").split(",")
    assert cells[k] in ("0", "1")
    cells[k] = "yes"
    rows[0] = ",".join(cells) + "\n"
    (release / MATCHING).write_text(header + "".join(rows), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_prompt_labels(Release(release))
    msg = str(err.value)
    assert "labeled_matching.csv, row 1, field 'claude_sonnet_correct'" in msg and "'yes'" in msg


def test_the_release_values_are_read(release):
    assert read_prompt_labels(Release(release)) is not None
